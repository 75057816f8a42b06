"""Replica leasing without threads (`sift.batch.leasing`): when a replica renews its lease and
asks for more jobs, how many it claims or steals, which of its jobs it lost, and what it adopts
from the store: each job from its first target not yet stored, by its kind, or failed with why."""

from __future__ import annotations

import math

from sift.actors.batch_read import read_job
from sift.batch.leasing import STEAL_EVERY, Lease, adopt, lost
from sift.batch.scheduler import canonical
from sift.core.request import FetchParams, ScrapeTarget
from sift.core.types import BatchJob, BatchTarget, Resumed


def stored_job(job_id: str, kind: str = "batch", spec: bytes | None = None) -> BatchJob:
    return BatchJob(job_id, "a", "fleet", "k", "running", None, 3, 0, 0.0, 0.0, 0, kind, spec)


def row(job_id: str, idx: int, status: str, options: bytes | None = None) -> BatchTarget:
    p = FetchParams(url=f"http://127.0.0.1/{idx}")
    opts = options if options is not None else canonical(p)
    return BatchTarget(job_id, idx, p.url, opts, status, None, None, None, None, None)


def test_nothing_is_due_until_the_lease_starts():
    lease = Lease(lease=30.0, workers=2)
    assert lease.due == math.inf
    assert lease.steal(live=0, now=100.0) == 0  # one process owns the store: never steals
    assert lease.next_steal == math.inf


def test_renewal_every_third_of_the_lease_and_claims_up_to_twice_the_workers():
    lease = Lease(lease=30.0, workers=2)
    lease.start(now=100.0)
    assert (lease.next_beat, lease.next_steal) == (110.0, 100.0 + STEAL_EVERY)
    assert lease.due == 100.0 + STEAL_EVERY
    assert lease.beat(live=1, now=110.0) == 3  # one running and one waiting per worker
    assert lease.next_beat == 120.0
    assert lease.beat(live=4, now=120.0) == 0  # full: claims nothing
    assert lease.beat(live=6, now=130.0) == 0
    assert lease.next_beat == 140.0


def test_steals_with_room_one_ask_at_a_time():
    lease = Lease(lease=30.0, workers=2)
    lease.start(now=0.0)
    assert lease.steal(live=0, now=5.0) == 2  # as many as it has idle workers
    assert lease.next_steal == 5.0 + STEAL_EVERY
    assert lease.steal(live=0, now=6.0) == 0  # the ask is out: none more, but due again
    assert lease.next_steal == 6.0 + STEAL_EVERY
    lease.stolen()  # answered
    assert lease.steal(live=1, now=7.0) == 1
    assert lease.steal(live=1, now=37.0) == 1  # an ask never answered stops blocking
    assert lease.steal(live=2, now=38.0) == 0  # no room: not due until a job ends
    assert lease.next_steal == math.inf


def test_lost_jobs_are_those_held_but_not_renewed():
    assert lost({"a", "b", "c"}, ["a", "c"]) == {"b"}
    assert lost(frozenset(), []) == set()


def test_adopt_resumes_each_job_at_its_first_target_not_stored():
    found = Resumed(
        [
            (stored_job("j"), [row("j", 0, "done"), row("j", 1, "failed"), row("j", 2, "running")]),
            (stored_job("held"), [row("held", 0, "pending")]),
            (stored_job("all"), [row("all", 0, "done")]),
        ],
        failed=0,
    )
    taken = adopt(found, held={"held"}, read=read_job)
    assert [j.id for j in taken.jobs] == ["j", "all"]  # a job held already is not taken again
    j, done = taken.jobs
    assert (j.next_idx, j.ok, j.failed, j.over) == (2, 1, 1, False)  # the one in flight again
    assert j.caller.name == "a" and j.caller.cls == "fleet"
    assert done.over and done.status == "done"  # stopped after its last target was stored
    assert taken.unreadable == []


def test_adopt_reads_targets_by_kind_and_fails_an_unreadable_job_with_why():
    scrape = ScrapeTarget(url="http://127.0.0.1/s", formats=("markdown",), depth=1)
    found = Resumed(
        [
            (stored_job("s", "scrape"), [row("s", 0, "pending", canonical(scrape))]),
            (stored_job("k", "no-such-kind"), [row("k", 0, "pending")]),
            (stored_job("c", "crawl", spec=b"{not json"), [row("c", 0, "pending")]),
            (stored_job("b"), [row("b", 0, "pending", b'{"url": 5}')]),
        ],
        failed=0,
    )
    taken = adopt(found, held=(), read=read_job)
    assert [j.id for j in taken.jobs] == ["s"]
    assert taken.jobs[0].targets == (scrape,)  # a Firecrawl target, not a plain fetch
    why = {job_id: exc.reason for job_id, exc in taken.unreadable}
    assert set(why) == {"k", "c", "b"}
    assert "unknown job kind 'no-such-kind'" in why["k"]
    assert "crawl bounds cannot be read" in why["c"]
    assert "not a batch target" in why["b"]
    assert all(r.endswith("submit it again") for r in why.values())
