"""Alarm: one timer for an actor, set for the earliest time something is due; then it tells
the actor a message (from the timer's thread: the actor's inbox stays the only way in)."""

from __future__ import annotations

import contextlib
import math
import threading
import time
from typing import Any

import pykka


class Alarm:
    def __init__(self, ref: pykka.ActorRef[Any], message: Any) -> None:
        self._ref = ref
        self._message = message
        self._timer: threading.Timer | None = None
        self._at = math.inf

    def set(self, at: float) -> None:
        """Ring at `at` (monotonic seconds), unless it rings earlier already."""
        if at >= self._at:
            return
        if self._timer is not None:
            self._timer.cancel()
        self._at = at
        self._timer = threading.Timer(max(0.0, at - time.monotonic()), self._ring)
        self._timer.daemon = True
        self._timer.start()

    def rang(self) -> None:
        """The actor got the message: the next `set` arms anew."""
        self._at = math.inf

    def cancel(self) -> None:
        if self._timer is not None:
            self._timer.cancel()

    def _ring(self) -> None:
        with contextlib.suppress(pykka.ActorDeadError):
            self._ref.tell(self._message)
