"""Firecrawl jobs across replicas: real `sift serve` processes sharing one PostgreSQL. An
extract job started on one replica is answered by the other (behind a load balancer, the SDK's
polls land anywhere); a batch scrape whose replica dies is taken over and finished."""

from __future__ import annotations

import urllib.parse
from typing import Any

from firecrawl import Firecrawl

from tests.support.origin import slow_chain
from tests.support.replicas import OTHER, TOKEN, call
from tests.support.until import until

SCHEMA = {
    "type": "object",
    "properties": {"title": {"type": "string"}, "points": {"type": "integer"}},
    "required": ["title", "points"],
}


def test_an_extract_job_is_answered_by_any_replica(replicas, origin, fake_model):
    """Started on A, its status read on B: processing while the model thinks, then the data
    (it lived in A's memory: B answered 404). Another caller still gets 404."""
    a, b = replicas(2, f'[digest]\nendpoint = "{fake_model.url}"\n')
    origin.set("/replica-jobs/extract", "<html><title>Shared</title><p>Two points.</p></html>")
    fake_model.replies = ['{"title": "Shared", "points": 2}']
    fake_model.hold_chat = True
    try:
        body = {
            "urls": [origin.url("/replica-jobs/extract")],
            "prompt": "the title",
            "schema": SCHEMA,
        }
        status, started = call(a, "POST", "/v2/extract", body)
        assert status == 200 and started["status"] == "processing", started
        assert fake_model.chat_arrived.wait(30)
        path = f"/v2/extract/{started['id']}"
        status, seen = call(b, "GET", path)
        assert status == 200 and seen["status"] == "processing", seen
        assert call(b, "GET", path, token=OTHER)[0] == 404  # the owner's only
    finally:
        fake_model.release()

    def ended() -> dict[str, Any] | None:
        status, body = call(b, "GET", path)
        return dict(body) if status == 200 and body["status"] != "processing" else None

    done = until(ended, "the extract to end", timeout=60, every=0.1)
    assert done["status"] == "completed", done
    assert done["data"] == {"title": "Shared", "points": 2}
    assert done["sources"]["used"] == [origin.url("/replica-jobs/extract")]


def test_a_batch_scrape_whose_replica_died_is_finished_by_the_other(replicas, origin):
    """A Firecrawl batch scrape on A; A is killed (kill -9) mid-job and stays down: once its
    lease lapses B takes the job over (it could not read Firecrawl targets back: its runner
    crashed) and finishes it, each URL once in the data."""
    a, b = replicas(2)
    paths = [f"/replica-jobs/scrape{i}" for i in range(12)]
    for p in paths:
        origin.set_slow(p, 0.2, f"<html><title>{p}</title><p>Page {p}.</p></html>")
    job = Firecrawl(api_key=TOKEN, api_url=a).start_batch_scrape([origin.url(p) for p in paths])
    until(lambda: origin.count(paths[3]) >= 1, "the job never got going", timeout=30, every=0.02)
    replicas.kill(0)
    fc = Firecrawl(api_key=TOKEN, api_url=b)
    status = until(
        lambda: (s := fc.get_batch_scrape_status(job.id)).status != "scraping" and s,
        "the job taken over and finished",
        timeout=60,
        every=0.2,
    )
    assert status.status == "completed" and status.completed == 12, status
    got = sorted(urllib.parse.urlsplit(d.metadata.source_url).path for d in status.data)
    assert got == sorted(paths)
    counts = [origin.count(p) for p in paths]
    assert min(counts) == 1 and sum(counts) <= 13, counts  # at most the one in flight, twice


def test_a_crawl_whose_replica_died_grows_on_within_its_bounds(replicas, origin):
    """A crawl mid-way on A (each page finds one more); A is killed and stays down: B takes
    it over with its stored bounds, grows it on from its pages' links and stops at its limit."""
    a, b = replicas(2)
    chain = slow_chain(origin, "/replica-jobs/crawl", 8)
    job = Firecrawl(api_key=TOKEN, api_url=a).start_crawl(
        origin.url(chain[0]), limit=5, sitemap="skip"
    )
    until(lambda: origin.count(chain[2]) >= 1, "the crawl never got going", timeout=30, every=0.02)
    replicas.kill(0)
    fc = Firecrawl(api_key=TOKEN, api_url=b)
    status = until(
        lambda: (s := fc.get_crawl_status(job.id)).status != "scraping" and s,
        "the job taken over and finished",
        timeout=60,
        every=0.2,
    )
    assert status.status == "completed" and status.total == 5, status
    got = sorted(urllib.parse.urlsplit(d.metadata.source_url).path for d in status.data)
    assert got == sorted(chain[:5])
    assert origin.count(chain[5]) == 0  # the limit held on the new runner
