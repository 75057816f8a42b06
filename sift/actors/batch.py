"""BatchRunner: the message plumbing around `sift.batch.scheduler` and `sift.batch.leasing`.

The runner owns the live jobs (with each job's caller, in memory), the caps and the one
round-robin; it writes through the StoreActor and hears back as answers tagged with what it
asked (`_Ran`, `_Written`, …), each to its own `handle_<tag>`. A worker (`batch_worker`) runs
one target at a time on the server's event loop: no actor ever blocks on another or on the loop.
"""

from __future__ import annotations

import contextlib
import logging
import secrets
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import pykka

from sift.actors.base import DEFERRED, SiftActor
from sift.actors.batch_worker import RunTarget
from sift.actors.store import StoreCall
from sift.batch.leasing import Lease, adopt, lost
from sift.batch.scheduler import (
    EXTRACT_JOBS,
    Attempt,
    CallerJobsBusy,
    ExtractJobsBusy,
    Frontier,
    JobsBusy,
    LiveJob,
    NoTargets,
    Scheduler,
    TooManyTargets,
    Unreadable,
    canonical,
    decode_targets,
    from_error,
    gave_up,
    idem_key,
    new_job_id,
)
from sift.core import metrics
from sift.core.answer import Answer
from sift.core.callers import Caller
from sift.core.config import BatchConfig
from sift.core.errors import Conflict, NotFound, SiftError, StoreUnavailable, Unavailable
from sift.core.request import FetchParams
from sift.core.types import BatchJob, BatchTarget, Resumed
from sift.fetch.scope import Crawl, normal
from sift.store.batch import EXTRACT, RESTART
from sift.store.protocol import Store

log = logging.getLogger("sift.batch")

SWEEP_EVERY = 600.0  # seconds between lease sweeps
WORKER_WAIT = 0.2  # seconds before a dispatch that found no worker alive looks again
Refs = Callable[[], list[pykka.ActorRef[Any]]]

# Test hook: called with (event, job id, detail) once a target ("target", idx) or a job
# ("job", status) is written. Never carries a URL.
LISTENERS: list[Callable[[str, str, object], None]] = []


@dataclass(frozen=True)
class Submit:
    """Answered with (BatchJob, reused)."""

    caller: Caller
    targets: tuple[FetchParams, ...]
    reply: Answer
    cap: int | None = None  # targets a job may hold; `[batch] targets_per_job` if None
    kind: str = "batch"  # batch | scrape | crawl | extract (the Firecrawl jobs)
    crawl: Frontier | None = None  # a crawl (`sift.fetch.scope.Crawl`): targets grow


@dataclass(frozen=True)
class Cancel:
    """Answered with the job's status, "cancelled"; 409 once it has finished."""

    job_id: str
    reply: Answer


@dataclass(frozen=True)
class BatchStats:
    reply: Answer


@dataclass(frozen=True)
class Wake:
    """A timer: a busy target may be tried again, or the leases are due for a sweep."""


# Tags of the answers the runner gets back (from the store and the workers): each goes to
# its `handle_<tag>(tag, value, error)`.
@dataclass(frozen=True)
class _Submitted:
    submit: Submit


@dataclass(frozen=True)
class _Cancelled:
    cancel: Cancel


@dataclass(frozen=True)
class _Ran:
    job_id: str
    idx: int
    worker: str


@dataclass(frozen=True)
class _Written:
    job_id: str
    idx: int
    attempt: Attempt


@dataclass(frozen=True)
class _Ended:
    job_id: str


@dataclass(frozen=True)
class _Restarted:
    pass


@dataclass(frozen=True)
class _Started:
    worker: str
    run: RunTarget  # told to the worker once its target is marked running


@dataclass(frozen=True)
class _Claimed:
    pass


@dataclass(frozen=True)
class _Stole:
    pass


@dataclass(frozen=True)
class _Beat:
    held: frozenset[str]  # the jobs the runner held when it renewed its lease


def _notify(event: str, job_id: str, detail: object) -> None:
    for listener in list(LISTENERS):
        listener(event, job_id, detail)


