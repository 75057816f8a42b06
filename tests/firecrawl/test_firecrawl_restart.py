"""Firecrawl jobs across a crash, through real processes: `sift serve` killed with SIGKILL while
a batch scrape and a crawl are live (a slow origin keeps them so), then started again — it
starts, and both jobs finish, every URL once, the crawl within its limit. A stored job that
cannot be read back fails with its reason, and sift still starts."""

from __future__ import annotations

import json
import sqlite3
import urllib.parse
import urllib.request
import uuid
from pathlib import Path
from typing import Any

import pytest
from firecrawl import Firecrawl

from tests.support.origin import slow_chain
from tests.support.processes import TOKEN, Served
from tests.support.until import until

SLOW = 1.5  # seconds each page of the jobs takes to answer


def _served(tmp: Path) -> Served:
    """`sift serve` whose caller may run two jobs at once (a batch scrape and a crawl)."""
    served = Served(tmp)
    with served.config.open("a") as cfg:
        cfg.write("[batch]\njobs_per_caller = 2\n")
    return served


def _get(served: Served, path: str) -> dict[str, Any]:
    opener = urllib.request.build_opener(urllib.request.ProxyHandler({}))
    req = urllib.request.Request(served.url + path, headers={"Authorization": f"Bearer {TOKEN}"})
    with opener.open(req, timeout=10) as r:
        return dict(json.loads(r.read()))


def _paths(urls: list[str]) -> list[str]:
    return sorted(urllib.parse.urlsplit(u).path for u in urls)


def test_firecrawl_jobs_go_on_after_a_kill(tmp_path, origin):
    """Killed with a batch scrape and a crawl live: sift starts again (it did not: the stored
    Firecrawl targets were read as /v1/fetch ones, the runner crashed, sift exited 1), and
    both jobs complete, every URL once; the crawl grows on from its stored frontier and stops
    at its limit."""
    prefix = f"/fcr{uuid.uuid4().hex[:8]}"
    chain = slow_chain(origin, prefix, 8, SLOW)
    scraped = [f"{prefix}/b{i}" for i in range(4)]
    for path in scraped:
        origin.set_slow(path, SLOW, f"<html><title>{path}</title><p>Batch {path}.</p></html>")
    served = _served(tmp_path).start()
    fc = Firecrawl(api_key=TOKEN, api_url=served.url)
    try:
        batch = fc.start_batch_scrape([origin.url(p) for p in scraped])
        crawl = fc.start_crawl(origin.url(chain[0]), limit=5, sitemap="skip")
        # The crawl has read two pages and found a third: its frontier is mid-way.
        until(lambda: origin.count(chain[2]) >= 1, "the crawl's third page", 90)
        served.kill()
        served.start()
        until(
            lambda: fc.get_batch_scrape_status(batch.id).status != "scraping",
            "the batch scrape to end",
            timeout=120,
        )
        until(
            lambda: fc.get_crawl_status(crawl.id).status != "scraping",
            "the crawl to end",
            timeout=120,
        )
        done = fc.get_batch_scrape_status(batch.id)
        assert done.status == "completed" and done.total == 4 and done.completed == 4
        assert _paths([d.metadata.source_url for d in done.data]) == sorted(scraped)
        crawled = fc.get_crawl_status(crawl.id)
        assert crawled.status == "completed" and crawled.total == 5
        assert _paths([d.metadata.source_url for d in crawled.data]) == sorted(chain[:5])
        assert origin.count(chain[5]) == 0  # the limit held across the restart
        assert _get(served, f"/v1/batch/{crawl.id}")["status"] == "done"
    finally:
        served.stop()


def test_a_stored_job_that_cannot_be_read_fails_and_sift_starts(tmp_path, origin):
    """A job whose stored targets cannot be decoded (a damaged row, a format from another
    version): sift starts, that job fails saying why (on /v1/batch and Firecrawl's status),
    and the other live job goes on."""
    prefix = f"/fcb{uuid.uuid4().hex[:8]}"
    hold = f"bad-{uuid.uuid4().hex[:8]}"
    pages = [f"{prefix}/p{i}" for i in range(3)]
    for path in pages:
        origin.set_slow(path, SLOW, f"<html><title>{path}</title><p>Page {path}.</p></html>")
    served = _served(tmp_path).start()
    fc = Firecrawl(api_key=TOKEN, api_url=served.url)
    try:
        bad = fc.start_batch_scrape([origin.url(f"/hold/{hold}"), origin.url(f"{prefix}/x")])
        assert origin.wait_arrived(hold, 30)
        good = fc.start_batch_scrape([origin.url(p) for p in pages])
        served.kill()
        db = sqlite3.connect(served.state / "jobs.db")
        with db:
            db.execute(
                "UPDATE batch_target SET options = ? WHERE job_id = ? AND idx = 1",
                (b'{"url": 7, "formats": "nope"}', bad.id),
            )
        db.close()
        origin.release(hold)
        served.start()
        until(
            lambda: fc.get_batch_scrape_status(good.id).status != "scraping",
            "the good job to end",
            timeout=120,
        )
        done = fc.get_batch_scrape_status(good.id)
        assert done.status == "completed"
        assert _paths([d.metadata.source_url for d in done.data]) == sorted(pages)
        status = _get(served, f"/v2/batch/scrape/{bad.id}")
        assert status["status"] == "failed", status
        assert "cannot be read" in status["error"], status
        job = _get(served, f"/v1/batch/{bad.id}")
        assert job["status"] == "failed" and "cannot be read" in job["error"], job
    finally:
        served.stop()
        origin.release(hold)


