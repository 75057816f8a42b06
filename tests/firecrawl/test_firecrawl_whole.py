"""Firecrawl as its users call it, through the real SDK (sync and async clients) against a
real sift on loopback: jobs beyond the caps wait their turn and start in order, the caller's
active crawls, the cancel of an ended job, a crawl's options (external links through the
guard, query parameters, delay), every scrape format inside jobs (a fake model for `json`),
and URLs written without a scheme."""

from __future__ import annotations

import asyncio
import json
import os
from collections.abc import Callable, Iterator
from typing import Any

import pytest
from firecrawl import AsyncFirecrawl, Firecrawl
from firecrawl.v2.types import JsonFormat
from firecrawl.v2.utils.error_handler import FirecrawlError

from sift.actors import batch as batch_actor
from tests.support.origin import Origin, install_site
from tests.support.sift_server import FLEET_TOKEN, SiftServer
from tests.support.tls_origin import TlsOrigin
from tests.support.until import until

BROWSER = "/usr/bin/chromium"
SCHEMA = {
    "type": "object",
    "properties": {"title": {"type": "string"}},
    "required": ["title"],
}


@pytest.fixture
def site(origin: Origin) -> Origin:
    install_site(origin)
    origin.reset_counts()
    return origin


@pytest.fixture
def ended() -> Iterator[list[str]]:
    """The ids of the jobs that end, in the order they end."""
    seen: list[str] = []
    listener: Callable[[str, str, Any], None] = lambda event, job, _d: (  # noqa: E731
        seen.append(job) if event == "job" else None
    )
    batch_actor.LISTENERS.append(listener)
    yield seen
    batch_actor.LISTENERS.remove(listener)


@pytest.fixture
def tls(tmp_path) -> Iterator[TlsOrigin]:
    server = TlsOrigin(tmp_path)
    yield server
    server.stop()


def client(sift: SiftServer) -> Firecrawl:
    return Firecrawl(api_key=FLEET_TOKEN, api_url=sift.url)


# --- 1. jobs like Firecrawl's -----------------------------------------------------------


def test_jobs_beyond_the_caps_wait_their_turn_and_start_in_order(make_sift, site, ended):
    """One live job a caller (the /v1/batch cap): a crawl and a batch scrape started after a
    slow one wait (`scraping`, nothing done, nothing fetched), a third waiting one is over
    `firecrawl_waiting_per_caller` (429 naming it), /v1/batch keeps its 429; once the first
    ends the others run in the order they came."""
    sift = make_sift({"batch": {"firecrawl_waiting_per_caller": 2}})
    fc = client(sift)
    first = fc.start_batch_scrape([site.url("/hold/first")])
    assert site.wait_arrived("first", 30)
    crawl = fc.start_crawl(site.url("/site/a"), limit=2, sitemap="skip", delay=0)
    second = fc.start_batch_scrape([site.url("/site/b")])
    for status in (fc.get_crawl_status(crawl.id), fc.get_batch_scrape_status(second.id)):
        assert status.status == "scraping" and status.completed == 0 and status.data == []
    r = sift.post("/v2/batch/scrape", {"urls": [site.url("/site/docs/1")]})
    assert r.status == 429 and "firecrawl_waiting_per_caller" in r.json["error"]
    r = sift.post("/v1/batch", {"targets": [{"url": site.url("/site/docs/1")}]})
    assert r.status == 429 and "already have a batch job" in r.json["error"]
    active = fc.get_active_crawls().crawls
    assert [(c.id, c.url, c.team_id) for c in active] == [(crawl.id, site.url("/site/a"), "agent")]
    assert active[0].options["limit"] == 2 and active[0].options["sitemap"] == "skip"
    assert site.count("/site/a") == 0 and site.count("/site/b") == 0  # nothing of them ran
    assert sift.request("GET", f"/v1/batch/{second.id}").json["status"] == "queued"

    assert fc.cancel_batch_scrape(first.id) is True
    site.release("first")  # the page in flight is stored; no other of its targets starts
    until(lambda: fc.get_batch_scrape_status(second.id).status == "completed", "the last", 60)
    done = fc.get_crawl_status(crawl.id)
    assert done.status == "completed" and done.total == 2
    assert [d.metadata.source_url for d in done.data] == [
        site.url("/site/a"),
        site.url("/site/a/deep"),
    ]
    assert ended == [first.id, crawl.id, second.id]
    assert fc.get_active_crawls().crawls == []


