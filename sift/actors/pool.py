"""PoolActor: 2 PDF slots, 4 waiting places, single-flight, one job per caller.

A PDF job (download + extraction) uses a child process (up to `[pdf] children` at once for a
long document, sharing its pages) and a few hundred MB, so only `slots` run at once. The
pool only schedules: the asker that gets a slot is told `Lead(ticket, slot)` and does the
work itself (the slot number picks its ExtractWorker), then tells `Done(ticket,
value | error)`; the pool hands that outcome to every follower and starts the next waiter.

Rules, in the order `Admit` applies them:
1. Join: a job for the same key (caller class, final URL) running or queued → follow it; no
   slot, no place, allowed even when the caller has another job in flight.
2. Caller: the caller already leads a job → `CallerBusy` (429) at once.
3. Slot: a free slot → `Lead`. Otherwise the queue full → `Unavailable("pdf workers busy")`
   (503, Retry-After 10) at once; else wait, first come first served, until a slot frees
   (`Lead`), `wait` passes (503), or the asker `Leave`s (its place is freed; a queued job
   that still has followers passes to the first of them). An asker that leaves before it
   read its `Lead` never does the work: its slot passes the same way, or frees.
4. A caller going away never cancels a job others share; an outcome is never cached.
5. A job nobody wants is stopped: when its leader is gone (`LeaderGone`: every client of
   that request disconnected before any answer) and no follower is left, the pool calls the job's
   `stop` (it kills the extraction's children), so the leader tells `Done` at once and the
   slot frees. A request answered out of time never abandons: it promised the extraction
   goes on into the page cache.
The plain `PoolCore` holds these rules (tested without threads); the actor adds timers.
"""

from __future__ import annotations

import contextlib
import itertools
import threading
from collections import deque
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

import pykka

from sift.actors.base import DEFERRED, SiftActor
from sift.core.answer import Answer
from sift.core.errors import CallerBusy, SiftError, Unavailable

_tokens = itertools.count(1)


@dataclass(frozen=True)
class Admit:
    """Ask for a slot for `key`. Answered `Lead(...)`, a shared outcome, or an error."""

    key: tuple[str, str]
    caller: str
    reply: Answer
    token: int = field(default_factory=lambda: next(_tokens))
    stop: Callable[[], None] | None = None  # stops the work when nobody wants it (rule 5)


@dataclass(frozen=True)
class Lead:
    """You hold slot `slot`: do the work, then tell `Done(ticket, …)` whatever happens."""

    ticket: int
    slot: int


@dataclass(frozen=True)
class Done:
    """The leader's outcome: `value` for every follower, or `error` raised to each."""

    ticket: int
    value: Any = None
    error: BaseException | None = None


@dataclass(frozen=True)
class Leave:
    """The asker with this `Admit.token` stopped waiting (told, never asked)."""

    token: int


@dataclass(frozen=True)
class LeaderGone:
    """The leader with this ticket no longer wants its job's outcome (told, never asked)."""

    ticket: int


@dataclass(frozen=True)
class PoolStatus:
    running: int
    queued: int
    followers: dict[tuple[str, str], int]


@dataclass(frozen=True)
class Status:
    reply: Answer


@dataclass(frozen=True)
class WaitOver:
    """Internal (from a timer): a queued job has waited `wait` seconds."""

    job: int


@dataclass(frozen=True)
class LeaseOver:
    """Internal (from a timer): a leader held its slot `lease` seconds without Done."""

    job: int


def workers_busy() -> Unavailable:
    return Unavailable("pdf workers busy", hint="retry", retry_after=10)


@dataclass(eq=False)
class Job:
    id: int
    key: tuple[str, str]
    caller: str
    ticket: int
    reply: Answer | None  # the leader's, until it is told Lead
    followers: dict[int, tuple[str, Answer]] = field(default_factory=dict)
    slot: int | None = None
    stop: Callable[[], None] | None = None
    abandoned: bool = False


