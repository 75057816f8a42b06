"""A clock a test moves by hand, for the objects that take one (`clock=`): a TTL or a period
lapses when the test says, not after a sleep."""

from __future__ import annotations


class Clock:
    def __init__(self, now: float = 1000.0) -> None:
        self.now = now

    def __call__(self) -> float:
        return self.now

    def advance(self, seconds: float) -> None:
        self.now += seconds
