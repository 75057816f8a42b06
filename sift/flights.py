"""Single-flight on the event loop: concurrent requests for one key share one piece of work.

The work runs as its own task, so a requester that goes away (a closed connection, a timeout)
does not cancel it for the others, and its result or error reaches every sharer. At most
`limit` pieces of work run at once: one more is `429 busy`.
"""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable, Hashable
from typing import Any

from sift.errors import Busy


class Flights:
    def __init__(self, limit: int = 1024) -> None:
        self.limit = limit
        self._running: dict[Hashable, asyncio.Task[Any]] = {}

    def running(self, key: Hashable) -> bool:
        return key in self._running

    async def run(self, key: Hashable, work: Callable[[], Awaitable[Any]]) -> tuple[Any, bool]:
        """`(result, shared)`: `shared` is True when another request started the work."""
        task = self._running.get(key)
        shared = task is not None
        if task is None:
            if len(self._running) >= self.limit:
                raise Busy("busy: too many documents in flight; retry shortly", retry_after=2)
            task = asyncio.ensure_future(work())
            self._running[key] = task
            task.add_done_callback(lambda t: self._finished(key, t))
        return await asyncio.shield(task), shared

    async def cancel_all(self) -> None:
        """Cancel every piece of work still running and wait for it to end (shutdown)."""
        tasks = list(self._running.values())
        for task in tasks:
            task.cancel()
        if tasks:
            await asyncio.wait(tasks)

    def _finished(self, key: Hashable, task: asyncio.Task[Any]) -> None:
        if self._running.get(key) is task:
            del self._running[key]
        if not task.cancelled():
            task.exception()  # retrieved: nobody may be left to await it
