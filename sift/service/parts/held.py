"""Calls to the store, and the writes and work held until the answer is out.

A write nobody awaits (`store_later`) is not sent at once: the store's thread would contend
with the loop for the GIL while the answer is rendered and written. It goes once the answer is
out, or before any later store call, which thus sees it. So every call to the store goes
through `HeldWrites`.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
from collections.abc import Callable
from typing import Any, TypeVar

import pykka

from sift.actors.bridge import ask, post
from sift.actors.store import StoreCall
from sift.core.errors import StoreUnavailable, Unavailable
from sift.store.protocol import Store

T = TypeVar("T")
log = logging.getLogger("sift.services")

# How long a call to the store may take before the request fails (not a hang).
STORE_DEADLINE = 30.0
# A write or work held for after the answer waits at most this long for the answer to go out,
# when nothing sends it sooner (a batch target, the CLI).
WRITE_DELAY = 0.05


class HeldWrites:
    """The store calls of one event loop, in order: the held writes go first, in the order
    they were made. Used on the loop only."""

    def __init__(self, store: Callable[[], pykka.ActorRef[Any]]) -> None:
        self._store = store  # a store actor, picked per call
        self._writes: list[tuple[Callable[[Store], Any], Callable[[Any], None]]] = []
        self._after: list[Callable[[], None]] = []  # other work held until the answer is out
        self._flush: asyncio.TimerHandle | None = None
        self.sent: set[asyncio.Task[None]] = set()  # held writes sent, their answer awaited

    async def store(self, fn: Callable[[Store], T]) -> T:
        """`fn(store)` on the store's thread: `await svc.held.store(lambda s: s.pdf_get(u, c))`."""
        self.flush()
        result: T = await ask(self._store(), lambda r: StoreCall(fn, r), STORE_DEADLINE)
        return result

    async def cache_or(self, default: T, fn: Callable[[Store], T]) -> T:
        """A call into the disposable cache whose failure is answered by `default`: the store
        says degraded (/healthz), and the answer goes on without the cache."""
        try:
            return await self.store(fn)
        except StoreUnavailable:
            return default

    def store_later(self, fn: Callable[[Store], T], then: Callable[[T], None]) -> None:
        """A store write nobody awaits, sent by `flush` — after each HTTP answer (`answered`),
        before any later store call, or after `WRITE_DELAY`. `then(result)` runs on the loop
        when it answers; a failure is logged (the request it served has been answered)."""
        self._writes.append((fn, then))
        self._hold()

    def store_tell(self, fn: Callable[[Store], object]) -> None:
        """A store write nobody waits for (bookkeeping such as marking documents used); sent
        after the held writes."""
        self.flush()
        with contextlib.suppress(pykka.ActorDeadError):
            self._store().tell(StoreCall(fn))

    def after_answer(self, fn: Callable[[], None]) -> None:
        """Run `fn` (on the loop) once the answer is out — after the next HTTP answer, or
        after `WRITE_DELAY` — for work that would contend with rendering the answer."""
        self._after.append(fn)
        self._hold()

    def _hold(self) -> None:
        if self._flush is None:
            self._flush = asyncio.get_running_loop().call_later(WRITE_DELAY, self.answered)

    def answered(self) -> None:
        """An answer is out: send the held store writes, then run the held work."""
        self.flush()
        if self._flush is not None:
            self._flush.cancel()
            self._flush = None
        after, self._after = self._after, []
        for fn in after:
            fn()

    def flush(self) -> None:
        """Send the held writes, in the order they were made."""
        writes, self._writes = self._writes, []
        for fn, then in writes:
            self._send(fn, then)

    def _send(self, fn: Callable[[Store], T], then: Callable[[T], None]) -> None:
        try:
            reply = post(self._store(), lambda r: StoreCall(fn, r))
        except Unavailable:
            log.warning("store unavailable: a write was not made")
            return

        async def finish() -> None:
            try:
                then(await reply.wait(STORE_DEADLINE))
            except Exception as exc:
                log.warning("store write failed: %s", type(exc).__name__)

        task = asyncio.ensure_future(finish())
        self.sent.add(task)
        task.add_done_callback(self.sent.discard)

    def stop(self) -> None:
        """At shutdown, when the loop may be gone: the held writes, without their follow-up."""
        for fn, _ in self._writes:
            with contextlib.suppress(pykka.ActorDeadError):
                self._store().tell(StoreCall(fn))
        self._writes.clear()