def _log(event: str, **fields: object) -> None:
    log.info(event, extra={"fields": {"event": event, **fields}})


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
        self._timer: threading.Timer | None = None
        self._timer_at = float("inf")
        self._next_sweep = 0.0

    def on_start(self) -> None:
        if self._owner():
            now = time.time()
            self._store(lambda s: s.batch_resume(RESTART, now), _Restarted())
            self._sweep()
            if self._shared:
                self.lease.start(time.monotonic())
                self._arm(self.lease.due)
        else:
            self._next_sweep = float("inf")

    # --- requests -------------------------------------------------------------------------

    def handle_submit(self, msg: Submit) -> object:
        if not msg.targets:
            raise NoTargets()
        cap = msg.cap or self.cfg.targets_per_job
        if len(msg.targets) > cap:
            raise TooManyTargets(len(msg.targets), cap)
        now = time.time()
        # Firecrawl jobs are never reused: each start is a new job there, as in Firecrawl.
        key = idem_key(msg.caller.name, msg.targets) if msg.kind == "batch" else secrets.token_hex()
        job = BatchJob(
            id=new_job_id(), caller=msg.caller.name, caller_class=msg.caller.cls,
            idem_key=key, status="queued", error=None, targets_total=len(msg.targets),
            targets_done=0, created_at=now, lease=now, nbytes=0, kind=msg.kind,
            spec=msg.crawl.encode() if msg.crawl is not None else None,
        )  # fmt: skip
        rows = [(p.url, canonical(p)) for p in msg.targets]
        caps = (self.cfg.jobs_per_caller, self.cfg.jobs_total)
        if msg.kind == EXTRACT:  # bounded on their own, as Firecrawl's extract jobs
            caps = (EXTRACT_JOBS, EXTRACT_JOBS)
        self.held.add(msg.reply)
        ttl = self.cfg.ttl
        self._store(lambda s: s.batch_submit(job, rows, caps, ttl), _Submitted(msg))
        return DEFERRED

    def handle_batch_stats(self, msg: BatchStats) -> tuple[int, int]:
        """(live jobs, targets running now): the batch queue as the usage calls report it."""
        return len(self.sched.jobs), sum(1 for j in self.sched.jobs.values() if j.in_flight)

    def handle_cancel(self, msg: Cancel) -> object:
        job = self.sched.jobs.get(msg.job_id)
        if job is not None:
            job.cancelled = True  # no further target starts; one in flight finishes and stores
        self.held.add(msg.reply)
        self._store(lambda s: s.batch_cancel(msg.job_id), _Cancelled(msg))
        return DEFERRED

    def handle_wake(self, msg: Wake) -> None:
        self._timer_at = float("inf")
        if time.monotonic() >= self._next_sweep:
            self._sweep()
        if time.monotonic() >= self.lease.next_beat:
            self._beat()
        if time.monotonic() >= self.lease.next_steal:
            self._steal()
        self._dispatch()

    # --- answers --------------------------------------------------------------------------

    def handle_submitted(self, tag: _Submitted, value: Any, error: BaseException | None) -> None:
        msg = tag.submit
        self.held.discard(msg.reply)
        if error is not None:
            msg.reply.fail(error)
            return
        verdict, job = value
        if verdict in ("caller_busy", "busy"):
            busy = ExtractJobsBusy() if msg.kind == EXTRACT else JobsBusy()
            msg.reply.fail(CallerJobsBusy() if verdict == "caller_busy" else busy)
            return
        metrics.batch_job(verdict)
        if verdict == "created":
            seen = {normal(p.url) for p in msg.targets}
            self.sched.add(LiveJob(job.id, msg.caller, msg.targets, time.monotonic(),
                                   crawl=msg.crawl, seen=seen))  # fmt: skip
        _log("batch_job", job=job.id, caller=msg.caller.name, verdict=verdict,
             targets=job.targets_total, status=job.status)  # fmt: skip
        msg.reply.ok((job, verdict == "reused"))
        self._dispatch()

    def handle_cancelled(self, tag: _Cancelled, value: Any, error: BaseException | None) -> None:
        reply = tag.cancel.reply
        self.held.discard(reply)
        if error is not None:
            reply.fail(error)
            return
        changed, status = value
        if not changed:
            reply.fail(
                NotFound("no such batch job") if status == "gone"
                else Conflict(f"batch job already finished ({status}); nothing to cancel")
            )  # fmt: skip
            return
        reply.ok("cancelled")
        job = self.sched.jobs.get(tag.cancel.job_id)
        if job is not None and job.over:
            self._end(job)

    def handle_ran(self, tag: _Ran, value: Any, error: BaseException | None) -> None:
        self.assigned.pop(tag.worker, None)
        job = self.sched.jobs.get(tag.job_id)
        if job is None or job.next_idx != tag.idx or not job.in_flight:
            self._dispatch()  # a stale answer (a worker restarted under it)
            return
        attempt: Attempt = value if error is None else from_error(_as_sift(error))
        metrics.BATCH_TARGET_SECONDS.observe(attempt.seconds)
        if attempt.busy:
            if self.sched.retry(job, time.monotonic()):
                self._store(lambda s: s.batch_target_pending(tag.job_id, tag.idx))
                if job.over:  # cancelled while it was busy
                    self._end(job)
                self._dispatch()
                return
            attempt = gave_up(attempt, self.cfg.retry_for)
        if job.crawl is not None and attempt.links and not job.cancelled:
            self._grow(job, job.crawl, tag.idx, attempt.links)
        args = (job.id, tag.idx, attempt.outcome, time.time(), self.cfg.max_bytes)
        self._store(lambda s: s.batch_finish_target(*args), _Written(job.id, tag.idx, attempt))
        self._dispatch()  # the worker is free for another job meanwhile

    def handle_written(self, tag: _Written, value: Any, error: BaseException | None) -> None:
        job = self.sched.jobs.get(tag.job_id)
        if job is None:
            return
        if isinstance(error, StoreUnavailable):
            log.warning("batch: a target's result was not stored: %s", error.reason)
        elif error is not None:
            log.error("batch: storing a target failed", exc_info=error)
        else:
            _, evicted = value
            if evicted:
                _log("batch_evicted", jobs=evicted)
        out = tag.attempt.outcome
        metrics.batch_target(tag.attempt.klass)
        metrics.BATCH_RESULT_BYTES.observe(out.nbytes)
        _log("batch_target", job=job.id, idx=tag.idx, outcome=tag.attempt.klass,
             code=out.code, bytes=out.nbytes, ms=round(tag.attempt.seconds * 1000, 1))  # fmt: skip
        self.sched.written(job, ok=out.status == "done")
        _notify("target", job.id, tag.idx)
        if job.over:
            self._end(job)
        self._dispatch()

    def _grow(self, job: LiveJob, crawl: Frontier, idx: int, links: tuple[str, ...]) -> None:
        """A crawl page's links become the job's next targets (stored before its outcome)."""
        room = crawl.limit - len(job.targets)
        new, blocked = crawl.grow(job.targets[idx], links, job.seen, room)
        if not new and not blocked:
            return
        first = len(job.targets)
        job.targets = job.targets + tuple(new)
        rows = [(p.url, canonical(p)) for p in new]
        self._store(lambda s: s.batch_grow(job.id, first, rows, blocked))

    def _end(self, job: LiveJob) -> None:
        self.sched.remove(job.id)
        status = job.status
        if status == "cancelled":
            metrics.batch_target("cancel", len(job.targets) - job.next_idx)
        metrics.batch_job(status)
        metrics.BATCH_JOB_SECONDS.observe(time.monotonic() - job.started)
        _log("batch_job_end", job=job.id, status=status, ok=job.ok, failed=job.failed,
             targets=len(job.targets))  # fmt: skip
        job_id = job.id
        self._store(lambda s: s.batch_finish_job(job_id, status), _Ended(job_id))
        self._gauges()
        self._steal()

    def handle_started(self, tag: _Started, value: Any, error: BaseException | None) -> None:
        """The target is marked running (committed): only now does its worker run it, so a
        crash during its fetch always finds it in flight (tried once more, then `restart`).

        A cancel that came through another replica (one store): no further target starts;
        this one runs and is stored. A job taken over by another replica: its new runner
        runs the target. A store error does not hold the target back (it runs degraded)."""
        run = tag.run
        job = self.sched.jobs.get(run.job_id)
        if job is not None and value == "lost":
            self.sched.remove(job.id)
            _log("batch_lost", job=job.id)
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

    def handle_ended(self, tag: _Ended, value: Any, error: BaseException | None) -> None:
        _notify("job", tag.job_id, value if error is None else "error")

    def handle_restarted(
        self, tag: _Restarted, value: Resumed | None, error: BaseException | None
    ) -> None:
        """The jobs a stop interrupted go on where they were: the next target is the first
        not yet stored (the one in flight at the stop is tried again, once)."""
        if error is not None or value is None:
            log.warning("batch: the jobs a stop interrupted could not be read: %s", error)
            return
        self._adopt(value)
        if value.jobs:
            metrics.batch_job("restart", len(value.jobs))
            log.warning("batch: %d job(s) were running when sift stopped; they go on",
                        len(value.jobs))  # fmt: skip
        self._dispatch()

    def handle_claimed(self, tag: _Claimed, value: Resumed | None, error: BaseException | None) -> None:
        """Jobs of a replica whose lease lapsed: this one runs them from here on."""
        if error is None and value is not None and value.jobs:
            self._adopt(value)
            metrics.BATCH_TAKEOVERS.inc(len(value.jobs))
            _log("batch_takeover", jobs=[j.id for j, _ in value.jobs])
            self._dispatch()

    def handle_beat(self, tag: _Beat, value: Any, error: BaseException | None) -> None:
        """The lease renewed: a job held then but not renewed was taken over (this replica
        lost the database for longer than the lease): it stops here, its new runner goes on."""
        if error is not None:
            return
        for job_id in lost(tag.held, value):
            if job_id in self.sched.jobs:
                self.sched.remove(job_id)
                _log("batch_lost", job=job_id)
        self._gauges()
        self._steal()

    def handle_stole(self, tag: _Stole, value: Resumed | None, error: BaseException | None) -> None:
        """Jobs that waited at a replica holding more than its workers: this one runs them."""
        self.lease.stolen()
        if error is None and value is not None and value.jobs:
            self._adopt(value)
            metrics.BATCH_STEALS.inc(len(value.jobs))
            _log("batch_steal", jobs=[j.id for j, _ in value.jobs])
            self._dispatch()

    def _steal(self) -> None:
        """With room, ask a busier replica for its waiting jobs (when `Lease.steal` says)."""
        room = self.lease.steal(len(self.sched.jobs), time.monotonic())
        if room:
            now = time.time()
            self._store(lambda s: s.batch_steal(now, room), _Stole())
        self._arm(self.lease.next_steal)

    def _beat(self) -> None:
        """Renew the lease of the jobs held; claim lapsed ones while there is room."""
        now, workers = time.time(), self.cfg.workers
        held = frozenset(self.sched.jobs)
        self._store(lambda s: s.batch_heartbeat(now, workers, list(held)), _Beat(held))
        room = self.lease.beat(len(held), time.monotonic())
        if room:
            self._store(lambda s: s.batch_claim(RESTART, now, room), _Claimed())
        self._steal()
        self._arm(self.lease.next_beat)

    def _adopt(self, value: Resumed) -> None:
        """Hold `value`'s jobs as live, each from its first target not yet stored. A job
        that cannot be read back fails, saying why; the others go on."""
        taken = adopt(value, self.sched.jobs.keys(), _live)
        for job_id, exc in taken.unreadable:
            log.warning("batch: job %s cannot be read back: %s", job_id, exc)
            metrics.batch_job("failed")
            self._store(_failed(job_id, exc.reason), _Ended(job_id))
        for live in taken.jobs:
            self.sched.add(live)
            if live.over:  # stopped after its last target was stored
                self._end(live)
        metrics.batch_target("restart", value.failed)

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
            run = RunTarget(job.id, idx, job.caller, job.targets[idx],
                            self.answer_to(_Ran(job.id, idx, urn)))  # fmt: skip
            self.assigned[urn] = (worker, run)
            self._store(_running(job.id, idx), _Started(urn, run))
        wake = self.sched.next_wake(now)
        if not alive and self.sched.jobs:  # workers not started yet, or restarting
            wake = min(wake if wake is not None else float("inf"), now + WORKER_WAIT)
        self._arm(min(wake if wake is not None else float("inf"), self._next_sweep,
                      self.lease.due))  # fmt: skip
        self._gauges()

    def _sweep(self) -> None:
        now, ttl = time.time(), self.cfg.ttl
        self._store(lambda s: s.batch_sweep(now, ttl))
        self._next_sweep = time.monotonic() + SWEEP_EVERY
        self._arm(self._next_sweep)

    def _arm(self, at: float) -> None:
        """Keep one timer, set for the earliest time something is due."""
        if at >= self._timer_at:
            return
        if self._timer is not None:
            self._timer.cancel()
        self._timer_at = at
        self._timer = threading.Timer(max(0.0, at - time.monotonic()), self._wake)
        self._timer.daemon = True
        self._timer.start()

    def _wake(self) -> None:
        with contextlib.suppress(pykka.ActorDeadError):
            self.actor_ref.tell(Wake())

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
        if self._timer is not None:
            self._timer.cancel()
        for reply in list(self.held):
            reply.fail(Unavailable("sift is shutting down; try again", retry_after=5))
        self.held.clear()


