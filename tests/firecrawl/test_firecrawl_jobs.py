"""Firecrawl's batch scrape, crawl and map through the real firecrawl-py client, against a real
sift and the loopback origin's small site (robots.txt, a gzipped sitemap index, linked pages)."""

from __future__ import annotations

import threading
import urllib.parse
from collections.abc import Callable
from typing import Any

import pytest
from firecrawl import Firecrawl
from firecrawl.v2.utils.error_handler import FirecrawlError

from sift.actors import batch as batch_actor
from tests.support.origin import Origin, install_site
from tests.support.sift_server import FLEET_TOKEN, RESTRICTED_TOKEN, SiftServer
from tests.support.until import until


@pytest.fixture
def site(origin: Origin) -> Origin:
    install_site(origin)
    origin.reset_counts()
    return origin


def client(sift: SiftServer, token: str = FLEET_TOKEN) -> Firecrawl:
    return Firecrawl(api_key=token, api_url=sift.url)


def paths(origin: Origin, urls: list[str]) -> list[str]:
    assert all(u.startswith(origin.url("/")) for u in urls)
    return [urllib.parse.urlsplit(u).path for u in urls]


def _until_done(fc: Firecrawl, job: str) -> None:
    until(
        lambda: fc.get_batch_scrape_status(job).status != "scraping",
        "the batch scrape to finish",
        timeout=60,
        every=0.5,
    )


def test_batch_scrape_waits_for_the_documents(sift, site):
    urls = [site.url("/site/a"), site.url("/site/b"), site.url("/status/404")]
    job = client(sift).batch_scrape(
        urls, formats=["markdown", "links"], poll_interval=1, wait_timeout=60
    )
    assert job.status == "completed"
    assert job.completed == 3 and job.total == 3
    assert job.credits_used is None  # not metered: absent, not an invented number
    docs = {d.metadata.source_url: d for d in job.data}
    assert "Page A" in docs[site.url("/site/a")].markdown
    assert site.url("/site/a/deep") in docs[site.url("/site/a")].links
    assert docs[site.url("/status/404")].metadata.status_code == 404  # as /v2/scrape answers


def test_batch_status_pages_with_next(sift, site, monkeypatch):
    from sift.web.firecrawl import jobs as firecrawl_jobs

    monkeypatch.setattr(firecrawl_jobs, "PAGE_DOCS", 2)
    fc = client(sift)
    urls = [site.url(p) for p in ("/site/a", "/site/b", "/site/docs/1", "/site/docs/2", "/site/")]
    job = fc.batch_scrape(urls, poll_interval=1, wait_timeout=60)
    assert [d.metadata.source_url for d in job.data] == urls  # the SDK followed `next`
    first = fc.start_batch_scrape(urls)
    _until_done(fc, first.id)
    again = fc.start_batch_scrape(urls)
    assert again.id != first.id  # a new job each time, as in Firecrawl (no /v1/batch reuse)
    _until_done(fc, again.id)
    raw = sift.request("GET", f"/v2/batch/scrape/{again.id}")
    body = raw.json
    assert len(body["data"]) == 2 and "?skip=" in body["next"]
    assert "creditsUsed" not in body and isinstance(body["completed"], int)


def test_batch_scrape_refuses_over_its_cap_and_says_so(make_sift, site):
    sift = make_sift({"batch": {"firecrawl_urls_per_job": 3}})
    with pytest.raises(FirecrawlError) as err:
        client(sift).start_batch_scrape([site.url(f"/site/{i}") for i in range(4)])
    assert "at most 3" in str(err.value) and "firecrawl_urls_per_job" in str(err.value)
    r = sift.post("/v2/crawl", {"url": site.url("/site/"), "limit": 10})
    assert r.status == 400 and "at most 3" in r.json["error"] and r.json["success"] is False