class PoolCore:
    """The rules without threads: every method answers replies itself and says what changed."""

    def __init__(self, slots: int = 2, queue: int = 4) -> None:
        self.queue_cap = queue
        self.free = list(range(slots - 1, -1, -1))
        self.jobs: dict[tuple[str, str], Job] = {}
        self.by_id: dict[int, Job] = {}
        self.callers: dict[str, Job] = {}
        self.waiting: deque[Job] = deque()
        self._ids = itertools.count(1)

    def admit(self, msg: Admit) -> tuple[str, Job | None]:
        """("lead" | "follow" | "queued", job); raises CallerBusy or Unavailable."""
        job = self.jobs.get(msg.key)
        if job is not None:
            job.followers[msg.token] = (msg.caller, msg.reply)
            return "follow", job
        if msg.caller in self.callers:
            raise CallerBusy("busy: another PDF of yours is being processed", retry_after=5)
        if not self.free and len(self.waiting) >= self.queue_cap:
            raise workers_busy()
        job = Job(next(self._ids), msg.key, msg.caller, msg.token, msg.reply, stop=msg.stop)
        self.jobs[msg.key] = self.callers[msg.caller] = self.by_id[job.id] = job
        if self.free:
            self._start(job)
            return "lead", job
        self.waiting.append(job)
        return "queued", job

    def done(self, ticket: int, value: Any, error: BaseException | None) -> list[Job]:
        """Answer the followers of the job led by `ticket`; the jobs started in its place."""
        job = next(
            (j for j in self.by_id.values() if j.ticket == ticket and j.slot is not None), None
        )
        if job is None:
            return []  # unknown, or its lease already ran out
        for _caller, reply in job.followers.values():
            if error is not None:
                reply.fail(error)
            else:
                reply.ok(value)
        return self._finish(job)

    def leave(self, token: int) -> list[Job]:
        """An asker stopped waiting: drop a follower, or free (or pass on) its place. A leader
        that leaves has not read its `Lead` (it stopped waiting first), so nobody would do a
        started job: its slot passes to the first follower, or frees. The jobs started."""
        for job in list(self.by_id.values()):
            if token in job.followers:
                del job.followers[token]
                self._stop_if_unwanted(job)
                return []
            if job.ticket == token:
                return self._drop_leader(job)
        return []

    def abandon(self, ticket: int) -> None:
        """The running job's leader left without an answer: stop it unless followed."""
        for job in self.by_id.values():
            if job.ticket == ticket and job.slot is not None:
                job.abandoned = True
                self._stop_if_unwanted(job)
                return

    def _stop_if_unwanted(self, job: Job) -> None:
        if job.abandoned and not job.followers and job.slot is not None and job.stop:
            stop, job.stop = job.stop, None
            stop()  # the leader's Done follows, and frees the slot

    def expire(self, job_id: int) -> None:
        """A queued job waited too long: it and its followers get 503."""
        job = self.by_id.get(job_id)
        if job is None or job.slot is not None:
            return
        self.waiting.remove(job)
        self._forget(job)
        for reply in [job.reply, *(r for _, r in job.followers.values())]:
            if reply is not None:
                reply.fail(workers_busy())

    def lease_over(self, job_id: int) -> list[Job]:
        """A leader never said Done: fail its followers and take its slot back."""
        job = self.by_id.get(job_id)
        if job is None or job.slot is None:
            return []
        for _caller, reply in job.followers.values():
            reply.fail(SiftError("internal error: pdf job lost"))
        return self._finish(job)

    def status(self) -> PoolStatus:
        running = sum(1 for j in self.by_id.values() if j.slot is not None)
        followers = {k: len(j.followers) for k, j in self.jobs.items()}
        return PoolStatus(running=running, queued=len(self.waiting), followers=followers)

    def pending(self) -> list[Answer]:
        """Every reply still waiting for an answer (to fail them at shutdown)."""
        out: list[Answer] = []
        for job in self.by_id.values():
            out += [r for _, r in job.followers.values()]
            if job.slot is None and job.reply is not None:
                out.append(job.reply)
        return out

    def _start(self, job: Job) -> None:
        job.slot = self.free.pop()
        reply, job.reply = job.reply, None
        if reply is not None:
            reply.ok(Lead(ticket=job.ticket, slot=job.slot))

    def _finish(self, job: Job) -> list[Job]:
        assert job.slot is not None
        self.free.append(job.slot)
        self._forget(job)
        started = []
        while self.free and self.waiting:
            nxt = self.waiting.popleft()
            self._start(nxt)
            started.append(nxt)
        return started

    def _drop_leader(self, job: Job) -> list[Job]:
        """The leader of `job` left before it led: the first follower leads in its place (told
        `Lead` now when the job holds a slot, else when it gets one); none, the job ends. The
        jobs started in its place."""
        if self.callers.get(job.caller) is job:
            del self.callers[job.caller]
        if not job.followers:
            if job.slot is not None:
                return self._finish(job)
            self.waiting.remove(job)
            self._forget(job)
            return []
        token, (caller, reply) = next(iter(job.followers.items()))
        del job.followers[token]
        job.ticket, job.caller, job.reply = token, caller, reply
        job.stop = None  # the first leader's; the new one's is not known (it is never stopped)
        self.callers.setdefault(caller, job)
        if job.slot is not None:
            job.reply = None
            reply.ok(Lead(ticket=token, slot=job.slot))
        return []

    def _forget(self, job: Job) -> None:
        self.by_id.pop(job.id, None)
        if self.jobs.get(job.key) is job:
            del self.jobs[job.key]
        if self.callers.get(job.caller) is job:
            del self.callers[job.caller]


