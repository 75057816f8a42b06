"""The content cache: TTL, revalidation, eviction, class partitions, recover (issue 3)."""

from __future__ import annotations

from prometheus_client.parser import text_string_to_metric_families

from sift.store.sqlite.connection import connect
from sift.store.sqlite.store import SqliteStore as Store
from tests.support.clock import Ahead
from tests.support.sift_server import RESTRICTED_TOKEN

PAGE = "<html><head><title>{t}</title></head><body><article><h1>{t}</h1>{p}</article></body></html>"


def _page(title: str, words: int = 200) -> str:
    para = "<p>" + " ".join(f"{title.lower()}word{i}" for i in range(words)) + "</p>"
    return PAGE.format(t=title, p=para * 3)


def _metric(sift, name: str, **labels: str) -> float:
    text = sift.request("GET", "/metrics", token=None).body.decode()
    total = 0.0
    for fam in text_string_to_metric_families(text):
        for s in fam.samples:
            if s.name == name and all(s.labels.get(k) == v for k, v in labels.items()):
                total += s.value
    return total


def test_second_fetch_is_cached_and_ttl_revalidates_with_304(make_sift, origin):
    sift = make_sift({"cache": {"ttl": "1s"}})
    origin.set_etag("/etag", '"v1"', _page("Versioned"))
    first = sift.fetch(origin.url("/etag"))
    assert first.status == 200 and first.json["cached"] is False
    second = sift.fetch(origin.url("/etag"))
    assert second.json["cached"] is True
    assert second.json["content"] == first.json["content"]
    assert origin.count("/etag") == 1
    cleaned = _metric(sift, "sift_clean_total", kind="html")
    revalidated = _metric(sift, "sift_cache_total", event="revalidated")  # the process's own
    sift.svc.clock = clock = Ahead()
    clock.advance(1.2)  # past the 1 s TTL
    third = sift.fetch(origin.url("/etag"))
    assert third.status == 200 and third.json["cached"] is True
    assert origin.count("/etag") == 2
    assert origin.last_headers("/etag").get("If-None-Match") == '"v1"'
    assert third.json["content"].split("\n", 2)[2] == first.json["content"].split("\n", 2)[2]
    assert _metric(sift, "sift_clean_total", kind="html") == cleaned  # no re-cleaning
    assert _metric(sift, "sift_cache_total", event="revalidated") == revalidated + 1
    # The origin changes its ETag: past the TTL the page is fetched and cleaned again.
    origin.set_etag("/etag", '"v2"', _page("Renamed"))
    clock.advance(1.2)
    fourth = sift.fetch(origin.url("/etag"))
    assert fourth.json["cached"] is False and fourth.json["title"] == "Renamed"
    assert origin.count("/etag") == 3


def test_byte_budget_evicts_oldest_first(make_sift, origin, tmp_path):
    sift = make_sift({"cache": {"max_bytes": "40KB"}})
    paths = [f"/page{i}" for i in range(8)]
    evicted = _metric(sift, "sift_cache_total", event="evicted")  # the test process's own
    for i, path in enumerate(paths):
        origin.set(path, _page(f"Page{i}", words=600), "text/html")
        assert sift.fetch(origin.url(path)).status == 200
    assert _metric(sift, "sift_cache_total", event="evicted") > evicted
    # The newest document is still cached; the oldest was evicted first.
    assert sift.fetch(origin.url(paths[-1])).json["cached"] is True
    assert sift.fetch(origin.url(paths[0])).json["cached"] is False
    held = sift.svc.held
    import asyncio

    async def sizes() -> tuple[int, int]:
        return await held.store(lambda s: s.cache_bytes()), await held.store(
            lambda s: s.live_bytes()
        )

    cache_bytes, live = asyncio.run_coroutine_threadsafe(sizes(), sift.loop).result(10)
    assert cache_bytes <= 40_000
    empty = Store(connect(tmp_path / "empty.db"))
    baseline = empty.live_bytes()  # the schema of an empty database
    empty.close()
    doc = 3 * 600 * 12 + 4096  # about one document, generously
    assert live - baseline <= 40_000 + doc


def test_caller_classes_never_share_a_copy(sift, origin):
    origin.set("/shared", _page("Shared"), "text/html")
    a = sift.fetch(origin.url("/shared"))
    b = sift.fetch(origin.url("/shared"), token=RESTRICTED_TOKEN)
    assert a.json["cached"] is False and b.json["cached"] is False
    assert origin.count("/shared") == 2
    assert sift.fetch(origin.url("/shared"), token=RESTRICTED_TOKEN).json["cached"] is True
    assert sift.fetch(origin.url("/shared")).json["cached"] is True
    assert origin.count("/shared") == 2


def test_recover_answers_a_stale_copy(make_sift, origin):
    sift = make_sift({"cache": {"ttl": "1s"}, "fetch": {"timeout": "1s"}})
    origin.set("/flaky", _page("Flaky"), "text/html")
    assert sift.fetch(origin.url("/flaky")).status == 200
    sift.svc.clock = clock = Ahead()
    clock.advance(1.2)  # past the 1 s TTL
    origin.set("/flaky", "down", "text/plain", status=503)
    plain = sift.fetch(origin.url("/flaky"))
    assert plain.status == 502 and plain.json["upstream_status"] == 503
    r = sift.fetch(origin.url("/flaky"), recover=True)
    assert r.status == 200, r.body
    assert r.json["stale"] is True and r.json["cached"] is True
    assert "503" in r.json["warning"]
    assert r.json["title"] == "Flaky"
    # A timeout, too.
    origin.set_slow("/flaky", 5)
    r = sift.fetch(origin.url("/flaky"), recover=True)
    assert r.status == 200 and r.json["stale"] is True and "timed out" in r.json["warning"]
    assert sift.fetch(origin.url("/flaky")).status == 504


def test_recover_answers_the_copy_when_the_requests_own_deadline_passes(sift, origin):
    """`recover` over a live fetch the request's `timeout` ends before the site answers (its
    own deadline, not `[fetch] timeout`): the cached copy, saying so, not a 504; without
    `recover`, the 504 as before."""
    origin.set("/slowing", _page("Slowing"), "text/html")
    assert sift.fetch(origin.url("/slowing")).status == 200
    origin.set_slow("/slowing", 5, _page("Slowing, later"))
    r = sift.fetch(origin.url("/slowing"), max_age=0, recover=True, timeout=1.5)
    assert r.status == 200, r.body
    assert r.json["stale"] is True and r.json["title"] == "Slowing"
    assert "not done by the request's deadline" in r.json["warning"]
    late = sift.fetch(origin.url("/slowing"), max_age=0, timeout=1.5)
    assert late.status == 504
