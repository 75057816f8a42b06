"""Gate arithmetic (first come first served; a blocked host does not hold up others)."""

from __future__ import annotations

from typing import Any

from sift.actors.bridge import ThreadReply
from sift.actors.gate import Abandon, Acquire, GateActor, Gates, GateStats, Release


def _req(ticket, host, caller="c"):
    return Acquire(ticket, host, caller, ThreadReply())


def test_limits_and_fifo():
    g = Gates(global_=3, per_host=2, per_caller=10)
    for t in (1, 2):
        assert g.fits("a", "c")
        g.take(_req(t, "a"))
    assert not g.fits("a", "c")  # per host
    g.waiting[3] = _req(3, "a")
    g.waiting[4] = _req(4, "b")
    admitted = g.admit_waiters()
    assert [r.ticket for r in admitted] == [4]  # b is not held up by a's queue
    assert g.give_back(1)
    assert [r.ticket for r in g.admit_waiters()] == [3]
    assert not g.give_back(1)  # released once only


def test_actor_grants_releases_and_abandons():
    ref = GateActor.start(2, 1, 5)
    try:
        first, second, third = _req(1, "h"), _req(2, "h"), _req(3, "other")
        for r in (first, second, third):
            ref.tell(r)
        assert first.reply.wait(5) is True
        assert third.reply.wait(5) is True  # another host is not held up
        stats = ThreadReply[Any]()
        ref.tell(GateStats(stats))
        assert stats.wait(5) == {"in_flight": 2, "waiting": 1}
        ref.tell(Abandon(2))  # the waiter gives up: its place is freed
        ref.tell(Release(1))
        ref.tell(Release(3))
        stats = ThreadReply[Any]()
        ref.tell(GateStats(stats))
        assert stats.wait(5) == {"in_flight": 0, "waiting": 0}
    finally:
        ref.stop()