def test_invalid_urls_are_refused_or_listed(sift, site):
    """As Firecrawl: v2 drops them and lists them by default, v1 refuses by default."""
    res = client(sift).start_batch_scrape([site.url("/site/a"), "http://10.1.2.3/"])
    assert res.invalid_urls == ["http://10.1.2.3/"]
    for route, body in (
        ("/v2/batch/scrape", {"ignoreInvalidURLs": False}),
        ("/v1/batch/scrape", {}),
    ):
        r = sift.post(route, {"urls": [site.url("/site/b"), "http://10.1.2.3/"], **body})
        assert r.status == 400 and r.json["error"].startswith("target 1: blocked"), route
    r = sift.post("/v2/batch/scrape", {"urls": ["http://10.1.2.3/"]})
    assert r.status == 400 and "none of `urls`" in r.json["error"]


def test_a_second_job_waits_for_the_callers_first(sift, site):
    """The same per-caller cap as /v1/batch: one live job each; a second Firecrawl job waits
    its turn (`scraping`, nothing done) instead of a 429, and runs once the first ends."""
    site.set_slow("/site/slowpage", 30, "<html><title>slow</title></html>")
    fc = client(sift)
    first = fc.start_batch_scrape([site.url("/site/slowpage")])
    r = sift.post("/v2/crawl", {"url": site.url("/site/"), "limit": 2})
    assert r.status == 200, r.json
    waiting = fc.get_crawl_status(r.json["id"])
    assert waiting.status == "scraping" and waiting.completed == 0 and waiting.data == []
    assert fc.cancel_batch_scrape(first.id) is True
    status = fc.get_batch_scrape_status(first.id)
    assert status.status == "cancelled"
    until(lambda: fc.get_crawl_status(r.json["id"]).status == "completed", "the crawl", 60)


def test_errors_lists_failed_urls(sift, site):
    fc = client(sift)
    job = fc.batch_scrape(
        [site.url("/site/a"), site.refused_url("/x")], poll_interval=1, wait_timeout=60
    )
    assert job.status == "completed" and len(job.data) == 1
    started = fc.start_batch_scrape([site.url("/site/a"), site.refused_url("/x")])
    _until_done(fc, started.id)
    errors = fc.get_batch_scrape_errors(started.id)
    assert [e.url for e in errors.errors] == [site.refused_url("/x")]
    assert errors.errors[0].code == "502" and errors.robots_blocked == []


def test_jobs_are_their_owners(sift, site):
    job = client(sift).start_batch_scrape([site.url("/site/a")])
    with pytest.raises(FirecrawlError):
        client(sift, RESTRICTED_TOKEN).get_batch_scrape_status(job.id)
    assert sift.request("GET", f"/v2/crawl/{job.id}").status == 404  # not a crawl


def test_map_reads_robots_sitemaps_and_the_page(sift, site):
    fc = client(sift)
    links = [link.url for link in fc.map(site.url("/site/")).links]
    got = paths(site, links)
    assert got[0] == "/site/"
    for p in ("/site/sitemap-only", "/site/docs/1", "/site/docs/2", "/site/a", "/site/b"):
        assert p in got  # a plain urlset, a gzipped one (through a gzipped index), page links
    assert "http://localhost/elsewhere" not in links  # same host only
    assert len(got) == len(set(got))
    assert site.count("/site/sitemap_index.xml.gz") == 1 and site.count("/robots.txt") == 1

    assert paths(site, [x.url for x in fc.map(site.url("/site/"), search="docs").links]) == [
        "/site/docs/1",
        "/site/docs/2",
    ]
    assert len(fc.map(site.url("/site/"), limit=2).links) == 2
    only = paths(site, [x.url for x in fc.map(site.url("/site/"), sitemap="only").links])
    assert "/site/a" not in only and "/site/sitemap-only" in only


def test_map_v1_shape_and_a_blocked_url(sift, site):
    r = sift.post("/v1/map", {"url": site.url("/site/"), "search": "docs"})
    assert r.status == 200 and r.json["links"] == [
        site.url("/site/docs/1"),
        site.url("/site/docs/2"),
    ]
    r = sift.post("/v2/map", {"url": "http://10.0.0.1/"})
    assert r.status == 400 and r.json["success"] is False  # the SDK reads 403 as "not supported"


