"""Every log record of a test's sift, as the JSON lines `sift serve` writes (`captured`)."""

from __future__ import annotations

import json
import logging
import threading
from collections.abc import Iterator
from typing import Any

import pytest

from sift.web.logs import JsonFormatter


class Capture(logging.Handler):
    def __init__(self) -> None:
        super().__init__(logging.DEBUG)
        self.lines: list[str] = []
        self.arrived = threading.Condition()
        self.setFormatter(JsonFormatter())

    def emit(self, record: logging.LogRecord) -> None:
        self.lines.append(self.format(record))
        with self.arrived:
            self.arrived.notify_all()

    def requests(self) -> list[dict[str, Any]]:
        """The request lines so far, decoded."""
        return [json.loads(x) for x in self.lines if '"event": "request"' in x]

    def wait_requests(self, n: int) -> None:
        """The request line is written just after the response: wait for it."""
        with self.arrived:
            self.arrived.wait_for(lambda: len(self.requests()) >= n, timeout=10)


@pytest.fixture
def captured() -> Iterator[Capture]:
    cap = Capture()
    root = logging.getLogger()
    old = root.level
    root.addHandler(cap)
    root.setLevel(logging.DEBUG)
    yield cap
    root.removeHandler(cap)
    root.setLevel(old)
