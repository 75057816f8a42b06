"""Single-flight on the event loop: concurrent requests for one key share one piece of work.

The work runs as its own task, so a requester that goes away (a closed connection, its own
deadline) does not cancel it for the others, and its result or error reaches every sharer.
Each requester waits with its own deadline; the work has only the server's.

The work is stopped only when nobody wants it any more: every requester left because its
client disconnected (`Waiter.gone`) or ran out of time on work that is not cached
(`Waiter.keep`), and none of them left with an answer that promised the work goes on (an
out-of-time answer for a cached document says "it goes on into the cache": that flight is kept).
At most `limit` pieces of work run at once: one more is `429 busy`.
"""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable, Hashable
from dataclasses import dataclass
from typing import Any

from sift.core.errors import Busy


@dataclass
class Waiter:
    """One requester of shared work. `gone` is set before it stops waiting because its
    client went away; a requester that stops waiting without it keeps the work going, when
    the work is worth keeping for it (`keep`: its answer will be cached). `kept` says that
    it left the work going."""

    gone: bool = False
    keep: bool = True
    kept: bool = False


@dataclass(eq=False)
class _Flight:
    task: asyncio.Task[Any]
    waiters: int = 0
    kept: bool = False  # a requester left with a promise that the work goes on


class Flights:
    def __init__(self, limit: int = 1024) -> None:
        self.limit = limit
        self._running: dict[Hashable, _Flight] = {}

    def running(self, key: Hashable) -> bool:
        return key in self._running

    async def run(
        self, key: Hashable, work: Callable[[], Awaitable[Any]], waiter: Waiter | None = None
    ) -> tuple[Any, bool]:
        """`(result, shared)`: `shared` is True when another request started the work."""
        flight = self._running.get(key)
        shared = flight is not None
        if flight is None:
            if len(self._running) >= self.limit:
                raise Busy("busy: too many documents in flight; retry shortly", retry_after=2)
            task = asyncio.ensure_future(work())
            flight = self._running[key] = _Flight(task)
            task.add_done_callback(lambda t: self._finished(key, t))
        flight.waiters += 1
        try:
            return await asyncio.shield(flight.task), shared
        except asyncio.CancelledError:
            if not flight.task.done() and (waiter is None or (waiter.keep and not waiter.gone)):
                flight.kept = True
                if waiter is not None:
                    waiter.kept = True
            raise
        finally:
            flight.waiters -= 1
            if not flight.waiters and not flight.kept and not flight.task.done():
                flight.task.cancel()  # every requester's client went away: nobody wants it

    async def cancel_all(self) -> None:
        """Cancel every piece of work still running and wait for it to end (shutdown)."""
        tasks = [f.task for f in self._running.values()]
        for task in tasks:
            task.cancel()
        if tasks:
            await asyncio.wait(tasks)

    def _finished(self, key: Hashable, task: asyncio.Task[Any]) -> None:
        flight = self._running.get(key)
        if flight is not None and flight.task is task:
            del self._running[key]
        if not task.cancelled():
            task.exception()  # retrieved: nobody may be left to await it
