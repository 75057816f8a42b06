"""Batch storage: round trip, idempotency, live counts, exactly-once completion,
the sliding lease, sweep, the byte budget and the restart hook — straight on SQLite."""

from __future__ import annotations

import sqlite3

import pytest

from sift.core.types import BatchJob, TargetOutcome
from sift.store.batch import RESTART
from sift.store.sqlite.connection import connect
from sift.store.sqlite.store import SqliteStore as Store

TTL = 100.0
CAPS = (1, 8)


@pytest.fixture
def store(tmp_path):
    s = Store(connect(tmp_path / "sift.db"))
    yield s
    s.close()


def job(job_id: str, caller: str = "agent", key: str = "k", now: float = 1000.0, n: int = 3):
    return BatchJob(job_id, caller, "fleet", key, "queued", None, n, 0, now, now, 0)


def targets(n: int = 3):
    return [(f"http://127.0.0.1/{i}", b'{"url": "x"}') for i in range(n)]


def done(body: bytes = b'{"success": true}') -> TargetOutcome:
    return TargetOutcome("done", result=body, code=200)


def test_round_trip_and_ordered_targets(store):
    assert store.batch_submit(job("j1"), targets(3), CAPS, TTL) == ("created", job("j1"))
    got = store.batch_job("j1", 1000.0, TTL)
    assert got == job("j1")
    ts = store.batch_targets("j1")
    assert [t.idx for t in ts] == [0, 1, 2]
    assert [t.url for t in ts] == [f"http://127.0.0.1/{i}" for i in range(3)]
    assert all(t.status == "pending" and t.result is None for t in ts)
    assert store.batch_target("j1", 3) is None
    assert store.batch_job("nope", 1000.0, TTL) is None


def test_idempotency_is_lease_caller_and_status_scoped(store):
    store.batch_submit(job("j1", key="k"), targets(), (5, 8), TTL)
    verdict, same = store.batch_submit(job("j2", key="k", now=1050.0), targets(), (5, 8), TTL)
    assert verdict == "reused" and same.id == "j1" and same.lease == 1050.0  # submit bumps
    # Another caller with the same key (cannot happen with real keys) still gets its own job.
    verdict, other = store.batch_submit(
        job("j3", caller="other", key="k", now=1060.0), targets(), (5, 8), TTL
    )
    assert verdict == "created" and other.id == "j3"
    # Lease lapsed: a fresh job.
    assert store.batch_find("k", "agent", 1050.0 + TTL + 1) is None
    # Failed and cancelled jobs are never reused; done and partial are.
    for status, reused in (
        ("done", True),
        ("partial", True),
        ("failed", False),
        ("cancelled", False),
    ):
        store.db.execute("UPDATE batch_job SET status = ? WHERE id = 'j1'", (status,))
        found = store.batch_find("k", "agent", 1000.0)
        assert (found is not None and found.id == "j1") is reused, status


def test_live_counts_and_caps(store):
    store.batch_submit(job("a1", caller="a", key="ka"), targets(), (1, 2), TTL)
    assert store.batch_live_counts("a") == (1, 1)
    assert store.batch_submit(job("a2", caller="a", key="kb"), targets(), (1, 2), TTL) == (
        "caller_busy",
        None,
    )
    store.batch_submit(job("b1", caller="b", key="kc"), targets(), (1, 2), TTL)
    assert store.batch_submit(job("c1", caller="c", key="kd"), targets(), (1, 2), TTL) == (
        "busy",
        None,
    )
    store.batch_finish_job("a1", "done")
    assert store.batch_live_counts("a") == (0, 1)  # live is by status, not lease


def test_target_completion_is_counted_once_and_bumps_the_lease(store):
    store.batch_submit(job("j1"), targets(2), CAPS, TTL)
    store.batch_target_running("j1", 0)
    assert store.batch_job("j1", 1000.0, TTL).status == "running"
    assert store.batch_target("j1", 0).status == "running"
    assert store.batch_finish_target("j1", 0, done(b"12345"), 1010.0, 10**9) == (True, 0)
    assert store.batch_finish_target("j1", 0, done(b"xx"), 1020.0, 10**9) == (False, 0)
    j = store.batch_job("j1", 1020.0, TTL)
    assert j.targets_done == 1 and j.lease == 1010.0 and j.nbytes == 5
    assert store.batch_target("j1", 0).result == b"12345"
    failed = TargetOutcome("failed", error="blocked: private", hint=None, code=403)
    store.batch_finish_target("j1", 1, failed, 1030.0, 10**9)
    t = store.batch_target("j1", 1)
    assert (t.status, t.error, t.code) == ("failed", "blocked: private", 403)
    assert store.batch_nbytes() == 5 + len("blocked: private")


