"""Firecrawl job webhooks through the real firecrawl-py clients (sync and async), against a
real sift, the loopback origin's small site, the fake model and a loopback receiver that
checks the events, their order, Firecrawl's body shape and its HMAC signature.

The guard is tested on loopback only: `allow_prefixes` narrowed to 127.0.0.1 makes 127.0.0.2
a refused address that still never leaves the machine, with a second receiver there to show
that nothing connected to it."""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Iterator

import pytest
from firecrawl import AsyncFirecrawl, Firecrawl
from firecrawl.v2.types import WebhookConfig
from firecrawl.v2.utils.error_handler import FirecrawlError

from tests.support.origin import Origin, install_site
from tests.support.sift_server import FLEET_TOKEN, SiftServer
from tests.support.until import until
from tests.support.webhook_receiver import Receiver

SECRET = "webhook-secret-for-tests"
HIDDEN = "caller-header-value-never-logged"
FAST = {"webhook": {"secret": SECRET, "backoff": 0.05, "timeout": 5}}


@pytest.fixture
def receiver() -> Iterator[Receiver]:
    r = Receiver().start()
    yield r
    r.stop()


@pytest.fixture
def site(origin: Origin) -> Origin:
    install_site(origin)
    return origin


def client(sift: SiftServer) -> Firecrawl:
    return Firecrawl(api_key=FLEET_TOKEN, api_url=sift.url)


def _ended(receiver: Receiver, kind: str, n: int = 1) -> None:
    until(
        lambda: sum(t in (f"{kind}.completed", f"{kind}.failed") for t in receiver.types()) >= n,
        f"the {kind} job's last webhook event",
        timeout=60,
        every=0.2,
    )


def test_crawl_posts_started_pages_completed_signed(make_sift, site, receiver, caplog):
    caplog.set_level(logging.DEBUG)
    sift = make_sift(FAST)
    hook = WebhookConfig(
        url=receiver.url(), headers={"X-Receiver-Token": HIDDEN}, metadata={"run": "7"}
    )
    job = client(sift).start_crawl(site.url("/site/"), limit=3, webhook=hook)
    _ended(receiver, "crawl")
    posts = receiver.received()
    types = [p.body["type"] for p in posts]
    assert types[0] == "crawl.started" and types[-1] == "crawl.completed", types
    assert types[1:-1] == ["crawl.page"] * 3, types
    for p in posts:
        assert p.signed_with(SECRET), p.headers
        assert p.headers["X-Receiver-Token"] == HIDDEN  # the caller's headers, on each post
        body = p.body
        assert set(body) >= {"success", "type", "id", "webhookId", "data", "metadata"}
        assert body["id"] == job.id and body["metadata"] == {"run": "7"}
        assert body["success"] is True
    assert len({p.body["webhookId"] for p in posts}) == len(posts)
    pages = [p.body["data"][0] for p in posts[1:-1]]
    assert all(
        d["markdown"] and d["metadata"]["sourceURL"].startswith(site.url("/site")) for d in pages
    )
    assert posts[0].body["data"] == [] and posts[-1].body["data"] == []
    assert receiver.wrong == []
    logged = "\n".join(f"{r.getMessage()} {r.__dict__}" for r in caplog.records)
    assert HIDDEN not in logged  # the caller's webhook headers reach no log line
    status = client(sift).get_crawl_status(job.id)
    assert status.status == "completed"
    assert HIDDEN not in sift.request("GET", f"/v2/crawl/{job.id}").body.decode()


def test_batch_scrape_events_filter_async_client(make_sift, site, receiver):
    sift = make_sift(FAST)

    async def go() -> str:
        fc = AsyncFirecrawl(api_key=FLEET_TOKEN, api_url=sift.url)
        hook = WebhookConfig(url=receiver.url("/only-end"), events=["completed"])
        job = await fc.start_batch_scrape([site.url("/site/a"), site.url("/site/b")], webhook=hook)
        return job.id

    job_id = asyncio.run(go())
    _ended(receiver, "batch_scrape")
    assert receiver.types() == ["batch_scrape.completed"]
    assert receiver.received()[0].body["id"] == job_id
    assert receiver.received()[0].path == "/only-end"


