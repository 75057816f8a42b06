"""A clock a test moves by hand, for the objects that take one (`clock=`): a TTL or a period
lapses when the test says, not after a sleep."""

from __future__ import annotations

import time


class Clock:
    def __init__(self, now: float = 1000.0) -> None:
        self.now = now

    def __call__(self) -> float:
        return self.now

    def advance(self, seconds: float) -> None:
        self.now += seconds


class Ahead:
    """The wall clock moved forward by hand: set as a running sift's `svc.clock`, a cached
    copy grows old past its TTL when the test says, without a sleep."""

    def __init__(self) -> None:
        self.offset = 0.0

    def __call__(self) -> float:
        return time.time() + self.offset

    def advance(self, seconds: float) -> None:
        self.offset += seconds
