"""GateActor: slots for fetches — global, per host and per caller — served first come first.

A request asks for all three slots at once. Waiters queue in arrival order; each time a slot
frees, the queue is scanned in order and every waiter whose three slots are free is admitted, so
a waiter held by its busy host does not hold up requests to other hosts. The asker enforces the
gate wait on its side and tells `Abandon` when it gives up: a waiter is removed, and a grant
that raced with the give-up is released — no slot leaks either way.
"""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass

from sift.actors.base import DEFERRED, SiftActor
from sift.core import metrics
from sift.core.answer import Answer
from sift.core.errors import Unavailable


@dataclass(frozen=True)
class Acquire:
    ticket: int
    host: str
    caller: str
    reply: Answer


@dataclass(frozen=True)
class Release:
    ticket: int


@dataclass(frozen=True)
class Abandon:
    ticket: int


@dataclass(frozen=True)
class GateStats:
    reply: Answer


class Gates:
    """The slot arithmetic, free of threads so it can be tested directly."""

    def __init__(self, global_: int, per_host: int, per_caller: int) -> None:
        self.limits = (global_, per_host, per_caller)
        self.held: dict[int, tuple[str, str]] = {}
        self.hosts: Counter[str] = Counter()
        self.callers: Counter[str] = Counter()
        self.waiting: dict[int, Acquire] = {}  # insertion order = arrival order

    def fits(self, host: str, caller: str) -> bool:
        g, h, c = self.limits
        return len(self.held) < g and self.hosts[host] < h and self.callers[caller] < c

    def take(self, req: Acquire) -> None:
        self.held[req.ticket] = (req.host, req.caller)
        self.hosts[req.host] += 1
        self.callers[req.caller] += 1

    def give_back(self, ticket: int) -> bool:
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

    def admit_waiters(self) -> list[Acquire]:
        admitted = []
        for ticket, req in list(self.waiting.items()):
            if self.fits(req.host, req.caller):
                del self.waiting[ticket]
                self.take(req)
                admitted.append(req)
        return admitted


class GateActor(SiftActor):
    def __init__(self, global_: int, per_host: int, per_caller: int) -> None:
        super().__init__()
        self.gates = Gates(global_, per_host, per_caller)

    def handle_acquire(self, msg: Acquire) -> object:
        self.gates.waiting[msg.ticket] = msg
        self._wake()
        return DEFERRED

    def handle_release(self, msg: Release) -> None:
        if self.gates.give_back(msg.ticket):
            self._wake()

    def handle_abandon(self, msg: Abandon) -> None:
        if self.gates.waiting.pop(msg.ticket, None) is None and self.gates.give_back(msg.ticket):
            self._wake()
        self._gauge()

    def handle_gate_stats(self, msg: GateStats) -> dict[str, int]:
        return {"in_flight": len(self.gates.held), "waiting": len(self.gates.waiting)}

    def _wake(self) -> None:
        for req in self.gates.admit_waiters():
            req.reply.ok(True)
        self._gauge()

    def _gauge(self) -> None:
        metrics.GATE_IN_FLIGHT.set(len(self.gates.held))
        metrics.GATE_WAITING.set(len(self.gates.waiting))

    def release(self) -> None:
        for req in self.gates.waiting.values():
            req.reply.fail(Unavailable("shutting down"))
        self.gates.waiting.clear()
