"""Several replicas, one store (issue 15), through HTTP: real `sift serve` processes sharing
one PostgreSQL (a throwaway cluster, tests/support/pg.py), and a sift that loses its database."""

from __future__ import annotations

import json
import socket
import time
import urllib.request
from collections.abc import Callable, Iterator
from typing import Any

import psycopg

from tests.support.pg import start_cluster
from tests.support.replicas import OTHER, TOKEN, call
from tests.support.store_faults import FAST, degrades_and_recovers
from tests.support.until import until

ARTICLE = (
    "<html><head><title>Shared</title></head><body><article><h1>Shared</h1>"
    + "".join(f"<p>Paragraph {i} of words that a cleaner keeps.</p>" for i in range(50))
    + "</article></body></html>"
)


def _stored(url: str, page: str) -> bool:
    with psycopg.connect(url) as conn:
        return conn.execute("SELECT 1 FROM content WHERE url = %s", (page,)).fetchone() is not None


def test_a_document_fetched_by_one_replica_is_answered_cached_by_the_other(replicas, origin):
    a, b = replicas(2)
    origin.set("/replicas/shared", ARTICLE)
    page = origin.url("/replicas/shared")
    status, first = call(a, "POST", "/v1/fetch", {"url": page})
    assert status == 200 and first["cached"] is False and "Paragraph 7" in first["content"]
    # The cache write is not awaited by the answer.
    until(lambda: _stored(replicas.url, page), "the first replica to store the document")
    status, second = call(b, "POST", "/v1/fetch", {"url": page})
    assert status == 200 and second["cached"] is True, second
    assert second["content"] == first["content"]
    assert origin.count("/replicas/shared") == 1  # the origin saw one request
    opener = urllib.request.build_opener(urllib.request.ProxyHandler({}))
    with opener.open(b + "/metrics", timeout=10) as r:
        text = r.read().decode()
    assert 'sift_store_seconds_count{op="read"}' in text
    assert 'sift_store_pool_connections{state="open"}' in text


def test_batch_caps_hold_across_replicas_and_status_reads_from_any(replicas, origin):
    a, b = replicas(2)
    origin.set_slow("/replicas/slow", 3.0)
    body = {"targets": [{"url": origin.url("/replicas/slow")}]}
    status, job = call(a, "POST", "/v1/batch", body)
    assert status in (200, 202), job
    other = {"targets": [{"url": origin.url("/replicas/slow?2")}]}
    status, refused = call(b, "POST", "/v1/batch", other)  # jobs_per_caller = 1, fleet-wide
    assert status == 429, refused
    status, seen = call(b, "GET", f"/v1/batch/{job['job_id']}")
    assert status == 200 and seen["job_id"] == job["job_id"]


def _status(base: str, job_id: str, token: str = TOKEN) -> dict[str, Any]:
    status, body = call(base, "GET", f"/v1/batch/{job_id}", token=token)
    assert status == 200, body
    return body


def _until_status(base: str, job_id: str, want: str, token: str = TOKEN) -> dict[str, Any]:
    def reached() -> dict[str, Any] | None:
        job = _status(base, job_id, token)
        return job if job["status"] == want else None

    return until(reached, f"job {job_id} to be {want}", timeout=60, every=0.1)


