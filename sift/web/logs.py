"""Logging: one JSON line per request, redacted by caller class.

A `fleet` caller's line may carry the host and the error message; a `restricted` caller's
line carries only the route, status, outcome, sizes and timings. No line carries page text,
titles or URLs for anyone, nor the error detail of a request fetched with the caller's own
headers (a jq error may quote the page). Tracebacks are logged only for bugs (500s).
"""

from __future__ import annotations

import json
import logging
import sys
import time
from typing import TYPE_CHECKING, Any

from sift.core.errors import SiftError

if TYPE_CHECKING:
    from sift.web.base import BaseHandler

access = logging.getLogger("sift.access")


class JsonFormatter(logging.Formatter):
    """Every log record as one JSON object; access records carry their fields in `fields`."""

    def format(self, record: logging.LogRecord) -> str:
        line: dict[str, Any] = {
            "ts": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime(record.created)),
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


def setup(level: int = logging.INFO) -> None:
    handler = logging.StreamHandler(sys.stderr)
    handler.setFormatter(JsonFormatter())
    root = logging.getLogger()
    root.handlers[:] = [handler]
    root.setLevel(level)
    logging.getLogger("tornado.access").setLevel(logging.WARNING)


def request_fields(h: BaseHandler) -> dict[str, Any]:
    """The fields of one request's log line, after redaction for the caller's class."""
    caller = h.caller
    fields: dict[str, Any] = {
        "event": "request",
        "caller": caller.name if caller else None,
        "class": caller.cls if caller else None,
        "route": h.route,
        "method": h.request.method,
        "status": h.get_status(),
        "outcome": h.error.outcome if h.error else h.trace.outcome,
        "cache": h.trace.cache,
        "bytes_in": h.trace.bytes,
        "bytes_out": h.bytes_out,
        "ms": round(h.request.request_time() * 1000, 1),
        "fetch_ms": round(h.trace.fetch_ms, 1),
    }
    if h.trace.upstream_status is not None:
        fields["upstream_status"] = h.trace.upstream_status
    if caller is not None and not caller.restricted:
        if h.trace.host:
            fields["host"] = h.trace.host
        if h.bug is not None:  # the reason of a 500 goes to the log, never into the answer
            fields["error"] = f"internal error: {h.bug}"
        elif h.error is not None and not h.trace.private:
            fields["error"] = h.error.message
    return fields


def log_request(h: BaseHandler) -> None:
    """Tornado's `log_function`: one line per request."""
    status = h.get_status()
    bug = status >= 500 and (h.error is None or type(h.error) is SiftError)
    level = logging.ERROR if bug else logging.INFO
    if getattr(h, "route", "") in ("/healthz", "/metrics"):  # a 503 there is a report
        level = logging.DEBUG if status < 400 else logging.WARNING
    access.log(level, "request", extra={"fields": request_fields(h)})
