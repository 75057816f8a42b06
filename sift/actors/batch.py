"""BatchRunner: the message plumbing around `sift.batch.scheduler` and `sift.batch.leasing`.

The runner owns the live jobs (with each job's caller, in memory), the caps and the one
round-robin; it writes through the StoreActor and hears back as answers tagged with what it
asked (`batch_messages`), each to its `handle_<tag>`. A worker (`batch_worker`) runs one
target at a time on the server's event loop: no actor ever blocks on another or on the loop.
"""

from __future__ import annotations

import logging
import time
from collections.abc import Callable
from typing import Any

import pykka

from sift.actors.alarm import Alarm
from sift.actors.base import DEFERRED, SiftActor
from sift.actors.batch_messages import (
    BatchStats,
    Beat,
    Cancel,
    Cancelled,
    Ended,
    Found,
    Ran,
    Started,
    Submit,
    Submitted,
    Wake,
    Written,
)
from sift.actors.batch_read import failed, read_job, running
from sift.actors.batch_worker import RunTarget
from sift.actors.store import StoreCall
from sift.batch import record
from sift.batch.leasing import Lease, adopt, lost
from sift.batch.scheduler import (
    Attempt,
    LiveJob,
    Scheduler,
    cancel_refusal,
    from_error,
    gave_up,
    job_caps,
    new_job,
    rows,
    submit_refusal,
)
from sift.core import metrics
from sift.core.config import BatchConfig
from sift.core.errors import SiftError, Unavailable
from sift.core.types import Resumed
from sift.fetch.scope import seen_keys
from sift.store.batch import QUEUED_KINDS, RESTART
from sift.store.protocol import Store

log = logging.getLogger("sift.batch")

SWEEP_EVERY = 600.0  # seconds between lease sweeps
WORKER_WAIT = 0.2  # seconds before a dispatch that found no worker alive looks again
Refs = Callable[[], list[pykka.ActorRef[Any]]]

# Test hook: called with (event, job id, detail) once a target ("target", idx) or a job
# ("job", status) is written. Never carries a URL.
LISTENERS: list[Callable[[str, str, object], None]] = []


def _notify(event: str, job_id: str, detail: object) -> None:
    for listener in list(LISTENERS):
        listener(event, job_id, detail)