def test_reads_never_write_and_touch_slides_the_lease(store):
    store.batch_submit(job("j1"), targets(), CAPS, TTL)
    store.batch_finish_job("j1", "done")
    store.batch_job("j1", 1050.0, TTL)
    store.batch_targets("j1", with_results=True)
    assert store.batch_job("j1", 1050.0, TTL).lease == 1000.0
    store.batch_touch("j1", 1090.0)
    assert store.batch_job("j1", 1150.0, TTL).lease == 1090.0
    store.batch_touch("j1", 1080.0)  # never backwards
    assert store.batch_job("j1", 1150.0, TTL).lease == 1090.0
    assert store.batch_job("j1", 1090.0 + TTL + 1, TTL) is None  # lapsed reads as gone


def test_sweep_deletes_lapsed_finished_jobs_only(store):
    store.batch_submit(job("old", key="1"), targets(), (5, 8), TTL)
    store.batch_submit(job("live", key="2"), targets(), (5, 8), TTL)
    store.batch_submit(job("new", key="3", now=1500.0), targets(), (5, 8), TTL)
    store.batch_finish_job("old", "done")
    store.batch_finish_job("new", "partial")
    assert store.batch_sweep(1000.0 + TTL + 1, TTL) == 1
    assert store.batch_job("old", 0, 10**9) is None
    assert store.batch_targets("old") == []  # its targets went with it
    assert store.batch_job("live", 0, 10**9) is not None  # live: never swept
    assert store.batch_job("new", 0, 10**9) is not None


def test_byte_budget_evicts_oldest_finished_first_never_live(store):
    for i, lease in enumerate((300.0, 100.0, 200.0)):
        store.batch_submit(job(f"f{i}", key=f"k{i}", now=lease), targets(1), (5, 8), TTL)
        store.batch_finish_target(f"f{i}", 0, done(b"x" * 100), lease, 10**9)
        store.batch_finish_job(f"f{i}", "done")
    store.batch_submit(job("live", key="kl", now=50.0), targets(2), (5, 8), TTL)
    counted, evicted = store.batch_finish_target("live", 0, done(b"y" * 100), 50.0, 250)
    assert counted and evicted == 2
    left = {r[0] for r in store.db.execute("SELECT id FROM batch_job")}
    assert left == {"f0", "live"}  # f1 (lease 100), then f2 (200) went; the live one stays
    assert store.batch_evict(0) == 1  # only finished jobs can go
    assert {r[0] for r in store.db.execute("SELECT id FROM batch_job")} == {"live"}


def test_resume_retries_the_target_in_flight_once(store):
    store.batch_submit(job("run", key="1", n=3), targets(3), (5, 8), TTL)
    store.batch_submit(job("queued", key="2"), targets(), (5, 8), TTL)
    store.batch_submit(job("fin", key="3"), targets(1), (5, 8), TTL)
    store.batch_target_running("run", 0)
    store.batch_finish_target("run", 0, done(), 1001.0, 10**9)
    store.batch_target_running("run", 1)
    store.batch_finish_job("fin", "done")
    resumed = store.batch_resume(RESTART, 2000.0)
    by_id = {j.id: (j, rows) for j, rows in resumed.jobs}
    assert sorted(by_id) == ["queued", "run"] and resumed.failed == 0
    run, rows = by_id["run"]
    assert run.status == "running" and run.lease == 2000.0 and run.targets_done == 1
    assert [t.status for t in rows] == ["done", "pending", "pending"]  # 1: tried again
    assert store.batch_target("run", 0).result == b'{"success": true}'  # intact
    store.batch_target_running("run", 1)  # in flight at a second stop: it fails
    again = store.batch_resume(RESTART, 2001.0)
    assert again.failed == 1
    assert [t.status for t in store.batch_targets("run")] == ["done", "failed", "pending"]
    failed = store.batch_target("run", 1)
    assert failed.error.startswith("restart") and failed.code == 503
    assert store.batch_job("run", 2001.0, TTL).targets_done == 2
    assert store.batch_job("fin", 2000.0, 10**9).status == "done"


def test_cancel_and_finish_keep_the_first_end(store):
    store.batch_submit(job("j1"), targets(), CAPS, TTL)
    assert store.batch_cancel("j1") == (True, "cancelled")
    assert store.batch_cancel("j1") == (False, "cancelled")
    assert store.batch_finish_job("j1", "done") == "cancelled"
    assert store.batch_cancel("nope") == (False, "gone")


def test_migration_leaves_a_sound_database(tmp_path):
    path = tmp_path / "sift.db"
    Store(connect(path)).close()
    db = sqlite3.connect(path)
    assert db.execute("PRAGMA integrity_check").fetchone()[0] == "ok"
    tables = {r[0] for r in db.execute("SELECT name FROM sqlite_master WHERE type = 'table'")}
    assert {"batch_job", "batch_target"} <= tables
    db.close()
