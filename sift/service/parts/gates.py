"""Fetch slots (global, per host, per caller), kept on the event loop, asked for ahead of the
fetch.

A request asks for its slots first and waits for them later (`gate(…, ticket)`), so a wait for
a slot overlaps the cache lookup; a cache hit gives the ticket back unused. Every asker is on
the loop, and the slots are a few counters: kept here, asking costs no thread hop, where an
actor of their own cost a cold request three wake-ups of another thread (the ask, its answer,
the release) on its critical path.

Waiters queue in arrival order; each time a slot frees, the queue is scanned in order and every
waiter whose three slots are free is admitted, so a waiter held by its busy host does not hold
up requests to other hosts. A ticket given back gives back whatever it has: its place in the
queue, or its slots once granted (also a grant its asker had stopped waiting for).
"""

from __future__ import annotations

import asyncio
import itertools
import time
from collections import Counter
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager

from sift.core import metrics
from sift.core.errors import Busy


class Slots:
    """The slot arithmetic, free of the loop so it can be tested directly."""

    def __init__(self, global_: int, per_host: int, per_caller: int) -> None:
        self.limits = (global_, per_host, per_caller)
        self.held: dict[int, tuple[str, str]] = {}  # ticket → (host, caller)
        self.hosts: Counter[str] = Counter()
        self.callers: Counter[str] = Counter()
        self.waiting: dict[int, tuple[str, str]] = {}  # insertion order = arrival order

    def fits(self, host: str, caller: str) -> bool:
        g, h, c = self.limits
        return len(self.held) < g and self.hosts[host] < h and self.callers[caller] < c

    def take(self, ticket: int, host: str, caller: str) -> None:
        self.held[ticket] = (host, caller)
        self.hosts[host] += 1
        self.callers[caller] += 1

    def give_back(self, ticket: int) -> bool:
        """Free the slots `ticket` holds; False if it holds none (given back already)."""
        slot = self.held.pop(ticket, None)
        if slot is None:
            return False
        host, caller = slot
        self.hosts[host] -= 1
        self.callers[caller] -= 1
        if not self.hosts[host]:
            del self.hosts[host]
        if not self.callers[caller]:
            del self.callers[caller]
        return True

    def admit_waiters(self) -> list[int]:
        """The waiting tickets that fit now, in arrival order, each given its slots."""
        admitted = []
        for ticket, (host, caller) in list(self.waiting.items()):
            if self.fits(host, caller):
                del self.waiting[ticket]
                self.take(ticket, host, caller)
                admitted.append(ticket)
        return admitted


class Gates:
    """Hands out `GateTicket`s; `wait` is how long a ticket may wait for its slots. Used on
    the event loop only."""

    def __init__(self, global_: int, per_host: int, per_caller: int, wait: float) -> None:
        self.slots = Slots(global_, per_host, per_caller)
        self._wait = wait
        self._tickets = itertools.count(1)
        self._granted: dict[int, asyncio.Future[None]] = {}  # waiting tickets' grants

    def gate_ask(self, host: str, caller: str) -> GateTicket:
        """Ask for a fetch slot now and wait for it later (`gate(…, ticket)`), so the wait
        overlaps the cache lookup; a hit gives the ticket back with `drop()`."""
        return GateTicket(self, next(self._tickets), host, caller, self._wait)

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

    def stats(self) -> dict[str, int]:
        return {"in_flight": len(self.slots.held), "waiting": len(self.slots.waiting)}

    def ask(self, ticket: int, host: str, caller: str) -> asyncio.Future[None]:
        """Queue `ticket` for its slots; the future is done once they are granted."""
        granted = asyncio.get_running_loop().create_future()
        self._granted[ticket] = granted
        self.slots.waiting[ticket] = (host, caller)
        self._admit()
        return granted

    def give_back(self, ticket: int) -> None:
        """Give back `ticket`'s place in the queue, or its slots once granted."""
        self._granted.pop(ticket, None)
        if self.slots.waiting.pop(ticket, None) is None and self.slots.give_back(ticket):
            self._admit()
        self._gauge()

    def _admit(self) -> None:
        for ticket in self.slots.admit_waiters():
            granted = self._granted.pop(ticket, None)
            if granted is not None and not granted.done():
                granted.set_result(None)
        self._gauge()

    def _gauge(self) -> None:
        metrics.GATE_IN_FLIGHT.set(len(self.slots.held))
        metrics.GATE_WAITING.set(len(self.slots.waiting))


class GateTicket:
    """One request for fetch slots, from its ask to `drop()`.

    The gate wait counts from the ask. `drop()` gives back whatever the ticket has — its
    place in the queue, or the slots once granted — so a cache hit that asked ahead holds
    nothing and counts nothing."""

    def __init__(self, gates: Gates, ticket: int, host: str, caller: str, wait: float) -> None:
        self._gates = gates
        self._ticket = ticket
        self._until = time.monotonic() + wait
        self._dropped = False
        self._granted = gates.ask(ticket, host, caller)

    async def held(self) -> None:
        """Wait for the slots until the gate wait is over; then `Busy` (429)."""
        if self._granted.done():
            return
        try:
            await asyncio.wait_for(self._granted, max(0.0, self._until - time.monotonic()))
        except TimeoutError:
            self.drop()
            metrics.GATE_BUSY.inc()
            raise Busy("busy: too many fetches in flight; retry shortly", retry_after=2) from None
        except BaseException:
            self.drop()
            raise

    def drop(self) -> None:
        """Give back the slots or the place in the queue; once, whatever comes after."""
        if not self._dropped:
            self._dropped = True
            self._gates.give_back(self._ticket)
