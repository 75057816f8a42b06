"""The batch runner with real actors and a scripted pipeline on a loop thread:
serial drains, round-robin, failure isolation, idempotency, caps, cancel, busy retry, bugs."""

from __future__ import annotations

import json
import sqlite3
from contextlib import closing
from typing import Any

import pytest

from sift.actors.batch import BatchRunner
from sift.actors.batch_messages import BatchStats
from sift.actors.bridge import ThreadReply
from sift.batch.scheduler import CallerJobsBusy, JobsBusy, NoTargets, TooManyTargets
from sift.core.callers import Caller
from sift.core.errors import Conflict
from tests.support import batch_rig
from tests.support.until import until

AGENT = Caller("agent", "fleet")
SECRET = Caller("secret", "restricted")
U = "http://127.0.0.1:9"


def statuses(rig, job_id):
    return [t.status for t in rig.call(lambda s: s.batch_targets(job_id))]


def live_jobs(rig):
    reply = ThreadReply[Any]()
    rig.runner.tell(BatchStats(reply))
    return reply.wait(batch_rig.WAIT)[0]


def test_serial_in_index_order_under_the_callers_name(make_rig, events):
    rig = make_rig(workers=2)
    urls = [f"{U}/ok-{i}" for i in range(5)]
    job, reused = rig.submit(SECRET, *urls)
    assert job.status == "queued" and reused is False and job.targets_total == 5
    assert events.job(job.id) == "done"
    assert [u for _, u in rig.script.calls] == urls
    assert rig.script.peak == 1  # two workers, one job: one target at a time
    assert {c for c, _ in rig.script.calls} == {SECRET}
    assert [idx for j, idx in events.targets if j == job.id] == [0, 1, 2, 3, 4]
    stored = rig.call(lambda s: s.batch_job(job.id, 0.0, 1e12))
    assert stored.status == "done" and stored.targets_done == 5
    result = rig.call(lambda s: s.batch_target(job.id, 3)).result
    assert json.loads(result) == {"success": True, "url": urls[3]}


def test_round_robin_between_jobs_and_queued_until_taken(make_rig, events):
    rig = make_rig(workers=1)
    a, _ = rig.submit(AGENT, f"{U}/hold-a", f"{U}/ok-a1", f"{U}/ok-a2")
    rig.script.wait_entered("a")
    b, _ = rig.submit(SECRET, f"{U}/ok-b0", f"{U}/ok-b1", f"{U}/ok-b2")
    assert rig.call(lambda s: s.batch_job(a.id, 0.0, 1e12)).status == "running"
    assert (
        rig.call(lambda s: s.batch_job(b.id, 0.0, 1e12)).status == "queued"
    )  # no worker took it yet
    rig.script.release("a")
    assert events.job(a.id) == "done" and events.job(b.id) == "done"
    order = [u.rsplit("/", 1)[1] for _, u in rig.script.calls]
    assert order == ["hold-a", "ok-b0", "ok-a1", "ok-b1", "ok-a2", "ok-b2"]


def test_one_failure_does_not_stop_the_job(make_rig, events):
    rig = make_rig()
    mixed, _ = rig.submit(AGENT, f"{U}/ok-1", f"{U}/fail", f"{U}/ok-2")
    assert events.job(mixed.id) == "partial"
    assert statuses(rig, mixed.id) == ["done", "failed", "done"]
    t = rig.call(lambda s: s.batch_target(mixed.id, 1))
    assert (t.error, t.code, t.result) == ("blocked: private address 10.0.0.1", 403, None)
    bad, _ = rig.submit(AGENT, f"{U}/fail", f"{U}/fail?again")
    assert events.job(bad.id) == "failed"


def test_idempotent_resubmit_but_a_new_job_after_cancel(make_rig, events):
    rig = make_rig()
    job, _ = rig.submit(AGENT, f"{U}/hold-i", f"{U}/ok")
    rig.script.wait_entered("i")
    same, reused = rig.submit(AGENT, f"{U}/hold-i", f"{U}/ok")
    assert reused and same.id == job.id and same.status == "running"
    rig.script.release("i")
    assert events.job(job.id) == "done"
    again, reused = rig.submit(AGENT, f"{U}/hold-i", f"{U}/ok")
    assert reused and again.id == job.id and again.status == "done"  # reused after done too
    other, reused = rig.submit(SECRET, f"{U}/hold-i", f"{U}/ok")
    assert not reused and other.id != job.id  # caller-scoped
    assert events.job(other.id) == "done"
    c, _ = rig.submit(AGENT, f"{U}/hold-c", f"{U}/ok")
    rig.script.wait_entered("c")
    assert rig.cancel(c.id) == "cancelled"
    rig.script.release("c")
    assert events.job(c.id) == "cancelled"
    fresh, reused = rig.submit(AGENT, f"{U}/hold-c", f"{U}/ok")
    assert not reused and fresh.id != c.id  # a cancelled job is never reused
    assert events.job(fresh.id) == "done"


def test_caps_and_no_targets(make_rig, events):
    rig = make_rig(jobs_per_caller=1, jobs_total=2, targets_per_job=3)
    with pytest.raises(NoTargets):
        rig.submit(AGENT)
    with pytest.raises(TooManyTargets, match="4"):
        rig.submit(AGENT, *[f"{U}/ok-{i}" for i in range(4)])
    first, _ = rig.submit(AGENT, f"{U}/hold-cap")
    rig.script.wait_entered("cap")
    with pytest.raises(CallerJobsBusy) as info:
        rig.submit(AGENT, f"{U}/ok-other")
    assert info.value.status == 429 and info.value.retry_after
    second, _ = rig.submit(SECRET, f"{U}/ok-s")  # queued behind the held one: live
    with pytest.raises(JobsBusy):
        rig.submit(Caller("third", "fleet"), f"{U}/ok-t")
    rig.script.release("cap")
    assert events.job(first.id) == "done" and events.job(second.id) == "done"
    rig.submit(Caller("third", "fleet"), f"{U}/ok-t")  # room again