@pytest.mark.filterwarnings("ignore::DeprecationWarning")  # the SDK deprecates extract
def test_an_extract_job_goes_on_after_a_kill(tmp_path, origin, fake_model):
    """Killed while its model call is out: the extract is stored, so after the restart it
    runs again and completes (it lived in the process's memory: its status was 404)."""
    origin.set("/fce/page", "<html><title>Kept</title><p>Three points.</p></html>")
    served = _served(tmp_path)
    with served.config.open("a") as cfg:
        cfg.write(f'[digest]\nendpoint = "{fake_model.url}"\n')
    served.start()
    fake_model.hold_chat = True
    try:
        fc = Firecrawl(api_key=TOKEN, api_url=served.url)
        started = fc.start_extract([origin.url("/fce/page")], prompt="the title and points")
        assert fake_model.chat_arrived.wait(30)
        served.kill()
        fake_model.release()
        fake_model.replies = ['{"title": "Kept", "points": 3}']
        served.start()
        until(
            lambda: _get(served, f"/v2/extract/{started.id}")["status"] != "processing",
            "the extract to end",
            timeout=60,
        )
        done = _get(served, f"/v2/extract/{started.id}")
        assert done["status"] == "completed" and done["data"] == {"title": "Kept", "points": 3}
    finally:
        fake_model.release()
        served.stop()


def test_waiting_jobs_survive_a_kill_and_run_within_their_bounds(tmp_path, origin):
    """One live job a caller: behind a batch scrape held at the origin, a crawl (with
    `ignoreQueryParameters`) and a batch scrape wait. Killed and started again, they are
    still there, waiting (`scraping`, nothing done), and run once the first ends: the crawl
    within its stored bounds (one page per path), every URL once."""
    prefix = f"/fcw{uuid.uuid4().hex[:8]}"
    hold = f"w-{uuid.uuid4().hex[:8]}"
    origin.set(
        f"{prefix}/",
        f'<html><title>Hub</title><a href="{prefix}/a?x=1">1</a> <a href="{prefix}/a?x=2">2</a>'
        f' <a href="{prefix}/b">b</a></html>',
    )
    for page in ("a", "b", "later"):
        origin.set(f"{prefix}/{page}", f"<html><title>{page}</title><p>Page {page}.</p></html>")
    served = Served(tmp_path).start()
    fc = Firecrawl(api_key=TOKEN, api_url=served.url)
    try:
        first = fc.start_batch_scrape([origin.url(f"/hold/{hold}")])
        assert origin.wait_arrived(hold, 30)
        crawl = fc.start_crawl(
            origin.url(f"{prefix}/"), ignore_query_parameters=True, sitemap="skip", limit=10
        )
        later = fc.start_batch_scrape([origin.url(f"{prefix}/later")])
        served.kill()
        served.start()
        for job in (
            _get(served, f"/v2/crawl/{crawl.id}"),
            _get(served, f"/v2/batch/scrape/{later.id}"),
        ):
            assert job["status"] == "scraping" and job["completed"] == 0, job
        assert origin.count(f"{prefix}/") == 0 and origin.count(f"{prefix}/later") == 0
        origin.release(hold)  # the first job's page, tried again after the restart, answers
        until(
            lambda: fc.get_batch_scrape_status(later.id).status != "scraping",
            "the last job to end",
            timeout=120,
        )
        assert fc.get_batch_scrape_status(first.id).status == "completed"
        crawled = fc.get_crawl_status(crawl.id)
        assert crawled.status == "completed", crawled
        got = [urllib.parse.urlsplit(d.metadata.source_url) for d in crawled.data]
        assert sorted(u.path for u in got) == [f"{prefix}/", f"{prefix}/a", f"{prefix}/b"]
        assert origin.count(f"{prefix}/a") == 1  # `?x=2` is the same page: never fetched
        assert fc.get_batch_scrape_status(later.id).status == "completed"
    finally:
        served.stop()
        origin.release(hold)