def test_an_ended_jobs_cancel_is_a_409_and_keeps_its_data(sift, site):
    """A cancel of a batch scrape that already ended is a 409 "… already completed", as
    Firecrawl v2 answers (DESIGN §2; the SDK raises); sift undoes nothing: the job keeps its
    status and its documents."""
    fc = client(sift)
    job = fc.start_batch_scrape([site.url("/site/a")])
    until(lambda: fc.get_batch_scrape_status(job.id).status == "completed", "the job", 60)
    r = sift.request("DELETE", f"/v2/batch/scrape/{job.id}")
    assert r.status == 409
    assert r.json == {"success": False, "error": "Batch scrape is already completed"}
    with pytest.raises(FirecrawlError, match="already completed"):
        fc.cancel_batch_scrape(job.id)
    again = fc.get_batch_scrape_status(job.id)
    assert again.status == "completed" and len(again.data) == 1
    assert sift.request("DELETE", f"/v1/batch/{job.id}").status == 409  # P6's rule as it was


def test_the_async_client_waits_lists_and_cancels(make_sift, site):
    sift = make_sift()

    async def scenario() -> None:
        fc = AsyncFirecrawl(api_key=FLEET_TOKEN, api_url=sift.url)
        one = await fc.start_crawl(site.url("/hold/one"), sitemap="skip")
        two = await fc.start_crawl(site.url("/site/b"), limit=1, sitemap="skip")
        ids = [c.id for c in (await fc.v2.get_active_crawls()).crawls]
        assert ids == [one.id, two.id]  # running and waiting, oldest first
        waiting = await fc.get_crawl_status(two.id)
        assert waiting.status == "scraping" and waiting.completed == 0
        assert await fc.cancel_crawl(one.id) is True
        site.release("one")
        for _ in range(600):
            if (await fc.get_crawl_status(two.id)).status == "completed":
                break
            await asyncio.sleep(0.1)
        done = await fc.get_crawl_status(two.id)
        assert done.status == "completed" and done.data[0].metadata.title == "Page B"
        assert await fc.cancel_crawl(two.id) is False  # completed: 409, as Firecrawl v2
        assert (await fc.v2.get_active_crawls()).crawls == []

    asyncio.run(scenario())


def test_a_crawl_follows_external_links_through_the_guard(sift, site, tmp_path):
    """`allowExternalLinks`: another site's page is crawled (a second loopback origin); a link
    to a private address is refused by the guard (named in the errors) and never connected
    to. `ignoreQueryParameters`: one page per path. `delay` is kept with the crawl's bounds."""
    other = Origin(host="127.0.0.2").start()
    try:
        other.set("/ext", "<html><title>Elsewhere</title><p>Another site.</p></html>")
        site.set(
            "/site/ext/",
            "<html><title>Hub</title>"
            f'<a href="{other.url("/ext")}">out</a> <a href="http://10.0.0.1/x">private</a> '
            '<a href="/site/ext/q?x=1">q1</a> <a href="/site/ext/q?x=2">q2</a></html>',
        )
        site.set("/site/ext/q", "<html><title>Q</title><p>A page with a query.</p></html>")
        fc = client(sift)
        home = fc.crawl(site.url("/site/ext/"), sitemap="skip", poll_interval=1, timeout=60)
        assert len(home.data) == 3 and other.count("/ext") == 0  # its own site only
        job = fc.crawl(
            site.url("/site/ext/"),
            sitemap="skip",
            allow_external_links=True,
            ignore_query_parameters=True,
            delay=1,
            poll_interval=1,
            timeout=60,
        )
        got = {d.metadata.source_url for d in job.data}
        assert got == {site.url("/site/ext/"), other.url("/ext"), site.url("/site/ext/q?x=1")}
        assert other.count("/ext") == 1
        errors = fc.get_crawl_errors(job.id).errors
        assert [(e.url, e.code) for e in errors] == [("http://10.0.0.1/x", "403")]
        assert "blocked" in errors[0].error
        r = sift.post("/v2/crawl", {"url": site.url("/site/"), "delay": -1})
        assert r.status == 400 and "`delay`" in r.json["error"]
    finally:
        other.stop()


# --- 2. every scrape format inside jobs -------------------------------------------------


