"""sift's refusals as the real firecrawl-py clients (sync and async) read them: each one the
exception the SDK maps its status (and `code`) to, with sift's message — a guard refusal is a
bad request, never "Website Not Supported"."""

from __future__ import annotations

import asyncio
import socket
import threading
from typing import Any

import pytest
from firecrawl import AsyncFirecrawl, Firecrawl
from firecrawl.v2.utils.error_handler import (
    BadRequestError,
    DNSResolutionError,
    FirecrawlError,
    InternalServerError,
    RateLimitError,
    TLSError,
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


def not_tls() -> int:
    """A port that answers plain text to a TLS handshake, at once, every time: a TLS error."""
    server = socket.create_server(("127.0.0.1", 0))

    def serve() -> None:
        while True:
            conn, _ = server.accept()
            with conn:
                conn.sendall(b"HTTP/1.1 400 Bad Request\r\nContent-Length: 0\r\n\r\n")

    threading.Thread(target=serve, daemon=True).start()
    return int(server.getsockname()[1])


def test_more_refusal_classes_through_the_sdk(make_sift, origin):
    """A TLS failure (`TLSError`), a busy caller (`RateLimitError`), a render with no browser
    (a 501 the SDK has no class for: its status kept), sync and async alike."""
    sift = make_sift({"gates": {"per_caller": 1, "wait": "0.3s"}})
    fc = Firecrawl(api_key=FLEET_TOKEN, api_url=sift.url)
    tls = f"https://127.0.0.1:{not_tls()}/"
    with pytest.raises(TLSError) as err:
        fc.scrape(tls)
    assert "TLS" in str(err.value)
    with pytest.raises(TLSError):
        asyncio.run(AsyncFirecrawl(api_key=FLEET_TOKEN, api_url=sift.url).scrape(tls))
    with pytest.raises(FirecrawlError) as no_browser:
        fc.scrape(origin.url("/text"), formats=["screenshot"])
    assert no_browser.value.status_code == 501 and "browser" in str(no_browser.value)
    held = threading.Thread(target=lambda: fc.scrape(origin.url("/hold/fcerr")), daemon=True)
    held.start()
    assert origin.wait_arrived("fcerr")
    try:
        with pytest.raises(RateLimitError) as busy:
            fc.scrape(origin.url("/text?other"))
        assert "busy" in str(busy.value)

        async def go() -> None:
            afc = AsyncFirecrawl(api_key=FLEET_TOKEN, api_url=sift.url)
            with pytest.raises(RateLimitError):
                await afc.scrape(origin.url("/text?again"))

        asyncio.run(go())
    finally:
        origin.release("fcerr")
        held.join(30)
