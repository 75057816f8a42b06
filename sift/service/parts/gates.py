"""Fetch slots at the GateActor (global, per host, per caller), asked for ahead of the fetch.

A request asks for its slots first and waits for them later (`gate(…, ticket)`), so the gate's
round trip overlaps the cache lookup; a cache hit gives the ticket back unused.
"""

from __future__ import annotations

import contextlib
import itertools
import time
from collections.abc import AsyncIterator, Callable
from contextlib import asynccontextmanager
from typing import Any

import pykka

from sift.actors.bridge import Reply, post
from sift.actors.gate import Abandon, Acquire, Release
from sift.core import metrics
from sift.core.errors import Busy


class Gates:
    """Hands out `GateTicket`s; `wait` is how long a ticket may wait for its slots."""

    def __init__(self, gate: Callable[[], pykka.ActorRef[Any]], wait: float) -> None:
        self._gate = gate
        self._wait = wait
        self._tickets = itertools.count(1)

    def gate_ask(self, host: str, caller: str) -> GateTicket:
        """Ask for a fetch slot now and wait for it later (`gate(…, ticket)`), so the gate's
        round trip overlaps the cache lookup; a hit gives the ticket back with `drop()`."""
        return GateTicket(self._gate(), next(self._tickets), host, caller, self._wait)

    @asynccontextmanager
    async def gate(
        self, host: str, caller: str, ticket: GateTicket | None = None
    ) -> AsyncIterator[None]:
        """Hold a fetch slot (global, host, caller) for the body of the `async with`: the one
        `ticket` asked for, or one asked for now."""
        ticket = ticket or self.gate_ask(host, caller)
        await ticket.held()
        try:
            yield
        finally:
            ticket.drop()


class GateTicket:
    """One request for fetch slots at the GateActor, from `Acquire` to `Release` or `Abandon`.

    The gate wait counts from the ask. `drop()` gives back whatever the ticket has — its
    place in the queue, or the slots once granted (a grant racing the drop is released by
    the actor) — so a cache hit that asked ahead holds nothing and counts nothing."""

    def __init__(
        self, gate: pykka.ActorRef[Any], ticket: int, host: str, caller: str, wait: float
    ) -> None:
        self._gate = gate
        self._ticket = ticket
        self._until = time.monotonic() + wait
        self._state = "asked"  # → "held" → "dropped"
        self._reply: Reply[bool] = post(gate, lambda r: Acquire(ticket, host, caller, r))

    async def held(self) -> None:
        """Wait for the slots until the gate wait is over; then `Busy` (429)."""
        try:
            await self._reply.wait(max(0.0, self._until - time.monotonic()))
            self._state = "held"
        except TimeoutError:
            self.drop()
            metrics.GATE_BUSY.inc()
            raise Busy("busy: too many fetches in flight; retry shortly", retry_after=2) from None
        except BaseException:
            self.drop()
            raise

    def drop(self) -> None:
        """Give back the slots or the place in the queue; once, whatever comes after."""
        if self._state == "dropped":
            return
        message = Release(self._ticket) if self._state == "held" else Abandon(self._ticket)
        self._state = "dropped"
        self._reply.discard()
        with contextlib.suppress(pykka.ActorDeadError):
            self._gate.tell(message)