def test_a_replica_killed_mid_job_goes_on_with_it_after_a_restart(replicas, origin):
    """kill -9 mid-target: started again (same state directory), the replica goes on with its
    own job — the target in flight tried once more — and its peer's job is left alone."""
    a, b = replicas(2)
    origin.set_slow("/replicas/held-a", 2.0)
    origin.set_slow("/replicas/held-b", 2.0)
    urls = [origin.url("/replicas/held-a"), origin.url("/text?after")]
    status, ja = call(a, "POST", "/v1/batch", {"targets": [{"url": u} for u in urls]})
    assert status in (200, 202), ja
    body = {"targets": [{"url": origin.url("/replicas/held-b")}]}
    status, jb = call(b, "POST", "/v1/batch", body, OTHER)
    assert status in (200, 202), jb
    until(lambda: origin.count("/replicas/held-a") >= 1, "the job never ran")
    replicas.kill(0)
    replicas.restart(0)
    done = _until_status(b, ja["job_id"], "done")  # read from the peer: one store
    assert [t["status"] for t in done["targets"]] == ["done", "done"]
    assert origin.count("/replicas/held-a") == 2  # tried once more, not failed
    _until_status(a, jb["job_id"], "done", OTHER)
    assert origin.count("/replicas/held-b") == 1  # the peer's target ran once, by the peer


def test_an_unreachable_postgresqldegrades_and_recovers(make_sift, origin):
    """Its own cluster, stopped and started again under a running sift."""
    gen = start_cluster()
    cluster = next(gen)
    try:
        sift = make_sift({**FAST, "store": {**FAST["store"], "url": cluster.create()}})
        fault = _stopped(cluster)
        degrades_and_recovers(sift, origin, "unreachable", "database unreachable", fault)
    finally:
        gen.close()


def _stopped(cluster: Any) -> Callable[[], Any]:
    from contextlib import contextmanager

    @contextmanager
    def fault() -> Iterator[None]:
        cluster.stop()
        try:
            yield
        finally:
            cluster.start()

    return fault


def test_a_cancel_through_another_replica_stops_the_job(replicas, origin):
    a, b = replicas(2)
    for i in range(4):
        origin.set_slow(f"/replicas/c{i}", 1.0)
    urls = [origin.url(f"/replicas/c{i}") for i in range(4)]
    status, job = call(a, "POST", "/v1/batch", {"targets": [{"url": u} for u in urls]})
    assert status in (200, 202), job
    until(lambda: origin.count("/replicas/c0") >= 1, "the job never ran")
    status, cancelled = call(b, "DELETE", f"/v1/batch/{job['job_id']}")
    assert status == 200, cancelled
    ended = _until_status(a, job["job_id"], "cancelled")
    time.sleep(3)  # long enough for two more targets, had the job gone on
    fetched = sum(origin.count(f"/replicas/c{i}") for i in range(4))
    assert fetched <= 2, fetched  # the one in flight, at most the next one already started
    assert _status(b, job["job_id"])["status"] == "cancelled"
    assert ended["targets_total"] == 4


def test_a_replica_killed_mid_job_is_taken_over_and_every_target_has_one_result(replicas, origin):
    """64 targets; the replica running them is killed (kill -9) mid-job and not started
    again: once its lease lapses the other replica takes the job over and finishes it."""
    a, b = replicas(2)
    for i in range(64):
        origin.set_slow(f"/replicas/t{i}", 0.05, f"target {i}")
    urls = [origin.url(f"/replicas/t{i}") for i in range(64)]
    status, job = call(a, "POST", "/v1/batch", {"targets": [{"url": u} for u in urls]})
    assert status in (200, 202), job
    until(
        lambda: origin.count("/replicas/t8") >= 1, "the job never got going", timeout=30, every=0.02
    )
    replicas.kill(0)
    done = _until_status(b, job["job_id"], "done")
    assert done["targets_done"] == 64
    assert [t["status"] for t in done["targets"]] == ["done"] * 64
    for i in (0, 8, 9, 63):
        status, one = call(b, "GET", f"/v1/batch/{job['job_id']}/{i}")
        assert status == 200 and f"target {i}" in json.dumps(one), one
    counts = [origin.count(f"/replicas/t{i}") for i in range(64)]
    assert min(counts) == 1 and sum(counts) <= 65, counts  # at most the one in flight, twice
    opener = urllib.request.build_opener(urllib.request.ProxyHandler({}))
    with opener.open(b + "/metrics", timeout=10) as r:
        assert "sift_batch_lease_takeovers_total 1.0" in r.read().decode()


