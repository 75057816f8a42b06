"""Ready answers at the edge: a repeated `/v1/fetch` of a fresh cached page is answered with
the bytes kept from the handler's answer — the same body, headers, log line and metrics —
and never once they stop being the answer (the page refetched, past `max_age` or the TTL,
another caller class, a token no longer valid)."""

from __future__ import annotations

import gzip
import http.client
import json

from prometheus_client.parser import text_string_to_metric_families

from tests.support.clock import Ahead
from tests.support.sift_server import FLEET_TOKEN, RESTRICTED_TOKEN

PAGE = "<html><head><title>{t}</title></head><body><article><h1>{t}</h1>{p}</article></body></html>"


def _page(title: str, words: int = 300) -> str:
    para = "<p>" + " ".join(f"{title.lower()}word{i}" for i in range(words)) + "</p>"
    return PAGE.format(t=title, p=para * 3)


def _metric(sift, name: str, **labels: str) -> float:
    text = sift.request("GET", "/metrics", token=None).body.decode()
    return sum(
        s.value
        for fam in text_string_to_metric_families(text)
        for s in fam.samples
        if s.name == name and all(s.labels.get(k) == v for k, v in labels.items())
    )


def _same_headers(a: dict[str, str], b: dict[str, str]) -> None:
    drop = {"Date"}
    assert {k: v for k, v in a.items() if k not in drop} == {
        k: v for k, v in b.items() if k not in drop
    }


def test_ready_answer_is_the_handlers_answer(sift, origin):
    origin.set("/a", _page("Ready"), "text/html")
    body = {"url": origin.url("/a")}
    assert sift.post("/v1/fetch", body).json["cached"] is False
    by_handler = sift.post("/v1/fetch", body)  # a cached answer: kept ready from here
    hits = _metric(sift, "sift_cache_total", event="hit")
    served = _metric(sift, "sift_requests_total", route="/v1/fetch", status="200")
    ready = [sift.post("/v1/fetch", body) for _ in range(3)]
    for answer in ready:
        assert answer.status == 200 and answer.body == by_handler.body
        _same_headers(answer.headers, by_handler.headers)
    assert by_handler.json["cached"] is True
    assert len(sift.svc.answers) == 1  # answered at the edge, from the bytes kept
    assert _metric(sift, "sift_cache_total", event="hit") == hits + 3
    assert _metric(sift, "sift_requests_total", route="/v1/fetch", status="200") == served + 3
    assert origin.count("/a") == 1


def test_ready_answer_gzipped_as_tornado_would(sift, origin):
    origin.set("/gz", _page("Zipped"), "text/html")
    body = {"url": origin.url("/gz")}
    sift.post("/v1/fetch", body)
    zipped = {"Accept-Encoding": "gzip"}
    by_handler = sift.post("/v1/fetch", body, headers=zipped)
    ready = sift.post("/v1/fetch", body, headers=zipped)
    assert by_handler.headers["Content-Encoding"] == ready.headers["Content-Encoding"] == "gzip"
    _same_headers(
        {k: v for k, v in ready.headers.items() if k != "Content-Length"},
        {k: v for k, v in by_handler.headers.items() if k != "Content-Length"},
    )
    assert gzip.decompress(ready.body) == gzip.decompress(by_handler.body)
    assert int(ready.headers["Content-Length"]) == len(ready.body)


def test_refetched_page_is_never_answered_from_old_bytes(sift, origin):
    origin.set("/v", _page("First"), "text/html")
    body = {"url": origin.url("/v"), "max_age": 3600}
    sift.post("/v1/fetch", body)
    assert "firstword1" in sift.post("/v1/fetch", body).json["content"]  # kept ready
    assert "firstword1" in sift.post("/v1/fetch", body).json["content"]
    origin.set("/v", _page("Second"), "text/html")
    fresh = sift.post("/v1/fetch", {"url": origin.url("/v"), "max_age": 0})  # refetched
    assert fresh.json["cached"] is False and "secondword1" in fresh.json["content"]
    for _ in range(2):  # the old bytes are gone; the new answer is kept in their place
        answer = sift.post("/v1/fetch", body)
        assert answer.json["cached"] is True and "secondword1" in answer.json["content"]
    assert origin.count("/v") == 2


