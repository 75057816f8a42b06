"""The operator's endpoints are not caller input (issue 22 item 5): SearXNG and the model
endpoint are reached directly at their configured address with the guard shut, and no caller
reaches them (or any other loopback service, sift's own `/metrics` included) through it."""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from tests.support.fake_llm import FakeModel

QUESTION = "How many pallets does the Leeds warehouse hold?"
DOC = "Northwind Tea Company.\n\nThe warehouse in Leeds holds 4,200 pallets of tea.\n"


def _refused(sift, url: str) -> None:
    """Every caller-facing route refuses `url` at the guard (Firecrawl's with a 400: its SDK
    reads a 403 as "Website Not Supported")."""
    r = sift.post("/v2/scrape", {"url": url})
    assert r.status == 400 and r.json["error"].startswith("blocked"), r.body
    r = sift.fetch(url)
    assert r.status == 403 and r.json["error"].startswith("blocked"), r.body


def test_search_reaches_searxng_with_the_guard_shut(make_sift, searx, origin):
    """`allow_prefixes = []`: the search is answered (main: 403, SearXNG fetched through the
    guard), the results it returns still pass the guard (the origin is loopback: not
    scraped), and neither SearXNG nor sift's own /metrics is reachable by a caller."""
    sift = make_sift({"search": {"searxng_url": searx.url}, "guard": {"allow_prefixes": []}})
    r = sift.post("/v2/search", {"query": "clean text", "limit": 2})
    assert r.status == 200, r.body
    assert [d["url"] for d in r.json["data"]["web"]] == [
        origin.url("/article"),
        origin.url("/text"),
    ]
    before = origin.count("/article")
    r = sift.post(
        "/v2/search", {"query": "x", "limit": 1, "scrapeOptions": {"formats": ["markdown"]}}
    )
    assert r.status == 200, r.body
    assert r.json["data"]["web"][0]["warning"].startswith("not scraped: blocked")
    assert origin.count("/article") == before
    asked = len(searx.queries)
    _refused(sift, f"{searx.url}/search?q=x&format=json")
    assert len(searx.queries) == asked  # no caller's request reached it
    _refused(sift, f"{sift.url}/metrics")


def test_a_searxng_redirect_is_not_followed(make_sift, searx, origin):
    """SearXNG is reached at exactly its configured address: a redirect elsewhere (here to a
    page the guard would let a caller fetch) is an error, and the page is never fetched."""
    sift = make_sift({"search": {"searxng_url": searx.url}})
    searx.redirect = origin.url("/article")
    before = origin.count("/article")
    r = sift.post("/v2/search", {"query": "x"})
    assert r.status == 500 and "HTTP 302" in r.json["error"], r.body
    assert origin.count("/article") == before


@pytest.fixture
def model_apart() -> Iterator[FakeModel]:
    """The fake model on 127.0.0.2: outside the allow list that lets the origin (127.0.0.1) in."""
    model = FakeModel(host="127.0.0.2").start()
    yield model
    model.stop()


def test_the_model_endpoint_is_reached_with_the_guard_shut_to_it(make_sift, origin, model_apart):
    """The guard lets only the origin's address in; the model on another loopback address
    answers the question all the same (as on main: the model client never took the guard),
    and a caller cannot reach it."""
    sift = make_sift(
        {
            "guard": {"allow_prefixes": ["127.0.0.1/32"]},
            "digest": {"endpoint": model_apart.url, "model": "fake-1"},
        }
    )
    origin.set("/operator-report.txt", DOC, "text/plain")
    r = sift.fetch(origin.url("/operator-report.txt"), question=QUESTION)
    assert r.status == 200, r.body
    assert r.json["digest"]["model"] == "fake-1" and "4,200 pallets" in r.json["content"]
    assert len(model_apart.chats) == 1
    _refused(sift, f"{model_apart.url}/chat/completions")
    assert len(model_apart.chats) == 1