def test_cancel_lets_the_target_in_flight_finish_and_store(make_rig, events):
    rig = make_rig()
    job, _ = rig.submit(AGENT, f"{U}/hold-x", f"{U}/ok-1", f"{U}/ok-2")
    rig.script.wait_entered("x")
    assert rig.cancel(job.id) == "cancelled"
    assert rig.call(lambda s: s.batch_job(job.id, 0.0, 1e12)).status == "cancelled"
    rig.script.release("x")
    assert events.job(job.id) == "cancelled"
    assert statuses(rig, job.id) == ["done", "pending", "pending"]
    assert rig.call(lambda s: s.batch_target(job.id, 0)).result is not None
    assert len(rig.script.calls) == 1
    with pytest.raises(Conflict):
        rig.cancel(job.id)


def test_busy_targets_are_retried_then_given_up(make_rig, events):
    rig = make_rig(retry_every=0.01, retry_for=600)
    job, _ = rig.submit(AGENT, f"{U}/busy-2", f"{U}/ok")
    assert events.job(job.id) == "done"
    assert rig.script.tries[f"{U}/busy-2"] == 3
    limited = make_rig(retry_every=0.01, retry_for=0.05)
    job, _ = limited.submit(AGENT, f"{U}/busy-always", f"{U}/ok")
    assert events.job(job.id) == "partial"
    t = limited.call(lambda s: s.batch_target(job.id, 0))
    assert t.status == "failed" and t.code == 429 and "still busy" in t.error
    assert limited.script.tries[f"{U}/busy-always"] >= 2


@pytest.mark.allow_error_logs
def test_a_bug_in_one_target_is_stored_without_its_message(make_rig, events):
    rig = make_rig()
    job, _ = rig.submit(AGENT, f"{U}/panic", f"{U}/ok")
    assert events.job(job.id) == "partial"
    t = rig.call(lambda s: s.batch_target(job.id, 0))
    assert t.error == "internal error" and t.code == 500
    assert "secret" not in t.error
    assert all(r.is_alive() for r in [rig.runner, *rig.workers])


def test_a_new_runner_goes_on_with_the_job_and_tries_its_target_again(make_rig, events):
    rig = make_rig()
    job, _ = rig.submit(AGENT, f"{U}/ok-0", f"{U}/hold-r", f"{U}/ok-2")
    rig.script.wait_entered("r")
    rig.runner.stop()  # the runner goes; its job is left running in the store
    rig.script.release("r")
    rig.runner = BatchRunner.start(rig.cfg, lambda: rig.store, lambda: rig.workers)
    assert events.job(job.id) == "done"
    assert statuses(rig, job.id) == ["done", "done", "done"]
    assert rig.script.tries[f"{U}/hold-r"] == 2 and rig.script.tries[f"{U}/ok-0"] == 1


def test_a_resumed_job_waits_for_workers_that_are_not_up_yet(make_rig, events):
    """At start the runner may resume before its workers exist (or while one restarts): the
    job it resumed then must not sit unrun until some other event comes along."""
    rig = make_rig()
    job, _ = rig.submit(AGENT, f"{U}/ok-0", f"{U}/hold-w", f"{U}/ok-2")
    rig.script.wait_entered("w")
    rig.runner.stop()
    workers, rig.workers = rig.workers, []
    rig.script.release("w")
    rig.runner = BatchRunner.start(rig.cfg, lambda: rig.store, lambda: rig.workers)
    # Resumed, with no worker to run it:
    until(lambda: live_jobs(rig) == 1, "the job to be resumed", batch_rig.WAIT, every=0.01)
    rig.workers.extend(workers)  # the workers come up after the resume
    assert events.job(job.id) == "done"
    assert rig.script.tries[f"{U}/hold-w"] == 2


def test_a_target_runs_only_once_it_is_marked_running(make_rig, events):
    """A crash during a target's fetch must find it `running` in the store (so that it is
    tried once more, and fails with `restart` at a second crash): the mark is committed
    before the fetch starts, even when the store is slow."""
    rig = make_rig()
    other = Caller("other", "fleet")
    first, _ = rig.submit(AGENT, f"{U}/hold-a")
    second, _ = rig.submit(other, f"{U}/hold-b")
    rig.script.wait_entered("a")
    seen: dict[str, str] = {}

    def look(url: str) -> None:
        with closing(sqlite3.connect(rig.db)) as db:
            seen[url] = db.execute(
                "SELECT status FROM batch_target WHERE job_id = ? AND idx = 0", (second.id,)
            ).fetchone()[0]

    rig.script.on_enter = look
    go = rig.stall()  # the store is busy: the second job's mark waits behind it
    rig.script.release("a")
    rig.script.entered["b"].wait(1.0)  # a bound, not an assertion: b must wait for its mark
    go.set()
    rig.script.wait_entered("b")
    assert seen[f"{U}/hold-b"] == "running"
    rig.script.release("b")
    assert events.job(first.id) == "done" and events.job(second.id) == "done"