def test_ready_answer_ends_with_its_max_age(sift, origin):
    sift.svc.clock = clock = Ahead()
    origin.set("/age", _page("Aging"), "text/html")
    body = {"url": origin.url("/age"), "max_age": 60}
    sift.post("/v1/fetch", body)
    assert sift.post("/v1/fetch", body).json["cached"] is True  # kept ready
    assert sift.post("/v1/fetch", body).json["cached"] is True
    clock.advance(61)
    assert sift.post("/v1/fetch", body).json["cached"] is False
    assert origin.count("/age") == 2


def test_classes_and_tokens_are_checked_on_every_ready_answer(sift, origin):
    origin.set("/c", _page("Classes"), "text/html")
    body = {"url": origin.url("/c")}
    sift.post("/v1/fetch", body)
    sift.post("/v1/fetch", body)  # ready for the fleet class
    assert sift.post("/v1/fetch", body, token="not-a-token").status == 401
    assert sift.post("/v1/fetch", body, token=None).status == 401
    other = sift.post("/v1/fetch", body, token=RESTRICTED_TOKEN)
    assert other.status == 200 and other.json["cached"] is False  # its own copy
    assert origin.count("/c") == 2


def test_hits_and_misses_share_one_kept_alive_connection(sift, origin):
    origin.set("/k", _page("Kept"), "text/html")
    origin.set("/other", _page("Other"), "text/html")
    conn = http.client.HTTPConnection("127.0.0.1", sift.port, timeout=30)
    auth = {"Authorization": f"Bearer {FLEET_TOKEN}", "Content-Type": "application/json"}

    def call(path: str, body: dict[str, object]) -> tuple[int, dict[str, object]]:
        conn.request("POST", path, body=json.dumps(body).encode(), headers=auth)
        r = conn.getresponse()
        return r.status, json.loads(r.read())

    try:
        ready = {"url": origin.url("/k")}
        for _ in range(2):
            call("/v1/fetch", ready)
        for i in range(3):  # a ready answer, a miss replayed to the handler, a bad body
            status, answer = call("/v1/fetch", ready)
            assert status == 200 and answer["cached"] is True
            status, answer = call("/v1/fetch", {"url": origin.url("/other"), "max_chars": 50 + i})
            assert status == 200 and answer["title"] == "Other"
            status, answer = call("/v1/fetch", {"url": origin.url("/k"), "nope": 1})
            assert status == 400 and answer["success"] is False
    finally:
        conn.close()


def test_ready_answer_logs_the_handlers_line(sift, origin, captured):
    origin.set("/log", _page("Logged"), "text/html")
    body = {"url": origin.url("/log")}
    sift.post("/v1/fetch", body)
    sift.post("/v1/fetch", body)
    sift.post("/v1/fetch", body)
    captured.wait_requests(3)
    by_handler, ready = captured.requests()[1:3]
    for line in (by_handler, ready):
        line.pop("ms")
        line.pop("ts")
    assert ready == by_handler
    assert ready["cache"] == "hit" and ready["host"] == "127.0.0.1"


def test_firecrawl_scrape_is_kept_ready_apart_from_fetch(sift, origin):
    origin.set("/fc", _page("Scraped"), "text/html")
    body = {"url": origin.url("/fc")}
    for _ in range(2):
        assert sift.post("/v1/fetch", body).json["cached"] in (False, True)
    kept = len(sift.svc.answers)
    first = sift.post("/v2/scrape", body)  # the same body on another route: its own answer
    assert first.status == 200 and first.json["data"]["markdown"].startswith("# Scraped")
    by_handler = sift.post("/v2/scrape", body)
    assert len(sift.svc.answers) == kept + 1
    ready = sift.post("/v2/scrape", body)
    assert ready.body == by_handler.body and "success" in ready.json
    _same_headers(ready.headers, by_handler.headers)
    v1 = sift.post("/v1/scrape", body)  # the v1 route is kept apart too
    assert v1.status == 200 and v1.json["data"]["markdown"] == ready.json["data"]["markdown"]
    summary = {"url": origin.url("/fc"), "formats": ["summary"]}
    for _ in range(2):  # a model's (or the digest's) answer is never kept ready
        assert sift.post("/v2/scrape", summary).status == 200
    assert len(sift.svc.answers) == kept + 2
