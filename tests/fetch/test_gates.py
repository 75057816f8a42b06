"""Gate arithmetic (first come first served; a blocked host does not hold up others)."""

from __future__ import annotations

from sift.service.parts.gates import Slots


def test_limits_and_fifo():
    g = Slots(global_=3, per_host=2, per_caller=10)
    for t in (1, 2):
        assert g.fits("a", "c")
        g.take(t, "a", "c")
    assert not g.fits("a", "c")  # per host
    g.waiting[3] = ("a", "c")
    g.waiting[4] = ("b", "c")
    assert g.admit_waiters() == [4]  # b is not held up by a's queue
    assert g.give_back(1)
    assert g.admit_waiters() == [3]
    assert not g.give_back(1)  # released once only


def test_the_global_and_caller_limits():
    g = Slots(global_=2, per_host=5, per_caller=1)
    g.take(1, "a", "c")
    assert not g.fits("b", "c")  # the caller's one slot
    assert g.fits("b", "d")
    g.take(2, "b", "d")
    assert not g.fits("x", "e")  # all slots
    assert g.give_back(2) and g.fits("x", "e")