class PoolActor(SiftActor):
    """PoolCore behind an inbox; waits and leases run out on timer threads that tell it."""

    def __init__(self, slots: int = 2, queue: int = 4, wait: float = 20.0, lease: float = 600.0):
        super().__init__()
        self.core = PoolCore(slots, queue)
        self.wait = wait
        self.lease = lease
        self._timers: dict[int, threading.Timer] = {}

    def handle_admit(self, msg: Admit) -> object:
        kind, job = self.core.admit(msg)
        assert job is not None
        if kind == "lead":
            self._timer(job.id, self.lease, LeaseOver(job.id))
        elif kind == "queued":
            self._timer(job.id, self.wait, WaitOver(job.id))
        return DEFERRED  # answered by the core (Lead now, or later)

    def handle_done(self, msg: Done) -> None:
        self._sync(self.core.done(msg.ticket, msg.value, msg.error))

    def handle_leave(self, msg: Leave) -> None:
        self._sync(self.core.leave(msg.token))

    def handle_leader_gone(self, msg: LeaderGone) -> None:
        self.core.abandon(msg.ticket)

    def handle_wait_over(self, msg: WaitOver) -> None:
        self.core.expire(msg.job)
        self._sync([])

    def handle_lease_over(self, msg: LeaseOver) -> None:
        self._sync(self.core.lease_over(msg.job))

    def handle_status(self, msg: Status) -> PoolStatus:
        return self.core.status()

    def _sync(self, started: list[Job]) -> None:
        """Timers follow the jobs: none for a job gone, a lease for a job just started."""
        for job_id in [i for i in self._timers if i not in self.core.by_id]:
            self._cancel(job_id)
        for job in started:
            self._cancel(job.id)
            self._timer(job.id, self.lease, LeaseOver(job.id))

    def _timer(self, job_id: int, seconds: float, msg: object) -> None:
        t = threading.Timer(seconds, self._tell, args=(msg,))
        t.daemon = True
        self._timers[job_id] = t
        t.start()

    def _tell(self, msg: object) -> None:
        with contextlib.suppress(pykka.ActorDeadError):
            self.actor_ref.tell(msg)

    def _cancel(self, job_id: int) -> None:
        t = self._timers.pop(job_id, None)
        if t is not None:
            t.cancel()

    def release(self) -> None:
        for job_id in list(self._timers):
            self._cancel(job_id)
        for reply in self.core.pending():
            reply.fail(Unavailable("sift is shutting down", hint="retry", retry_after=10))