def test_batch_scrape_webhook_as_a_plain_url_unsigned(make_sift, site, receiver):
    sift = make_sift({"webhook": {"backoff": 0.05}})  # no secret: not signed
    job = client(sift).start_batch_scrape(
        [site.url("/site/a"), site.url("/status/404")], webhook=receiver.url()
    )
    _ended(receiver, "batch_scrape")
    types = receiver.types()
    assert types == [
        "batch_scrape.started",
        "batch_scrape.page",
        "batch_scrape.page",
        "batch_scrape.completed",
    ], types
    assert all("X-Firecrawl-Signature" not in p.headers for p in receiver.received())
    assert all(p.body["id"] == job.id for p in receiver.received())


@pytest.mark.filterwarnings("ignore::DeprecationWarning")  # the SDK deprecates extract
def test_extract_posts_started_and_completed_with_the_data(make_sift, fake_model, origin, receiver):
    sift = make_sift({"digest": {"endpoint": fake_model.url}, **FAST})
    fake_model.replies = ['{"title": "An article"}']
    body = {"urls": [origin.url("/article")], "prompt": "the title", "webhook": receiver.url()}
    started = sift.post("/v2/extract", body)
    assert started.status == 200, started.json
    _ended(receiver, "extract")
    assert receiver.types() == ["extract.started", "extract.completed"]
    done = receiver.received()[-1].body
    assert done["data"] == [{"title": "An article"}] and done["id"] == started.json["id"]
    assert all(p.signed_with(SECRET) for p in receiver.received())


def test_failed_posts_are_retried_bounded_and_named_in_the_status(make_sift, site, receiver):
    sift = make_sift({"webhook": {"attempts": 3, "backoff": 0.05}})
    receiver.answer(503, times=2)  # the started event: taken on its third post
    fc = client(sift)
    job = fc.start_batch_scrape([site.url("/site/a")], webhook=receiver.url())
    _ended(receiver, "batch_scrape")
    assert receiver.types() == ["batch_scrape.started"] * 3 + [
        "batch_scrape.page",
        "batch_scrape.completed",
    ]
    assert fc.get_batch_scrape_status(job.id).status == "completed"
    assert "webhook" not in (
        sift.request("GET", f"/v2/batch/scrape/{job.id}").json.get("warning") or ""
    )

    receiver.posts.clear()
    receiver.answer(500, times=100)  # never taken: each event tried 3 times, then given up
    job = fc.start_batch_scrape([site.url("/site/b")], webhook=receiver.url("/down"))
    until(lambda: len(receiver.received("/down")) >= 9, "three events, three posts each", 60)
    status = sift.request("GET", f"/v2/batch/scrape/{job.id}").json
    until(
        lambda: (
            "webhook: 3 post(s) failed"
            in (sift.request("GET", f"/v2/batch/scrape/{job.id}").json.get("warning") or "")
        ),
        "the failures named in the job's status",
        30,
    )
    status = sift.request("GET", f"/v2/batch/scrape/{job.id}").json
    assert "the receiver answered 500" in status["warning"] and status["status"] == "completed"
    assert len(receiver.received("/down")) == 9  # bounded: no fourth try of any event
    metrics = sift.request("GET", "/metrics", token=None).body.decode()
    assert 'sift_webhook_posts_total{outcome="failed"}' in metrics  # counted


def test_a_redirect_is_never_followed(make_sift, site, receiver):
    sift = make_sift({"webhook": {"attempts": 2, "backoff": 0.05}})
    receiver.answer(302, times=100, headers={"Location": receiver.url("/elsewhere")})
    job = client(sift).start_batch_scrape([site.url("/site/a")], webhook=receiver.url())
    until(
        lambda: (
            "redirect"
            in (sift.request("GET", f"/v2/batch/scrape/{job.id}").json.get("warning") or "")
        ),
        "the redirect named in the job's status",
        30,
    )
    assert receiver.received("/elsewhere") == [] and len(receiver.received("/hook")) >= 1


@pytest.fixture
def refused_receiver(receiver: Receiver) -> Iterator[Receiver]:
    """A receiver on 127.0.0.2, at the first one's port: where a post must never arrive."""
    r = Receiver(host="127.0.0.2", port=receiver.port).start()
    yield r
    r.stop()


