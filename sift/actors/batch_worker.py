"""BatchWorker: runs one batch target at a time on the server's event loop; 1–2 of them share
the live jobs round-robin, so a batch holds at most 2 of the global fetch slots.

An actor blocks on its inbox, and the pipeline is a coroutine on the loop: so the worker
schedules the coroutine there (`run_coroutine_threadsafe`) and the outcome comes back to it as a
message, which it answers to the runner. It never blocks on the loop or on another actor.
"""

from __future__ import annotations

import asyncio
import contextlib
import inspect
from collections.abc import Awaitable, Callable, Coroutine
from concurrent.futures import Future
from dataclasses import dataclass

import pykka

from sift.actors.base import DEFERRED, SiftActor
from sift.batch.scheduler import Attempt, guarded
from sift.core.answer import Answer
from sift.core.callers import Caller
from sift.core.errors import Unavailable
from sift.core.request import FetchParams


@dataclass(frozen=True)
class RunTarget:
    job_id: str
    idx: int
    caller: Caller
    params: FetchParams
    reply: Answer  # answered with an Attempt


@dataclass(frozen=True)
class TargetRan:
    run: RunTarget
    attempt: Attempt | None
    error: BaseException | None = None


@dataclass(frozen=True)
class _Run:
    fut: Future[Attempt]
    msg: RunTarget
    coro: Coroutine[object, object, Attempt]


Execute = Callable[[Caller, FetchParams], Awaitable[Attempt]]


class BatchWorker(SiftActor):
    """Runs one target at a time on the event loop through `execute` (the pipeline)."""

    def __init__(
        self, loop: Callable[[], asyncio.AbstractEventLoop | None], execute: Execute
    ) -> None:
        super().__init__()
        self._loop = loop
        self._execute = execute
        self._running: dict[tuple[str, int], _Run] = {}

    def handle_run_target(self, msg: RunTarget) -> object:
        loop = self._loop()
        if loop is None or loop.is_closed():
            raise Unavailable("the server's event loop is not running")
        coro = guarded(lambda: self._execute(msg.caller, msg.params))
        try:
            fut = asyncio.run_coroutine_threadsafe(coro, loop)
        except RuntimeError:
            coro.close()
            raise Unavailable("the server's event loop is not running") from None
        self._running[(msg.job_id, msg.idx)] = _Run(fut, msg, coro)
        fut.add_done_callback(lambda f: self._finished(msg, f))
        return DEFERRED

    def _finished(self, msg: RunTarget, fut: Future[Attempt]) -> None:
        """Runs on the loop's thread: hand the outcome to this actor as a message."""
        if fut.cancelled():
            ran = TargetRan(msg, None, Unavailable("sift is shutting down"))
        elif fut.exception() is not None:
            ran = TargetRan(msg, None, fut.exception())
        else:
            ran = TargetRan(msg, fut.result())
        with contextlib.suppress(pykka.ActorDeadError):
            self.actor_ref.tell(ran)

    def handle_target_ran(self, msg: TargetRan) -> None:
        self._running.pop((msg.run.job_id, msg.run.idx), None)
        if msg.error is not None:
            msg.run.reply.fail(msg.error)
        else:
            msg.run.reply.ok(msg.attempt)

    def release(self) -> None:
        loop = self._loop()
        stopped = loop is None or not loop.is_running()
        for run in self._running.values():
            if loop is not None and not loop.is_closed():
                run.fut.cancel()
            if stopped and inspect.getcoroutinestate(run.coro) == inspect.CORO_CREATED:
                run.coro.close()  # the loop stopped before it started: never a dangling coroutine
            run.msg.reply.fail(Unavailable("sift is shutting down"))
        self._running.clear()
