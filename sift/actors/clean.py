"""CleanActor: owns one clean worker process and feeds it one task at a time.

The actor's thread blocks while its worker cleans — that is the point of giving each worker
its own actor: other actors and the event loop never wait on a cleaner. Requests beyond the
number of actors queue in the actors' inboxes; `CleanPool` (on the event loop) sends each
request to the actor with the fewest in flight.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

import pykka

from sift.actors.base import SiftActor
from sift.actors.bridge import Reply
from sift.clean.protocol import CleanResult, CleanTask, to_error
from sift.clean.worker import CleanWorker
from sift.core.answer import Answer
from sift.core.config import CleanConfig
from sift.core.errors import SiftError, Unavailable


@dataclass(frozen=True)
class CleanRequest:
    """Clean `task`; answered with a CleanResult or fail(SiftError)."""

    task: CleanTask
    reply: Answer


@dataclass(frozen=True)
class CleanStats:
    """Answered with {"pid": worker pid or None, "restarts": workers replaced so far}."""

    reply: Answer


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
        result = self.worker.run(msg.task, float(self.cfg.deadline))
        if result.error is not None:
            raise to_error(result.error)
        return result

    def handle_clean_stats(self, msg: CleanStats) -> dict[str, int | None]:
        return {"pid": self.worker.pid, "restarts": self.worker.restarts}

    def release(self) -> None:
        self.worker.close()


class CleanPool:
    """Sends each task to the CleanActor with the fewest requests in flight.

    Used on the event loop only, so it needs no locks. `refs` is read on every call, so a
    list that a supervisor updates in place (System.refs("clean")) stays current.
    """

    def __init__(
        self, refs: Sequence[pykka.ActorRef[Any]], timeout: float, queue: int = 16
    ) -> None:
        """
        Args:
            refs: the CleanActors.
            timeout: how long to wait for an answer before calling it a bug; it should
                exceed the cleaning deadline plus the time a request may queue.
            queue: tasks that may wait in one actor's inbox besides the one it runs; when
                every inbox is that full, a task is refused as busy (503, Retry-After).
        """
        self.refs = refs
        self.timeout = timeout
        self.queue = queue
        self.in_flight: dict[str, int] = {}
        self._turn = 0

    def _pick(self) -> pykka.ActorRef[Any]:
        refs = list(self.refs)
        if not refs:
            raise Unavailable("no clean workers are running", retry_after=1)
        self._turn += 1
        order = refs[self._turn % len(refs) :] + refs[: self._turn % len(refs)]
        ref = min(order, key=lambda r: self.in_flight.get(r.actor_urn, 0))
        if self.in_flight.get(ref.actor_urn, 0) > self.queue:
            raise Unavailable("busy: every cleaner is full; retry shortly", retry_after=2)
        return ref

    async def clean(self, task: CleanTask) -> CleanResult:
        """The cleaned document.

        Raises:
            SiftError: the cleaner's expected errors (400/422), or an internal error when
                no answer came within `timeout`.
            Unavailable: the chosen actor is being restarted, or every inbox is full.
        """
        ref = self._pick()
        urn = ref.actor_urn
        reply: Reply[CleanResult] = Reply()
        self.in_flight[urn] = self.in_flight.get(urn, 0) + 1
        try:
            try:
                ref.tell(CleanRequest(task, reply))
            except pykka.ActorDeadError:
                raise Unavailable(
                    "a clean worker is restarting; try again", retry_after=1
                ) from None
            try:
                return await reply.wait(self.timeout)
            except TimeoutError:
                raise SiftError("internal error: a clean worker did not answer in time") from None
        finally:
            self.in_flight[urn] -= 1
            if not self.in_flight[urn]:
                del self.in_flight[urn]
