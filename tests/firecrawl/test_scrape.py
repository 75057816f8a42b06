"""The Firecrawl scrape API: the SDK's exact body, its strict types, and the real client."""

from __future__ import annotations

import pytest

SDK_BODY = {
    "formats": ["markdown"],
    "waitFor": 3000,
    "onlyMainContent": True,
    "mobile": False,
    "skipTlsVerification": True,
    "removeBase64Images": True,
    "fastMode": False,
    "blockAds": True,
    "maxAge": 172800000,
    "storeInCache": True,
    "origin": "python-sdk@4.55.0",
    "someFutureField": {"x": 1},
}


@pytest.mark.parametrize("route", ["/v2/scrape", "/v1/scrape"])
def test_scrape_with_the_sdk_body(sift, origin, route):
    r = sift.post(route, {"url": origin.url("/article"), **SDK_BODY})
    assert r.status == 200, r.body
    body = r.json
    assert body["success"] is True
    data = body["data"]
    assert data["markdown"] and "Source:" not in data["markdown"][:200]
    md = data["metadata"]
    assert md["sourceURL"] == origin.url("/article")
    assert md["url"] == origin.url("/article")
    assert md["statusCode"] == 200 and isinstance(md["statusCode"], int)
    assert md["contentType"] == "text/html"
    assert isinstance(md["title"], str) and md["title"]
    assert "numPages" not in md  # absent, not null
    assert all(v is not None for v in md.values())
    assert "`waitFor`: no browser" in data["warning"]  # rendering is off here: named


def test_scrape_formats(sift, origin):
    r = sift.post("/v2/scrape", {"url": origin.url("/article"), "formats": ["rawHtml", "html"]})
    assert r.status == 200
    assert "<html" in r.json["data"]["rawHtml"].lower()
    assert "markdown" not in r.json["data"]
    r = sift.post("/v2/scrape", {"url": origin.url("/article"), "formats": ["screenshot"]})
    assert r.status == 501 and "screenshot" in r.json["error"]  # rendering is off here
    assert r.json["success"] is False


def test_target_http_error_is_success_with_status(sift, origin):
    r = sift.post("/v2/scrape", {"url": origin.url("/status/404")})
    assert r.status == 200, r.body
    assert r.json["success"] is True
    assert r.json["data"]["metadata"]["statusCode"] == 404


def test_upstream_failure_is_500_never_502(sift, origin):
    r = sift.post("/v2/scrape", {"url": origin.refused_url()})
    assert r.status == 500
    assert r.json["success"] is False and "refused" in r.json["error"]
    assert set(r.json) == {"success", "error"}


def test_scrape_bad_input(sift):
    assert sift.post("/v2/scrape", {"formats": ["markdown"]}).status == 400
    assert sift.post("/v2/scrape", raw=b"nope").status == 400
    assert sift.post("/v2/scrape", {"url": "http://10.1.2.3/"}).status == 400
    assert sift.post("/v2/scrape", {"url": "http://x.test/"}, token="bad").status == 401


def test_real_firecrawl_client(sift, origin):
    from firecrawl import Firecrawl

    from tests.support.sift_server import FLEET_TOKEN

    client = Firecrawl(api_key=FLEET_TOKEN, api_url=sift.url)
    doc = client.scrape(origin.url("/article"), formats=["markdown"], wait_for=3000)
    assert doc.markdown and "##" in doc.markdown
    assert doc.metadata.title
    assert doc.metadata.source_url == origin.url("/article")
    assert doc.metadata.status_code == 200


def test_links_format(sift, origin):
    origin.set(
        "/links/page",
        '<html><body><a href="/abs">a</a> <a href="rel#frag">b</a> <a href="#top">c</a>'
        '<a href="https://example.org/x">d</a> <a href="mailto:x@y">e</a></body></html>',
        "text/html",
    )
    r = sift.post("/v2/scrape", {"url": origin.url("/links/page"), "formats": ["links"]})
    assert r.status == 200, r.body
    assert r.json["data"]["links"] == [
        origin.url("/abs"),
        origin.url("/links/rel"),
        "https://example.org/x",
    ]


def test_links_and_map_take_a_base_href_no_url_parser_reads(sift, origin):
    """`<base href="http://[::1">` (an unclosed IPv6 host) made `links`, `images` and map a
    500 `internal error`; as HTML does, links then resolve against the page's own URL."""
    origin.set(
        "/badbase/page",
        '<html><head><base href="http://[::1"></head><body><a href="rel">a</a>'
        '<img src="i.png"></body></html>',
        "text/html",
    )
    url = origin.url("/badbase/page")
    r = sift.post("/v2/scrape", {"url": url, "formats": ["links", "images"]})
    assert r.status == 200, r.body
    assert r.json["data"]["links"] == [origin.url("/badbase/rel")]
    assert r.json["data"]["images"] == [origin.url("/badbase/i.png")]
    r = sift.post("/v2/map", {"url": url})
    assert r.status == 200, r.body
    assert {"url": origin.url("/badbase/rel")} in r.json["links"]


ERROR_PAGES = {
    404: "<html><head><title>Acme</title></head><body><h1>Nothing here</h1><p>"
    + "The shelves of the Acme shop hold tools, lamps and garden chairs for every season. " * 6
    + "</p></body></html>",
    500: "<html><head><title>Acme</title></head><body><h1>Internal Server Error</h1><p>"
    + "The server met an unexpected condition and could not finish the request. " * 6
    + "</p></body></html>",
}


@pytest.mark.parametrize("code", [404, 500])
def test_upstream_error_page_has_the_notice_atop_its_markdown(sift, origin, code):
    """Agents that drop the metadata (Hermes does) read the markdown only: it must say
    that this is the site's error page, not the article."""
    from firecrawl import Firecrawl

    from tests.support.sift_server import FLEET_TOKEN

    origin.set(f"/fc-error/{code}", ERROR_PAGES[code], status=code)
    r = sift.post("/v2/scrape", {"url": origin.url(f"/fc-error/{code}")})
    assert r.status == 200, r.body
    data = r.json["data"]
    assert r.json["success"] is True and data["metadata"]["statusCode"] == code
    first = data["markdown"].splitlines()[0]
    assert first.startswith("[sift: this is not the page's content") and f"HTTP {code}" in first
    assert f"HTTP {code}" in data["warning"]
    assert "Acme" in data["markdown"] or "server" in data["markdown"]  # the page's own text too

    doc = Firecrawl(api_key=FLEET_TOKEN, api_url=sift.url).scrape(origin.url(f"/fc-error/{code}"))
    assert doc.metadata.status_code == code
    assert doc.markdown.startswith("[sift: this is not the page's content")


def test_unknown_format_names_the_formats_sift_has(sift, origin):
    r = sift.post("/v2/scrape", {"url": origin.url("/article"), "formats": ["branding"]})
    assert r.status == 400
    error = r.json["error"]
    assert "'branding'" in error and "json" in error and "screenshot" in error
    assert "LLM" not in error  # sift has the `json` format: a model's extraction