class BatchRunner(SiftActor):
    """Holds the live jobs and hands their targets to idle workers, one per job at a time.

    Args:
        cfg: the `[batch]` block.
        store, workers: the StoreActor and the BatchWorkers, looked up anew (they may restart).
        owner: whether this process serves batch. Only the server owns the jobs: at its start
            it goes on with those a stop interrupted; an in-process `sift fetch` must not.
        shared: several replicas share the store (PostgreSQL): each leases the jobs it runs,
            takes over those whose lease lapsed and steals from busier ones
            (`sift.batch.leasing` decides when and how many).
    """

    def __init__(
        self,
        cfg: BatchConfig,
        store: Callable[[], pykka.ActorRef[Any]],
        workers: Refs,
        owner: Callable[[], bool] = lambda: True,
        shared: bool = False,
    ) -> None:
        super().__init__()
        self._shared = shared
        self.lease = Lease(cfg.lease, cfg.workers)
        self.cfg = cfg
        self._store_ref = store
        self._workers = workers
        self._owner = owner
        self.sched = Scheduler(cfg.retry_every, cfg.retry_for)
        self.assigned: dict[str, tuple[pykka.ActorRef[Any], RunTarget]] = {}
        self.held: set[Any] = set()  # replies the runner still owes (failed on stop)
        self._alarm = Alarm(self.actor_ref, Wake())
        self._next_sweep = 0.0

    def on_start(self) -> None:
        if self._owner():
            now = time.time()
            self._store(lambda s: s.batch_resume(RESTART, now), Found("restart"))
            self._promote()
            self._sweep()
            if self._shared:
                self.lease.start(time.monotonic())
                self._alarm.set(self.lease.due)
        else:
            self._next_sweep = float("inf")

    # --- requests -------------------------------------------------------------------------

    def handle_submit(self, msg: Submit) -> object:
        cap = msg.cap or self.cfg.targets_per_job
        spec = msg.crawl.encode() if msg.crawl is not None else None
        job = new_job(msg.caller, msg.targets, cap, msg.kind, spec, time.time())
        stored = rows(msg.targets)
        caps = job_caps(msg.kind, self.cfg.jobs_per_caller, self.cfg.jobs_total)
        queue = None  # a Firecrawl job waits its turn beyond the caps
        if msg.kind in QUEUED_KINDS:
            queue = (self.cfg.firecrawl_waiting_per_caller, self.cfg.firecrawl_waiting_total)
        self.held.add(msg.reply)
        ttl = self.cfg.ttl
        self._store(lambda s: s.batch_submit(job, stored, caps, ttl, queue), Submitted(msg))
        return DEFERRED

    def handle_batch_stats(self, msg: BatchStats) -> tuple[int, int]:
        """(live jobs, targets running now): the batch queue as the usage calls report it."""
        return len(self.sched.jobs), sum(1 for j in self.sched.jobs.values() if j.in_flight)

    def handle_cancel(self, msg: Cancel) -> object:
        job = self.sched.jobs.get(msg.job_id)
        if job is not None:
            job.cancelled = True  # no further target starts; one in flight finishes and stores
        self.held.add(msg.reply)
        self._store(lambda s: s.batch_cancel(msg.job_id), Cancelled(msg))
        return DEFERRED

    def handle_wake(self, msg: Wake) -> None:
        self._alarm.rang()
        if time.monotonic() >= self._next_sweep:
            self._sweep()
        if time.monotonic() >= self.lease.next_beat:
            self._beat()
        if time.monotonic() >= self.lease.next_steal:
            self._steal()
        self._dispatch()

    # --- answers --------------------------------------------------------------------------

    def handle_submitted(self, tag: Submitted, value: Any, error: BaseException | None) -> None:
        msg = tag.submit
        self.held.discard(msg.reply)
        if error is not None:
            msg.reply.fail(error)
            return
        verdict, job = value
        if (refused := submit_refusal(verdict, msg.kind)) is not None:
            msg.reply.fail(refused)
            return
        record.submitted(job, msg.caller.name, verdict)
        if verdict == "waiting":  # behind others: started in order when there is room
            self._promote()
        if verdict == "created":
            seen = seen_keys(msg.crawl, msg.targets)
            now = time.monotonic()
            live = LiveJob(job.id, msg.caller, msg.targets, now, crawl=msg.crawl, seen=seen)
            self.sched.add(live)
        msg.reply.ok((job, verdict == "reused"))
        self._dispatch()

    def handle_cancelled(self, tag: Cancelled, value: Any, error: BaseException | None) -> None:
        reply = tag.cancel.reply
        self.held.discard(reply)
        if error is not None:
            reply.fail(error)
            return
        changed, status = value
        if not changed:
            reply.fail(cancel_refusal(status))
            return
        reply.ok("cancelled")
        job = self.sched.jobs.get(tag.cancel.job_id)
        if job is not None and job.over:
            self._end(job)

    def handle_ran(self, tag: Ran, value: Any, error: BaseException | None) -> None:
        self.assigned.pop(tag.worker, None)
        job = self.sched.jobs.get(tag.job_id)
        if job is None or job.next_idx != tag.idx or not job.in_flight:
            self._dispatch()  # a stale answer (a worker restarted under it)
            return
        failure = error if isinstance(error, SiftError) else SiftError()
        attempt: Attempt = value if error is None else from_error(failure)
        metrics.BATCH_TARGET_SECONDS.observe(attempt.seconds)
        if attempt.busy:
            if self.sched.retry(job, time.monotonic()):
                self._store(lambda s: s.batch_target_pending(tag.job_id, tag.idx))
                if job.over:  # cancelled while it was busy
                    self._end(job)
                self._dispatch()
                return
            attempt = gave_up(attempt, self.cfg.retry_for)
        if attempt.links and not job.cancelled:  # a crawl's next targets, stored first
            first, new, blocked = job.grow(tag.idx, attempt.links)
            if new or blocked:
                grown = rows(new)
                self._store(lambda s: s.batch_grow(job.id, first, grown, blocked))
        args = (job.id, tag.idx, attempt.outcome, time.time(), self.cfg.max_bytes)
        self._store(lambda s: s.batch_finish_target(*args), Written(job.id, tag.idx, attempt))
        self._dispatch()  # the worker is free for another job meanwhile

    def handle_written(self, tag: Written, value: Any, error: BaseException | None) -> None:
        job = self.sched.jobs.get(tag.job_id)
        if job is None:
            return
        record.target(job.id, tag.idx, tag.attempt, value, error)
        self.sched.written(job, tag.attempt.outcome.status == "done", time.monotonic())
        _notify("target", job.id, tag.idx)
        if job.over:
            self._end(job)
        self._dispatch()

    def _end(self, job: LiveJob) -> None:
        self.sched.remove(job.id)
        record.ended(job)
        job_id, status = job.id, job.status
        self._store(lambda s: s.batch_finish_job(job_id, status), Ended(job_id))
        self._promote()
        self._gauges()
        self._steal()

    def handle_started(self, tag: Started, value: Any, error: BaseException | None) -> None:
        """The target is marked running (committed): only now does its worker run it, so a
        crash during its fetch always finds it in flight (tried once more, then `restart`).

        A cancel that came through another replica (one store): no further target starts;
        this one runs and is stored. A job taken over by another replica: its new runner
        runs the target. A store error does not hold the target back (it runs degraded)."""
        run = tag.run
        job = self.sched.jobs.get(run.job_id)
        if job is not None and value == "lost":
            self.sched.remove(job.id)
            record.event("batch_lost", job=job.id)
            self._steal()
        elif job is not None and value == "cancelled":
            job.cancelled = True
        held = self.assigned.get(tag.worker)
        if held is None or held[1] is not run:
            return  # its worker died meanwhile: the target was answered as unavailable
        if job is None or value == "lost":
            del self.assigned[tag.worker]
            self._dispatch()
            return
        try:
            held[0].tell(run)
        except pykka.ActorDeadError:
            run.reply.fail(Unavailable("batch worker restarted"))

    def handle_ended(self, tag: Ended, value: Any, error: BaseException | None) -> None:
        _notify("job", tag.job_id, value if error is None else "error")

    def handle_found(self, tag: Found, value: Resumed | None, error: BaseException | None) -> None:
        """Jobs the store gave this runner: those a stop interrupted ("restart": each goes on
        from its first target not yet stored, the one in flight at the stop tried again,
        once), those of a replica whose lease lapsed ("takeover"), and those waiting at a
        replica holding more than its workers ("steal"), those that waited their turn
        ("start")."""
        if tag.how == "steal":
            self.lease.stolen()
        if error is not None or value is None:
            if tag.how == "restart":
                log.warning("batch: the jobs a stop interrupted could not be read: %s", error)
            return
        if value.jobs or tag.how == "restart":
            self._adopt(value)
            record.found(tag.how, value)
            self._dispatch()

    def handle_beat(self, tag: Beat, value: Any, error: BaseException | None) -> None:
        """The lease renewed: a job held then but not renewed was taken over (this replica
        lost the database for longer than the lease): it stops here, its new runner goes on."""
        if error is not None:
            return
        for job_id in lost(tag.held, value):
            if job_id in self.sched.jobs:
                self.sched.remove(job_id)
                record.event("batch_lost", job=job_id)
        self._gauges()
        self._steal()

    def _promote(self) -> None:
        """Start the waiting Firecrawl jobs that fit the live-job caps now, here."""
        now, caps = time.time(), (self.cfg.jobs_per_caller, self.cfg.jobs_total)
        self._store(lambda s: s.batch_promote(caps, now), Found("start"))

    def _steal(self) -> None:
        """With room, ask a busier replica for its waiting jobs (when `Lease.steal` says)."""
        room = self.lease.steal(len(self.sched.jobs), time.monotonic())
        if room:
            now = time.time()
            self._store(lambda s: s.batch_steal(now, room), Found("steal"))
        self._alarm.set(self.lease.next_steal)

    def _beat(self) -> None:
        """Renew the lease of the jobs held; claim lapsed ones while there is room."""
        now, workers = time.time(), self.cfg.workers
        held = frozenset(self.sched.jobs)
        self._store(lambda s: s.batch_heartbeat(now, workers, list(held)), Beat(held))
        room = self.lease.beat(len(held), time.monotonic())
        if room:
            self._store(lambda s: s.batch_claim(RESTART, now, room), Found("takeover"))
        self._promote()  # a job that ended at a replica that died before starting the next
        self._steal()
        self._alarm.set(self.lease.next_beat)

    def _adopt(self, value: Resumed) -> None:
        """Hold `value`'s jobs as live, each from its first target not yet stored. A job
        that cannot be read back fails, saying why; the others go on."""
        taken = adopt(value, self.sched.jobs.keys(), read_job)
        for job_id, exc in taken.unreadable:
            record.unreadable(job_id, exc)
            self._store(failed(job_id, exc.reason), Ended(job_id))
        for live in taken.jobs:
            self.sched.add(live)
            if live.over:  # stopped after its last target was stored
                self._end(live)

    # --- scheduling -----------------------------------------------------------------------

    def _dispatch(self) -> None:
        """Give every idle worker the next ready target, round-robin over the live jobs."""
        now = time.monotonic()
        alive = {w.actor_urn: w for w in self._workers() if w.is_alive()}
        for urn in [u for u in self.assigned if u not in alive]:
            _, run = self.assigned.pop(urn)  # the worker died under it: try the target again
            run.reply.fail(Unavailable("batch worker restarted"))
        for urn, worker in alive.items():
            if urn in self.assigned:
                continue
            job = self.sched.take(now)
            if job is None:
                break
            idx = job.next_idx
            run = RunTarget(
                job.id, idx, job.caller, job.targets[idx], self.answer_to(Ran(job.id, idx, urn))
            )
            self.assigned[urn] = (worker, run)
            self._store(running(job.id, idx), Started(urn, run))
        wake = self.sched.next_wake(now)
        if not alive and self.sched.jobs:  # workers not started yet, or restarting
            wake = min(wake, now + WORKER_WAIT)
        self._alarm.set(min(wake, self._next_sweep, self.lease.due))
        self._gauges()

    def _sweep(self) -> None:
        now, ttl = time.time(), self.cfg.ttl
        self._store(lambda s: s.batch_sweep(now, ttl))
        self._next_sweep = time.monotonic() + SWEEP_EVERY
        self._alarm.set(self._next_sweep)

    def _store(self, fn: Callable[[Store], object], tag: object | None = None) -> None:
        """`fn(store)` on the store's thread; its answer comes back to `handle_<tag>`."""
        reply = self.answer_to(tag) if tag is not None else None
        try:
            self._store_ref().tell(StoreCall(fn, reply))
        except pykka.ActorDeadError:
            if reply is not None:
                reply.fail(Unavailable("the store is restarting"))

    def _gauges(self) -> None:
        metrics.BATCH_QUEUE_DEPTH.set(self.sched.depth())
        metrics.BATCH_TARGETS_INFLIGHT.set(len(self.assigned))

    def release(self) -> None:
        self._alarm.cancel()
        for reply in list(self.held):
            reply.fail(Unavailable("sift is shutting down; try again", retry_after=5))
        self.held.clear()