def _live(job: BatchJob, rows: list[BatchTarget]) -> LiveJob:
    """A stored job as the runner holds it: its targets read as its kind writes them, and a
    crawl's bounds and what it has seen, so that it grows on within them."""
    params = decode_targets(job.kind, [t.options for t in rows])
    try:  # a crawl stored before its bounds were (no spec) runs the targets it has
        crawl = Crawl.decode(job.spec) if job.spec is not None else None
        seen = {normal(p.url) for p in params}
    except ValueError as exc:  # its bounds, or a URL no longer read as one
        raise Unreadable(str(exc)) from None
    caller = Caller(job.caller, job.caller_class)
    return LiveJob(job.id, caller, params, time.monotonic(), crawl=crawl, seen=seen)


def _as_sift(error: BaseException) -> SiftError:
    return error if isinstance(error, SiftError) else SiftError()


def _running(job_id: str, idx: int) -> Callable[[Store], str]:
    """The store call that marks a target running, its arguments bound now (in a loop)."""
    return lambda s: s.batch_target_running(job_id, idx)


def _failed(job_id: str, reason: str) -> Callable[[Store], str]:
    """The store call that ends a job as failed with `reason`, bound now (in a loop)."""
    return lambda s: s.batch_finish_job(job_id, "failed", reason)