def _metric(base: str, name: str) -> float:
    opener = urllib.request.build_opener(urllib.request.ProxyHandler({}))
    with opener.open(base + "/metrics", timeout=10) as r:
        lines = [ln for ln in r.read().decode().splitlines() if ln.startswith(name + " ")]
    return float(lines[0].split()[1]) if lines else 0.0


def test_an_idle_replica_takes_waiting_jobs_from_a_busy_one(replicas, origin):
    """Four jobs submitted all through one replica (one worker each): the idle one takes
    jobs waiting in the busy one's round-robin, and every target still runs once."""
    a, b = replicas(2, "jobs_per_caller = 8\n")
    jobs = []
    for j in range(4):
        for i in range(3):
            origin.set_slow(f"/replicas/s{j}-{i}", 0.5, f"job {j} target {i}")
        body = {"targets": [{"url": origin.url(f"/replicas/s{j}-{i}")} for i in range(3)]}
        status, job = call(a, "POST", "/v1/batch", body)
        assert status in (200, 202), job
        jobs.append(job["job_id"])
    for j, job_id in enumerate(jobs):
        done = _until_status(a, job_id, "done")
        assert done["targets_done"] == 3, done
        assert [t["status"] for t in done["targets"]] == ["done"] * 3
        for i in range(3):
            status, one = call(b, "GET", f"/v1/batch/{job_id}/{i}")
            assert status == 200 and f"job {j} target {i}" in json.dumps(one), one
    counts = [origin.count(f"/replicas/s{j}-{i}") for j in range(4) for i in range(3)]
    assert counts == [1] * 12, counts  # no target ran twice, on either replica
    assert _metric(b, "sift_batch_steals_total") >= 1
    assert _metric(a, "sift_batch_steals_total") == 0


def test_the_database_password_is_never_logged_or_answered(make_sift, origin, caplog):
    """A PostgreSQL that refuses: sift starts degraded, answers live, and its password shows
    nowhere — not in a log line, /healthz, /metrics or an answer."""
    with socket.socket() as s:
        # Bound, never listening: refused, and the port stays ours (closed, it could be handed
        # to a listener of this test).
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
        url = f"postgresql://sift:hunter2-secret@127.0.0.1:{port}/sift"
        sift = make_sift({**FAST, "store": {**FAST["store"], "url": url}})
        origin.set("/replicas/secret", ARTICLE)
        live = sift.fetch(origin.url("/replicas/secret"))
        assert live.status == 200 and "cache unavailable" in live.json["warning"]
        health = sift.request("GET", "/healthz", token=None)
        assert health.status == 503 and health.json["store_error"] == "database unreachable"
        seen = [live.body, health.body, sift.request("GET", "/metrics", token=None).body]
        assert all(b"hunter2" not in body for body in seen)
        assert "hunter2" not in caplog.text
        assert any("database unreachable" in r.getMessage() for r in caplog.records)


def test_a_sift_started_while_postgresql_is_down_finds_it_later(make_sift, origin):
    gen = start_cluster()
    cluster = next(gen)
    try:
        url = cluster.create()
        cluster.stop()
        sift = make_sift({**FAST, "store": {**FAST["store"], "url": url}})
        health = sift.request("GET", "/healthz", token=None)
        assert health.status == 503 and health.json["store_error"] == "database unreachable"
        cluster.start()
        until(
            lambda: sift.request("GET", "/healthz", token=None).status == 200,
            "sift never found its database",
            timeout=30,
        )
        origin.set("/replicas/later", ARTICLE)
        assert sift.fetch(origin.url("/replicas/later")).json["cached"] is False
        job = sift.post("/v1/batch", {"targets": [{"url": origin.url("/replicas/later")}]})
        assert job.status in (200, 202), job.body  # the schema was made when it came back
    finally:
        gen.close()
