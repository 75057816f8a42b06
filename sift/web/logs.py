"""Logging: one JSON line per request, redacted by caller class.

A `fleet` caller's line may carry the host and the error message; a `restricted` caller's
line carries only the route, status, outcome, sizes and timings. No line carries page text,
titles or URLs for anyone, nor the error detail of a request fetched with the caller's own
headers (a jq error may quote the page). Tracebacks are logged only for bugs (500s).
"""

from __future__ import annotations

import contextlib
import json
import logging
import sys
import threading
import time
from collections import deque
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, TextIO

from sift.core.errors import Blocked, SiftError

if TYPE_CHECKING:
    from sift.core.callers import Caller
    from sift.service.document import Trace
    from sift.web.base import BaseHandler

access = logging.getLogger("sift.access")
QUEUED_LINES = 10_000  # lines waiting for stderr; past this they are dropped, not waited for
WRITE_EVERY = 0.05  # seconds between the writer's batches


class JsonFormatter(logging.Formatter):
    """Every log record as one JSON object; access records carry their fields in `fields`."""

    _second = -1
    _stamp = ""

    def format(self, record: logging.LogRecord) -> str:
        second = int(record.created)
        if second != self._second:  # one timestamp string per second, not per line
            self._second = second
            self._stamp = time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime(second))
        line: dict[str, Any] = {
            "ts": self._stamp,
            "level": record.levelname.lower(),
            "logger": record.name,
        }
        fields = getattr(record, "fields", None)
        if fields:
            line.update(fields)
        else:
            line["msg"] = record.getMessage()
        if record.exc_info:
            line["traceback"] = self.formatException(record.exc_info)
        return json.dumps(line, ensure_ascii=False)


class LineWriter(logging.Handler):
    """Log lines written to stderr by a thread of their own, in batches: formatting and the
    write (to a pipe that may be full) never run on the event loop, and a busy server wakes
    the writer a few times a second, not once per line. Past `QUEUED_LINES` waiting, a line
    is dropped rather than waited for."""

    def __init__(self, stream: TextIO, every: float = WRITE_EVERY) -> None:
        super().__init__()
        self.stream = stream
        self.every = every
        self.waiting: deque[logging.LogRecord] = deque()
        self.stopped = threading.Event()
        self.thread = threading.Thread(target=self._run, name="log-writer", daemon=True)

    def emit(self, record: logging.LogRecord) -> None:
        if len(self.waiting) < QUEUED_LINES:
            self.waiting.append(record)

    def start(self) -> LineWriter:
        self.thread.start()
        return self

    def stop(self) -> None:
        """Write what is waiting, then stop."""
        self.stopped.set()
        self.thread.join(10)
        self._write()

    def _run(self) -> None:
        while not self.stopped.wait(self.every):
            self._write()

    def _write(self) -> None:
        lines = []
        while self.waiting:
            record = self.waiting.popleft()
            try:
                lines.append(self.format(record))
            except Exception:  # a record that cannot be formatted is reported, as logging does
                self.handleError(record)
        if lines:
            with contextlib.suppress(OSError, ValueError):  # stderr closed: nowhere to write
                self.stream.write("\n".join(lines) + "\n")
                self.stream.flush()


def setup(level: int = logging.INFO) -> LineWriter:
    """JSON lines on stderr, written by a thread of their own; `stop()` the writer returned
    to write the lines still waiting."""
    logging._srcfile = None  # no caller lookup per record: a line names no source file
    logging.logThreads = logging.logProcesses = logging.logMultiprocessing = False
    writer = LineWriter(sys.stderr)
    writer.setFormatter(JsonFormatter())
    root = logging.getLogger()
    root.handlers[:] = [writer]
    root.setLevel(level)
    logging.getLogger("tornado.access").setLevel(logging.WARNING)
    return writer.start()


def request_fields(h: BaseHandler) -> dict[str, Any]:
    """The fields of one request's log line, after redaction for the caller's class."""
    t = h.trace
    error = None
    if h.bug is not None:  # the reason of a 500 goes to the log, never into the answer
        error = f"internal error: {h.bug}"
    elif h.error is not None and not t.private:
        error = h.error.message
    served = Served(
        h.route,
        h.request.method or "",
        h.get_status(),
        h.error.outcome if h.error else t.outcome,
        h.bytes_out,
        h.request.request_time() * 1000,
        error,
    )
    fields = line_fields(h.caller, t, served)
    if isinstance(h.error, Blocked) and h.error.allow:  # for the operator, not in the answer
        fields["allowed_by"] = h.error.allow
    return fields


@dataclass(frozen=True)
class Served:
    """How a request was answered, as its log line says."""

    route: str
    method: str
    status: int
    outcome: str
    bytes_out: int
    ms: float
    error: str | None = None


def line_fields(caller: Caller | None, t: Trace, served: Served) -> dict[str, Any]:
    """A request's log line: what every caller's line has, and for a caller who is not
    `restricted`, the host and the error."""
    fields: dict[str, Any] = {
        "event": "request",
        "caller": caller.name if caller else None,
        "class": caller.cls if caller else None,
        "route": served.route,
        "method": served.method,
        "status": served.status,
        "outcome": served.outcome,
        "cache": t.cache,
        "bytes_in": t.bytes,
        "bytes_out": served.bytes_out,
        "ms": round(served.ms, 1),
        "fetch_ms": round(t.fetch_ms, 1),
    }
    if t.upstream_status is not None:
        fields["upstream_status"] = t.upstream_status
    if caller is not None and not caller.restricted:
        if t.host:
            fields["host"] = t.host
        if served.error is not None:
            fields["error"] = served.error
    return fields


def log_request(h: BaseHandler) -> None:
    """Tornado's `log_function`: one line per request."""
    status = h.get_status()
    bug = status >= 500 and (h.error is None or type(h.error) is SiftError)
    level = logging.ERROR if bug else logging.INFO
    if getattr(h, "route", "") in ("/healthz", "/metrics"):  # a 503 there is a report
        level = logging.DEBUG if status < 400 else logging.WARNING
    access.log(level, "request", extra={"fields": request_fields(h)})