def test_a_blocked_webhook_is_refused_up_front(make_sift, site, receiver, refused_receiver):
    names = {"hooks.internal": ["127.0.0.2"], "hooks.nowhere": []}
    sift = make_sift(
        {"guard": {"allow_prefixes": ["127.0.0.1/32"]}},
        resolver=lambda host, port: names.get(host, ["127.0.0.1"]),
    )
    fc = client(sift)
    for url in ("http://10.0.0.1/hook", f"http://hooks.internal:{receiver.port}/hook"):
        r = sift.post("/v2/crawl", {"url": site.url("/site/"), "webhook": url})
        assert r.status in (400, 403) and "webhook" in r.json["error"], r.json
        assert "blocked" in r.json["error"] and r.json["success"] is False
        with pytest.raises(FirecrawlError) as err:
            fc.start_batch_scrape([site.url("/site/a")], webhook=url)
        assert "blocked" in str(err.value)
    r = sift.post(
        "/v2/batch/scrape", {"urls": [site.url("/site/a")], "webhook": "http://hooks.nowhere/"}
    )
    assert r.status == 400 and "resolve" in r.json["error"]
    r = sift.post("/v2/crawl", {"url": site.url("/site/"), "webhook": {"url": 5}})
    assert r.status == 400 and "webhook" in r.json["error"]
    r = sift.post(
        "/v2/batch/scrape",
        {"urls": [site.url("/a")], "webhook": {"url": receiver.url(), "events": ["nope"]}},
    )
    assert r.status == 400 and "events" in r.json["error"]
    for headers in ({"Host": "elsewhere"}, {"X-Auth": "line\nbreak"}, {"X-Auth": "é"}):
        hook = {"url": receiver.url(), "headers": headers}
        r = sift.post("/v2/batch/scrape", {"urls": [site.url("/a")], "webhook": hook})
        assert r.status == 400 and "webhook.headers" in r.json["error"], r.json
        assert next(iter(headers.values())) not in r.json["error"]  # named, never echoed
    assert refused_receiver.received() == [] and receiver.received() == []


def test_the_guard_holds_at_every_connect(make_sift, site, receiver, refused_receiver):
    """The name passes up front, then resolves to a refused address (DNS rebinding): every
    post is refused before it connects, and the job's status says so."""
    calls: list[str] = []

    def resolver(host: str, port: int) -> list[str]:
        if host != "hooks.test":
            return ["127.0.0.1"]
        calls.append(host)
        return ["127.0.0.1"] if len(calls) == 1 else ["127.0.0.2"]

    sift = make_sift(
        {"guard": {"allow_prefixes": ["127.0.0.1/32"]}, "webhook": {"backoff": 0.05}},
        resolver=resolver,
    )
    hook = f"http://hooks.test:{receiver.port}/hook"
    job = client(sift).start_batch_scrape([site.url("/site/a")], webhook=hook)
    until(
        lambda: (
            "webhook: 3 post(s) failed"
            in (sift.request("GET", f"/v2/batch/scrape/{job.id}").json.get("warning") or "")
        ),
        "every event refused at connect",
        60,
    )
    warning = sift.request("GET", f"/v2/batch/scrape/{job.id}").json["warning"]
    assert "blocked: loopback" in warning, warning
    assert len(calls) == 4  # up front, then once per event: a refusal is not tried again
    assert refused_receiver.received() == [] and receiver.received() == []


def test_a_job_resumed_after_a_kill_keeps_its_webhook(tmp_path, origin, receiver):
    """`sift serve` killed mid-job: started again, the job goes on and goes on posting (its
    webhook is stored with it), signed, to its completed event."""
    from tests.support.processes import TOKEN, Served

    paths = [f"/hookslow/{i}" for i in range(4)]
    for path in paths:
        origin.set_slow(path, 1.0, f"<html><title>{path}</title><p>Page {path}.</p></html>")
    served = Served(tmp_path)
    with served.config.open("a") as cfg:
        cfg.write(f'[webhook]\nsecret = "{SECRET}"\nbackoff = 0.05\n')
    served.start()
    try:
        fc = Firecrawl(api_key=TOKEN, api_url=served.url)
        job = fc.start_batch_scrape([origin.url(p) for p in paths], webhook=receiver.url())
        until(lambda: "batch_scrape.page" in receiver.types(), "the first page's event", 60)
        served.kill()
        served.start()
        _ended(receiver, "batch_scrape")
    finally:
        served.stop()
    types = receiver.types()
    assert types[0] == "batch_scrape.started" and types[-1] == "batch_scrape.completed", types
    assert types.count("batch_scrape.page") >= 4 - 1, types  # one in flight at the kill: lost
    assert all(p.signed_with(SECRET) and p.body["id"] == job.id for p in receiver.received())
