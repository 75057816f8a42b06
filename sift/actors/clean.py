"""CleanActor: owns one clean worker process and cleans one task at a time in it.

The actor's thread blocks while its worker cleans — that is the point of giving each worker
its own actor: other actors and the event loop never wait on a cleaner. Tasks beyond the
number of actors wait in `CleanPool` (on the event loop), which gives each to an idle actor,
fairly between callers.
"""

from __future__ import annotations

import asyncio
import time
from collections import Counter, deque
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

import pykka

from sift.actors.base import SiftActor
from sift.actors.bridge import Reply
from sift.clean.data import jq_out_of_time_waiting
from sift.clean.protocol import CleanResult, CleanTask, to_error
from sift.clean.worker import CleanWorker
from sift.core.answer import Answer
from sift.core.config import CleanConfig
from sift.core.errors import SiftError, Unavailable


@dataclass(frozen=True)
class CleanRequest:
    """Clean `task` within `deadline` seconds (None: `[clean] deadline`); answered with a
    CleanResult or fail(SiftError)."""

    task: CleanTask
    reply: Answer
    deadline: float | None = None


@dataclass(frozen=True)
class CleanStats:
    """Answered with {"pid": worker pid or None, "restarts": workers replaced so far}."""

    reply: Answer


@dataclass(eq=False)
class _Job:
    """A task waiting in the CleanPool, then running; `answer` is what its asker awaits."""

    task: CleanTask
    caller: str
    deadline: float
    until: float | None
    started: Callable[[float], None] | None
    answer: asyncio.Future[CleanResult] = field(
        default_factory=lambda: asyncio.get_running_loop().create_future()
    )


class CleanActor(SiftActor):
    def __init__(
        self,
        cfg: CleanConfig,
        on_restart: Callable[[str], None] | None = None,
        *,
        worker_env: Mapping[str, str] | None = None,
    ) -> None:
        """
        Args:
            cfg: the `[clean]` section (deadline per task, when to replace a worker).
            on_restart: called with the reason when a worker is replaced (the metrics counter).
            worker_env: extra environment for the worker; tests enable their hooks here.
        """
        super().__init__()
        self.cfg = cfg
        self.worker = CleanWorker(
            on_restart=on_restart,
            env=worker_env,
            max_rss=cfg.max_rss,
            max_tasks=cfg.max_tasks,
        )

    def on_start(self) -> None:
        self.worker.start()

    def handle_clean_request(self, msg: CleanRequest) -> CleanResult:
        deadline = float(self.cfg.deadline) if msg.deadline is None else msg.deadline
        result = self.worker.run(msg.task, deadline)
        if result.error is not None:
            raise to_error(result.error)
        return result

    def handle_clean_stats(self, msg: CleanStats) -> dict[str, int | None]:
        return {"pid": self.worker.pid, "restarts": self.worker.restarts}

    def release(self) -> None:
        self.worker.close()