def test_a_batch_scrape_and_a_crawl_take_every_scrape_format(make_sift, fake_model, site):
    sift = make_sift({"digest": {"endpoint": fake_model.url}})
    fake_model.replies = [json.dumps({"title": "Page A"})] * 4
    fc = client(sift)
    formats: list[Any] = ["markdown", "summary", "images", "links"]
    formats.append(JsonFormat(type="json", prompt="the title", schema=SCHEMA))
    job = fc.batch_scrape([site.url("/site/a")], formats=formats, poll_interval=1, wait_timeout=60)
    assert job.status == "completed", job
    doc = job.data[0]
    assert doc.json == {"title": "Page A"}
    assert doc.summary and isinstance(doc.images, list)
    assert site.url("/site/a/deep") in doc.links and "Page A" in doc.markdown
    one = sift.post("/v2/scrape", {"url": site.url("/site/a"), "formats": ["summary", "links"]})
    assert doc.summary == one.json["data"]["summary"]  # read as /v2/scrape's
    assert doc.links == one.json["data"]["links"]
    crawl = fc.crawl(
        site.url("/site/a"),
        limit=2,
        sitemap="skip",
        scrape_options={"formats": [{"type": "json", "schema": SCHEMA}]},
        poll_interval=1,
        timeout=60,
    )
    assert [d.json for d in crawl.data] == [{"title": "Page A"}] * 2  # each page its own ask
    assert all(d.markdown is None for d in crawl.data)  # only what was asked


def test_json_in_a_job_without_a_model_is_a_clear_400(sift, site):
    for route, body in (
        ("/v2/batch/scrape", {"urls": [site.url("/site/a")], "formats": ["json"]}),
        ("/v2/crawl", {"url": site.url("/site/"), "scrapeOptions": {"formats": ["json"]}}),
    ):
        r = sift.post(route, body)
        assert r.status == 400 and "needs a model" in r.json["error"], route


@pytest.mark.skipif(
    not os.access(BROWSER, os.X_OK), reason="no chromium (apt-get install chromium)"
)
def test_a_screenshot_inside_a_job(make_sift, site):
    sift = make_sift({"render": {"enabled": True, "browser": BROWSER, "deadline": "15s"}})
    job = client(sift).batch_scrape(
        [site.url("/site/a")], formats=["screenshot"], poll_interval=1, wait_timeout=90
    )
    assert job.status == "completed"
    shot = job.data[0].screenshot
    assert shot and shot.startswith("data:image/png;base64,"), shot and shot[:40]


# --- 3. URLs as users write them --------------------------------------------------------


def test_a_url_without_a_scheme_is_fetched_over_https(sift, tls, site):
    """`127.0.0.1:PORT/x` is `https://127.0.0.1:PORT/x` on every Firecrawl route: the https
    origin's untrusted certificate is the error (fast and clear: it went out as https); a
    document's `sourceURL` is the URL as written."""
    bare = f"{tls.hostport}/page"
    r = sift.post("/v2/scrape", {"url": bare})
    assert r.status == 500 and "TLS" in r.json["error"], r.json
    with pytest.raises(FirecrawlError, match="TLS"):
        client(sift).scrape(bare)
    fc = client(sift)
    with pytest.raises(FirecrawlError, match="TLS"):
        fc.map(bare)
    crawl = fc.crawl(bare, sitemap="skip", poll_interval=1, timeout=60)
    assert [e.url for e in fc.get_crawl_errors(crawl.id).errors] == [f"https://{bare}"]
    # the SDK's batch methods refuse such a URL before sending it; other clients send it
    started = sift.post("/v2/batch/scrape", {"urls": [bare]}).json
    until(lambda: fc.get_batch_scrape_status(started["id"]).status != "scraping", "it", 60)
    errors = fc.get_batch_scrape_errors(started["id"]).errors
    assert [e.url for e in errors] == [f"https://{bare}"] and "TLS" in errors[0].error
    # http, written out, is left as it is; the answer names the URL as asked
    plain = site.url("/site/a")
    doc = client(sift).scrape(plain)
    assert doc.metadata.source_url == plain


def test_the_async_client_sends_urls_without_a_scheme_over_https(sift, tls):
    async def scenario() -> None:
        fc = AsyncFirecrawl(api_key=FLEET_TOKEN, api_url=sift.url)
        with pytest.raises(FirecrawlError, match="TLS"):
            await fc.scrape(f"{tls.hostport}/a")
        with pytest.raises(FirecrawlError, match="TLS"):
            await fc.map(f"{tls.hostport}/b")
        job = await fc.crawl(url=f"{tls.hostport}/c", sitemap="skip", poll_interval=1, timeout=60)
        assert job.status == "completed" and job.data == []
        errors = await fc.get_crawl_errors(job.id)
        assert [e.url for e in errors.errors] == [f"https://{tls.hostport}/c"]

    asyncio.run(scenario())
