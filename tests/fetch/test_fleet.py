"""Gates and redaction under a fleet: slots per host, 429 with Retry-After, quiet logs."""

from __future__ import annotations

import json
from concurrent.futures import ThreadPoolExecutor

import pytest

from tests.support.origin import Origin
from tests.support.sift_server import RESTRICTED_TOKEN


@pytest.fixture
def other_host():
    """A second origin on 127.0.0.2: another host as far as the gates are concerned.
    (Tornado, not http.server: http.server looks up its own name in DNS when it binds.)"""
    other = Origin("127.0.0.2").start()
    other.set("/x", "other host text", "text/plain")
    yield other.url("")
    other.stop()


def test_per_host_gate(make_sift, origin, other_host):
    sift = make_sift({"gates": {"per_host": 2, "wait": "1s"}})
    origin.set("/cached", "cached text", "text/plain")
    assert sift.fetch(origin.url("/cached")).status == 200
    pool = ThreadPoolExecutor(2)
    try:
        held = [pool.submit(sift.fetch, origin.url(f"/hold/gate{i}")) for i in range(2)]
        origin.wait_arrived("gate0")
        origin.wait_arrived("gate1")
        third = sift.fetch(origin.url("/hold/gate2"))
        assert third.status == 429
        assert third.json["hint"] == "retry" and int(third.headers["Retry-After"]) >= 1
        assert origin.count("/hold/gate2") == 0
        other = sift.fetch(other_host + "/x")
        assert other.status == 200 and "other host text" in other.json["content"]
        hit = sift.fetch(origin.url("/cached"))
        assert hit.status == 200 and hit.json["cached"] is True
        origin.release("gate0")
        origin.release("gate1")
        assert [f.result(30).status for f in held] == [200, 200]
    finally:
        origin.release("gate0")
        origin.release("gate1")
        pool.shutdown()


def test_restricted_callers_leave_no_trace_in_logs_or_metrics(sift, origin, captured):
    secret_title = "Zanzibar Quokka Dossier"
    secret_text = "xylophonic marmalade conspiracy"
    page = (
        f"<html><head><title>{secret_title}</title></head><body><article>"
        f"<h1>{secret_title}</h1><p>{secret_text} " + "filler words here. " * 40 + "</p>"
        "</article></body></html>"
    )
    origin.set("/secret-path-qq", page, "text/html")
    ok = sift.fetch(origin.url("/secret-path-qq"), token=RESTRICTED_TOKEN)
    assert ok.status == 200 and secret_text in ok.json["content"]
    failed = sift.fetch(origin.url("/status/404?secret-path-qq"), token=RESTRICTED_TOKEN)
    assert failed.status == 502
    blocked = sift.fetch("http://10.11.12.13/secret-path-qq", token=RESTRICTED_TOKEN)
    assert blocked.status == 403
    captured.wait_requests(3)
    lines = [json.loads(line) for line in captured.lines]
    requests = [line for line in lines if line.get("event") == "request"]
    assert len(requests) >= 3
    assert {r["class"] for r in requests} == {"restricted"}
    everything = "\n".join(captured.lines)
    for secret in (
        "secret-path-qq",
        "127.0.0.1",
        "10.11.12.13",
        secret_title,
        secret_text,
        "Quokka",
        "marmalade",
    ):
        assert secret not in everything, secret
    metrics = sift.request("GET", "/metrics", token=None).body.decode()
    for secret in ("secret-path-qq", "127.0.0.1", "10.11.12.13", "Quokka"):
        assert secret not in metrics


def test_fleet_lines_carry_the_host_but_never_text(sift, origin, captured):
    origin.set(
        "/fleet-page",
        "<html><body><p>" + "unique fleet words " * 30 + "</p></body></html>",
        "text/html",
    )
    assert sift.fetch(origin.url("/fleet-page")).status == 200
    captured.wait_requests(1)
    requests = [json.loads(x) for x in captured.lines if '"event": "request"' in x]
    assert requests[-1]["host"] == "127.0.0.1"
    assert requests[-1]["status"] == 200 and requests[-1]["cache"] == "miss"
    assert not any("unique fleet words" in x for x in captured.lines)