class CleanPool:
    """Hands each task to an idle CleanActor, fairly between callers.

    Tasks wait here, on the event loop, rather than in the actors' inboxes: an actor gets a
    task only when it is idle, so a task never waits behind another while a worker is free.
    When a worker frees, the next task is taken round robin over the callers with tasks
    waiting. While other callers wait, one caller gets at most `share` workers, all but one
    (`max(1, workers - 1)`); a caller alone may use them all, but never for jq programs, which
    it can make run for their whole bound: one caller's runaway programs never hold every
    worker, and another caller's page waits at most for a page in progress. A caller may have
    `share` × `queue` tasks waiting, all callers together `workers` × `queue`; one more is 503
    busy.

    Used on the event loop only, so it needs no locks. `refs` is read on every call, so a
    list that a supervisor updates in place (System.refs("clean")) stays current.
    """

    def __init__(
        self, refs: Sequence[pykka.ActorRef[Any]], timeout: float, queue: int = 16
    ) -> None:
        """
        Args:
            refs: the CleanActors.
            timeout: how long to wait for an actor's answer to a task it runs before calling
                it a bug; it should exceed the cleaning deadline twice (a retry) and restarts.
            queue: tasks that may wait per worker; beyond it a task is refused as busy (503,
                Retry-After).
        """
        self.refs = refs
        self.timeout = timeout
        self.queue = queue
        self.busy: dict[str, str] = {}  # actor urn → the caller whose task it runs
        self.held: Counter[str] = Counter()  # workers held, by caller
        self.waiting: dict[str, deque[_Job]] = {}  # by caller, in round-robin order

    @property
    def share(self) -> int:
        """The most workers one caller may hold at once."""
        return max(1, len(self.refs) - 1)

    async def clean(
        self,
        task: CleanTask,
        caller: str,
        deadline: float,
        *,
        until: float | None = None,
        started: Callable[[float], None] | None = None,
    ) -> CleanResult:
        """The cleaned document.

        Args:
            caller: who asks; the workers are shared fairly between callers.
            deadline: seconds the task may run in its worker.
            until: a monotonic time the task may not run past (its request's deadline).
            started: called with the task's time bound when a worker starts it.

        Raises:
            SiftError: the cleaner's expected errors (400/422), or an internal error when
                its actor did not answer within `timeout`.
            Unavailable: no actor can take it (being restarted), or too many tasks wait.
        """
        if not self.refs:
            raise Unavailable("no clean workers are running", retry_after=1)
        mine = self.waiting.get(caller, ())
        if len(mine) >= self.queue * self.share or self._waiting() >= self.queue * len(self.refs):
            raise Unavailable("busy: every cleaner is full; retry shortly", retry_after=2)
        job = _Job(task, caller, deadline, until, started)
        self.waiting.setdefault(caller, deque()).append(job)
        self._dispatch()
        try:
            return await job.answer
        except asyncio.CancelledError:
            if job.answer.done() and not job.answer.cancelled():
                job.answer.exception()  # answered just as its asker left: nobody reads it
            raise
        finally:  # cancelled while waiting: it never runs
            queued = self.waiting.get(caller)
            if queued is not None and job in queued:
                queued.remove(job)
                if not queued:
                    del self.waiting[caller]

    def _waiting(self) -> int:
        return sum(len(queued) for queued in self.waiting.values())

    def _dispatch(self) -> None:
        """Start waiting tasks on the idle workers, round robin over the callers."""
        for ref in list(self.refs):
            while ref.actor_urn not in self.busy:
                job = self._next()
                if job is None:
                    return
                if not self._start(ref, job):
                    break  # a dead actor, until its supervisor replaces it

    def _next(self) -> _Job | None:
        """The next task of the first caller (in turn) under its limit: its share while
        another caller waits too; alone, every worker, except for a jq program, which never
        takes more than the share (a caller can make one run for its whole bound, so a worker
        stays free for the next caller's pages)."""
        crowded = len(self.waiting) > 1
        for caller, queued in self.waiting.items():
            alone = not crowded and queued[0].task.jq is None
            if self.held[caller] < (len(self.refs) if alone else self.share):
                job = queued.popleft()
                del self.waiting[caller]
                if queued:  # its next task waits for its next turn, after the others'
                    self.waiting[caller] = queued
                return job
        return None

    def _start(self, ref: pykka.ActorRef[Any], job: _Job) -> bool:
        """Send `job` to the idle actor `ref`; False if that actor is dead."""
        bound = job.deadline
        if job.until is not None:
            bound = min(bound, round(job.until - time.monotonic(), 1))
        if bound <= 0:
            job.answer.set_exception(jq_out_of_time_waiting())
            return True
        reply: Reply[CleanResult] = Reply()
        try:
            ref.tell(CleanRequest(job.task, reply, bound))
        except pykka.ActorDeadError:
            job.answer.set_exception(
                Unavailable("a clean worker is restarting; try again", retry_after=1)
            )
            return False
        self.busy[ref.actor_urn] = job.caller
        self.held[job.caller] += 1
        if job.started is not None:
            job.started(bound)
        late = asyncio.get_running_loop().call_later(
            self.timeout,
            reply.fail,
            SiftError("internal error: a clean worker did not answer in time"),
        )
        reply.on_answer(lambda outcome: self._answered(ref.actor_urn, job, outcome, late))
        return True

    def _answered(
        self,
        urn: str,
        job: _Job,
        outcome: asyncio.Future[CleanResult],
        late: asyncio.TimerHandle,
    ) -> None:
        """The actor answered (or did not within `timeout`, a bug): the answer goes to its
        asker if it still waits, and the worker to the next task."""
        late.cancel()
        del self.busy[urn]
        self.held[job.caller] -= 1
        if not self.held[job.caller]:
            del self.held[job.caller]
        error = outcome.exception()  # read even when its asker stopped waiting
        if job.answer.done():
            pass
        elif error is not None:
            job.answer.set_exception(error)
        else:
            job.answer.set_result(outcome.result())
        self._dispatch()
