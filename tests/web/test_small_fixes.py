"""Smaller things an operator and an agent met (issue 37): a blob is not hinted `browser`, the
reader URL says a cut range's note once, `/metrics` has no `_created` series, and a crawl
waits the site's robots.txt `Crawl-delay` between its pages."""

from __future__ import annotations

import itertools
import time

from tests.support.origin import Origin
from tests.support.pdfs import big_pdf
from tests.support.until import until


def test_an_octet_stream_body_is_not_hinted_browser(sift, origin):
    origin.set("/blob.bin", b"\x00\x01\x02 not a known signature" * 64, "application/octet-stream")
    r = sift.fetch(origin.url("/blob.bin"))
    assert r.status == 415 and "application/octet-stream" in r.json["error"], r.body
    assert "hint" not in r.json  # a browser would download it, not show it
    origin.set("/clip.mp4", b"\x00\x00\x00\x18ftypmp42", "video/mp4")
    assert sift.fetch(origin.url("/clip.mp4")).json["hint"] == "browser"


def test_the_reader_says_a_cut_range_once(sift, origin):
    origin.set("/cut.pdf", big_pdf(12), "application/pdf")
    r = sift.request("GET", "/r/" + origin.url("/cut.pdf") + "?max_chars=800&pages=2-5")
    text = r.body.decode()
    assert r.status == 200, text
    assert text.count("cut at the output cap") == 1, text
    assert text.count("[continue: ") == 1


def test_metrics_have_no_created_series(sift, origin):
    sift.fetch(origin.url("/article"))
    body = sift.request("GET", "/metrics", token=None).body.decode()
    assert "sift_fetch_total" in body
    assert "_created" not in body


def test_a_crawl_waits_the_sites_crawl_delay(sift):
    site = Origin(host="127.0.0.2").start()
    try:
        site.set("/robots.txt", "User-agent: *\nCrawl-delay: 1\n", "text/plain")
        arrived: list[float] = []

        async def page(h):
            arrived.append(time.monotonic())
            links = '<a href="/c/1">one</a> <a href="/c/2">two</a>'
            await h.send(f"<html><title>C</title><main><p>A page.</p>{links}</main></html>")

        for path in ("/c/", "/c/1", "/c/2"):
            site.route(path, page)
        r = sift.post("/v2/crawl", {"url": site.url("/c/"), "sitemap": "skip", "limit": 3})
        assert r.status == 200, r.body
        status = f"/v2/crawl/{r.json['id']}"
        until(lambda: sift.request("GET", status).json["status"] == "completed", "crawl done", 60)
        assert len(arrived) == 3
        gaps = [b - a for a, b in itertools.pairwise(arrived)]
        assert min(gaps) >= 0.9, gaps
    finally:
        site.stop()
