"""The one bounded poll of the tests: wait on a condition, never on a timed guess."""

from __future__ import annotations

import time
from collections.abc import Callable
from typing import TypeVar

T = TypeVar("T")


def until(
    check: Callable[[], T | None],
    what: str = "the condition",
    timeout: float = 20.0,
    every: float = 0.05,
) -> T:
    """Call `check` until it answers something truthy, and return that. The timeout is a bound
    on a wait, not a timing assertion: past it the test fails, naming `what`."""
    deadline = time.monotonic() + timeout
    while True:
        got = check()
        if got:
            return got
        assert time.monotonic() < deadline, f"timed out waiting: {what}"
        time.sleep(every)