def test_crawl_follows_links_within_its_bounds(sift, site):
    fc = client(sift)
    job = fc.crawl(site.url("/site/"), limit=50, poll_interval=1, timeout=120)
    assert job.status == "completed"
    got = sorted(paths(site, [d.metadata.source_url for d in job.data]))
    assert got == [
        "/site/",
        "/site/a",
        "/site/a/deep",
        "/site/a/deeper",
        "/site/b",
        "/site/docs/1",
        "/site/docs/2",
        "/site/sitemap-only",
    ]
    assert site.count("/site/private/x") == 0  # robots.txt honoured: never fetched
    assert job.total == 8 and job.completed == 8
    job = fc.crawl(site.url("/site/"), sitemap="skip", poll_interval=1, timeout=120)
    assert "/site/sitemap-only" not in paths(site, [d.metadata.source_url for d in job.data])
    assert len(job.data) == 7


def test_crawl_limit_depth_and_patterns(sift, site):
    fc = client(sift)
    job = fc.crawl(site.url("/site/"), limit=3, poll_interval=1, timeout=120)
    assert len(job.data) == 3 and job.total == 3
    job = fc.crawl(site.url("/site/"), max_discovery_depth=1, poll_interval=1, timeout=120)
    got = sorted(paths(site, [d.metadata.source_url for d in job.data]))
    assert got == [
        "/site/",
        "/site/a",
        "/site/b",
        "/site/docs/1",
        "/site/docs/2",
        "/site/sitemap-only",
    ]  # the sitemap's pages are at depth 0, as Firecrawl's
    job = fc.crawl(
        site.url("/site/"), max_discovery_depth=1, sitemap="skip", poll_interval=1, timeout=120
    )
    got = sorted(paths(site, [d.metadata.source_url for d in job.data]))
    assert got == ["/site/", "/site/a", "/site/b", "/site/docs/1"]
    job = fc.crawl(
        site.url("/site/"),
        include_paths=["^/site/a"],
        exclude_paths=["deeper$"],
        poll_interval=1,
        timeout=120,
    )
    got = sorted(paths(site, [d.metadata.source_url for d in job.data]))
    assert got == ["/site/", "/site/a", "/site/a/deep"]


def test_crawl_stays_below_its_start_path(sift, site):
    """From `/site/docs/` a crawl never fetches `/site/` or `/site/a`, neither through the
    page's links nor through the sitemap (which lists `/site/` and `/site/sitemap-only`);
    `crawlEntireDomain` lets it go there."""
    site.set(
        "/site/docs/",
        "<html><head><title>Docs</title></head><body><main><h1>Docs</h1>"
        '<p>The docs.</p><a href="/site/docs/1">one</a> <a href="/site/">home</a> '
        '<a href="/site/a">a</a> <a href="/site/docsearch">search</a></main></body></html>',
    )
    fc = client(sift)
    job = fc.crawl(site.url("/site/docs/"), limit=50, poll_interval=1, timeout=120)
    assert job.status == "completed"
    got = sorted(paths(site, [d.metadata.source_url for d in job.data]))
    assert got == ["/site/docs/", "/site/docs/1", "/site/docs/2"]
    for outside in ("/site/", "/site/a", "/site/sitemap-only", "/site/docsearch"):
        assert site.count(outside) == 0, outside
    job = fc.crawl(
        site.url("/site/docs/"),
        crawl_entire_domain=True,
        max_discovery_depth=1,
        poll_interval=1,
        timeout=120,
    )
    got = paths(site, [d.metadata.source_url for d in job.data])
    assert {"/site/", "/site/a", "/site/sitemap-only"} <= set(got)


def test_crawl_of_a_disallowed_start_says_blocked_once(sift, site):
    r = sift.post("/v2/crawl", {"url": site.url("/site/private/x")})
    assert r.status == 400
    assert r.json["error"] == "blocked: the site's robots.txt disallows this URL for sift"


def test_crawl_errors_name_the_robots_blocked(sift, site):
    fc = client(sift)
    job = fc.crawl(site.url("/site/"), max_discovery_depth=1, poll_interval=1, timeout=120)
    assert job.status == "completed" and job.id
    errors = fc.get_crawl_errors(job.id)
    assert errors.robots_blocked == [site.url("/site/private/x")]
    assert errors.errors == []


