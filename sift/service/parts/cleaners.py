"""Cleaning in the worker processes, shared fairly between callers (`CleanPool`), each task
bounded by its request's deadline when it runs a jq program."""

from __future__ import annotations

from sift.actors.clean import CleanPool
from sift.clean.data import JQ_TIME
from sift.clean.protocol import CleanResult, CleanTask
from sift.clean.worker import STARTUP_DEADLINE
from sift.core.config import CleanConfig
from sift.service.parts.asker import ASKER, Asker
from sift.service.parts.roles import Roles

# Who asks for the work no request asks for (the CLI's cached reads, warm-ups).
SERVER = "sift"


class Cleaners:
    def __init__(self, cfg: CleanConfig, roles: Roles) -> None:
        self.cfg = cfg
        timeout = cfg.deadline * 2 + STARTUP_DEADLINE * 2 + 10  # a retry, restarts
        # The role's live list: the supervisor replaces a restarted worker in it.
        self._pool = CleanPool(roles.cleaners(), timeout, cfg.queue)

    async def clean(self, task: CleanTask) -> CleanResult:
        """Clean in a free worker process, shared fairly between the callers (`ASKER`).

        A jq program runs for at most `JQ_TIME` and never past its request's deadline: over
        it, a 422 that names its time bound."""
        asker = ASKER.get() or Asker(SERVER, None)
        deadline = float(self.cfg.deadline)
        if task.jq is None:
            return await self._pool.clean(task, asker.caller, deadline)

        def started(bound: float) -> None:
            asker.jq, asker.jq_waiting = bound, False

        asker.jq_waiting = True  # out of time while it waits: a 422 too, not a 504
        try:
            return await self._pool.clean(
                task, asker.caller, min(deadline, JQ_TIME), until=asker.until, started=started
            )
        finally:
            asker.jq, asker.jq_waiting = None, False
