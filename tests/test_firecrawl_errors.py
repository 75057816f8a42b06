"""sift's refusals as the real firecrawl-py clients (sync and async) read them: each one the
exception the SDK maps its status (and `code`) to, with sift's message — a guard refusal is a
bad request, never "Website Not Supported"."""

from __future__ import annotations

import asyncio
from typing import Any

import pytest
from firecrawl import AsyncFirecrawl, Firecrawl
from firecrawl.v2.utils.error_handler import (
    BadRequestError,
    DNSResolutionError,
    FirecrawlError,
    InternalServerError,
    UnauthorizedError,
    WebsiteNotSupportedError,
)

from tests.support.sift_server import FLEET_TOKEN, SiftServer

NAMES: dict[str, list[str]] = {"nowhere.test": []}  # a name that does not resolve


def cases(origin: Any) -> list[tuple[str, dict[str, Any], type[Exception], str]]:
    """(what, scrape call, the SDK's exception, a part of its message)."""
    return [
        ("guard", {"url": "http://10.1.2.3/"}, BadRequestError, "blocked: private address"),
        ("name", {"url": "http://nowhere.test/"}, DNSResolutionError, "could not resolve"),
        ("upstream", {"url": origin.refused_url()}, InternalServerError, "refused"),
        (
            "format",
            {"url": origin.url("/text"), "formats": ["branding"]},
            BadRequestError,
            "branding",
        ),
    ]


@pytest.fixture
def sift(make_sift: Any) -> SiftServer:
    return make_sift(resolver=lambda host, port: NAMES.get(host, ["127.0.0.1"]))


def test_refusals_read_as_the_sync_client_maps_them(sift, origin):
    fc = Firecrawl(api_key=FLEET_TOKEN, api_url=sift.url)
    for what, call, exc, part in cases(origin):
        with pytest.raises(exc) as err:
            fc.scrape(**call)
        assert part in str(err.value), (what, err.value)
        assert not isinstance(err.value, WebsiteNotSupportedError), what
        assert "Website Not Supported" not in str(err.value), what
    with pytest.raises(UnauthorizedError):
        Firecrawl(api_key="not-a-token", api_url=sift.url).scrape(origin.url("/text"))
    with pytest.raises(FirecrawlError) as missing:
        fc.get_crawl_status("no-such-job")
    assert missing.value.status_code == 404
    with pytest.raises(BadRequestError) as err:
        fc.start_crawl("http://10.1.2.3/")
    assert "blocked" in str(err.value)


def test_refusals_read_as_the_async_client_maps_them(sift, origin):
    async def go() -> None:
        fc = AsyncFirecrawl(api_key=FLEET_TOKEN, api_url=sift.url)
        for what, call, exc, part in cases(origin):
            with pytest.raises(exc) as err:
                await fc.scrape(**call)
            assert part in str(err.value), (what, err.value)
            assert "Website Not Supported" not in str(err.value), what
        with pytest.raises(BadRequestError) as err:
            await fc.start_batch_scrape(["http://10.1.2.3/"])
        assert "blocked" in str(err.value)
        with pytest.raises(UnauthorizedError):
            await AsyncFirecrawl(api_key="bad", api_url=sift.url).scrape(origin.url("/text"))

    asyncio.run(go())