def test_crawl_refuses_what_it_cannot_do(sift, site):
    for field, value in (("ignoreRobotsTxt", True),):
        r = sift.post("/v2/crawl", {"url": site.url("/site/"), field: value})
        assert r.status == 400 and f"`{field}`" in r.json["error"], field
    r = sift.post("/v2/crawl", {"url": site.url("/site/"), "includePaths": ["(unclosed"]})
    assert r.status == 400 and "includePaths" in r.json["error"]
    r = sift.post("/v2/crawl", {"url": site.url("/site/private/x")})
    assert r.status == 400 and "robots.txt" in r.json["error"]
    for route, body in (  # what /v2/scrape refuses, a job refuses as it does
        ("/v2/crawl", {"scrapeOptions": {"formats": ["branding"]}}),
        ("/v2/batch/scrape", {"formats": ["markdown", "branding"]}),
    ):
        r = sift.post(route, {"url": site.url("/site/"), "urls": [site.url("/site/")], **body})
        assert r.status == 400 and "'branding' is not supported" in r.json["error"]


def test_crawl_cancel(sift, site):
    site.set("/site/hub/", "".join(f'<a href="/site/hub/slow{i}">{i}</a>' for i in range(5)))
    for i in range(5):
        site.set_slow(f"/site/hub/slow{i}", 30, "<html><title>slow</title></html>")
    ran = threading.Event()
    listener: Callable[[str, str, Any], None] = lambda event, _job, _d: ran.set()  # noqa: E731
    batch_actor.LISTENERS.append(listener)
    try:
        fc = client(sift)
        started = fc.start_crawl(site.url("/site/hub/"))
        assert ran.wait(30)  # the hub is scraped; its links are queued
        assert fc.cancel_crawl(started.id) is True
        status = fc.get_crawl_status(started.id)
        assert status.status == "cancelled"
        assert fc.cancel_crawl(started.id) is False  # ended: a 409 (DESIGN §2)
        again = sift.request("DELETE", f"/v2/crawl/{started.id}")
        assert again.status == 409 and again.json["error"] == "Crawl is already cancelled"
        assert fc.get_crawl_status(started.id).status == "cancelled"
    finally:
        batch_actor.LISTENERS.remove(listener)


@pytest.mark.filterwarnings("ignore::DeprecationWarning")  # the v1 SDK calls pydantic's .dict()
def test_the_v1_client(sift, site):
    from firecrawl.v1 import V1FirecrawlApp

    app = V1FirecrawlApp(api_key=FLEET_TOKEN, api_url=sift.url)
    job = app.batch_scrape_urls([site.url("/site/a"), site.url("/site/b")], poll_interval=1)
    assert job.status == "completed" and job.creditsUsed == 0 and len(job.data) == 2
    crawl = app.crawl_url(site.url("/site/"), limit=3, poll_interval=1)
    assert crawl.status == "completed" and len(crawl.data) == 3
    links = app.map_url(site.url("/site/"), search="docs").links
    assert links == [site.url("/site/docs/1"), site.url("/site/docs/2")]


def test_mcp_map_and_crawl_tools(sift, site):
    from tests.support.mcp_client import run, stdio_client, text

    async def scenario(mcp: Any) -> None:
        r = await mcp.call_tool("map", {"url": site.url("/site/"), "search": "docs"})
        assert not r.is_error, text(r)
        assert text(r) == f"2 URLs\n{site.url('/site/docs/1')}\n{site.url('/site/docs/2')}"
        r = await mcp.call_tool("crawl", {"url": site.url("/site/a"), "max_depth": 1})
        assert not r.is_error, text(r)
        state = r.structured_content  # below /site/a only, as any crawl
        assert state["status"] == "completed" and state["total"] == 2
        assert {p["title"] for p in state["pages"]} == {"Page A", "Deep"}
        r = await mcp.call_tool("crawl_status", {"job_id": state["id"]})
        assert r.structured_content["pages"] == state["pages"]
        r = await mcp.call_tool("crawl", {"url": site.url("/site/private/x")})
        assert r.is_error and "robots.txt" in text(r)

    run(stdio_client(sift.url), scenario)
