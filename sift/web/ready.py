"""Ready answers at the edge: a `/v1/fetch` or Firecrawl scrape whose exact body was answered
before from a fresh cached page is answered here, before any handler, with the bytes kept then
(`service/parts/ready.py`) — the same status, headers and body the handler would write, the same
log line and metrics. Anything else (a miss, another route, a body that is not small and
plainly framed) goes on to the application unchanged, the body replayed to it.
"""

from __future__ import annotations

import asyncio
import logging
import time
from collections.abc import Awaitable
from typing import Any

import tornado
import tornado.httputil

from sift.core import metrics
from sift.core.callers import Callers
from sift.core.request import FetchParams
from sift.service.document import Document, Trace
from sift.service.parts.ready import Ready, expiry, memoizable
from sift.service.services import Services
from sift.service.steps import recall
from sift.web.base import JSON_CAP, BaseHandler
from sift.web.logs import Served, access, line_fields

ROUTES = frozenset({"/v1/fetch", "/v2/scrape", "/v1/scrape"})
_SERVER = f"TornadoServer/{tornado.version}"
_OK = tornado.httputil.ResponseStartLine("HTTP/1.1", 200, "OK")


def wanted(start_line: Any, headers: tornado.httputil.HTTPHeaders, svc: Services) -> bool:
    """A request that may have a ready answer: a small POST to the route with a length."""
    if not len(svc.answers) or start_line.method != "POST" or start_line.path not in ROUTES:
        return False
    length = headers.get("Content-Length", "")
    return (
        length.isdigit()
        and int(length) <= JSON_CAP
        and "Transfer-Encoding" not in headers
        and "Expect" not in headers
        and "Origin" not in headers  # a browser's: its CORS headers are the handler's
    )


class ReadyDelegate(tornado.httputil.HTTPMessageDelegate):
    """Collects a small body, then answers it ready or replays the request to `inner`."""

    def __init__(
        self,
        inner: tornado.httputil.HTTPMessageDelegate,
        conn: tornado.httputil.HTTPConnection,
        svc: Services,
        callers: Callers,
    ) -> None:
        self.inner = inner
        self.conn = conn
        self.svc = svc
        self.callers = callers
        self.started = time.monotonic()
        self.head: tuple[Any, tornado.httputil.HTTPHeaders] | None = None
        self.chunks: list[bytes] = []
        self.replay: asyncio.Task[None] | None = None

    def headers_received(self, start_line: Any, headers: tornado.httputil.HTTPHeaders) -> None:
        self.head = (start_line, headers)

    def data_received(self, chunk: bytes) -> None:
        self.chunks.append(chunk)

    def finish(self) -> None:
        assert self.head is not None
        body = b"".join(self.chunks)
        if not self._answered(self.head[0].path, self.head[1], body):
            self.replay = asyncio.ensure_future(self._replay(body))

    def on_connection_close(self) -> None:
        if self.replay is not None:
            self.inner.on_connection_close()

    def _answered(self, route: str, headers: tornado.httputil.HTTPHeaders, body: bytes) -> bool:
        caller = self.callers.authenticate(headers.get("Authorization"))
        if caller is None:
            return False
        ready = self.svc.answers.get(route, caller.cls, body, self.svc.hot, self.svc.clock())
        if ready is None:
            return False
        recall.write_back_uses(self.svc)
        data = ready.data
        out = tornado.httputil.HTTPHeaders(
            {
                "Server": _SERVER,
                "Content-Type": "application/json; charset=utf-8",
                "Date": _date(),
                "Cache-Control": "no-store",
                "Vary": "Accept-Encoding",
            }
        )
        if len(data) >= 1024 and "gzip" in headers.get("Accept-Encoding", ""):
            data = ready.gzip()
            out["Content-Encoding"] = "gzip"
        out["Content-Length"] = str(len(data))
        self.conn.write_headers(_OK, out, data)
        self.conn.finish()
        metrics.cache_event("hit")
        trace = Trace(host=ready.host, cache="hit")
        self.svc.held.answered()
        seconds = time.monotonic() - self.started
        metrics.REQUESTS.labels(route, "200").inc()
        metrics.REQUEST_SECONDS.labels(route).observe(seconds)
        served = Served(route, "POST", 200, "ok", len(ready.data), seconds * 1000)
        fields = line_fields(caller, trace, served)
        access.log(logging.INFO, "request", extra={"fields": fields})
        return True

    async def _replay(self, body: bytes) -> None:
        """The request as it came, to the application."""
        assert self.head is not None
        await _done(self.inner.headers_received(*self.head))
        if body:
            await _done(self.inner.data_received(body))
        self.inner.finish()


_dated = [-1, ""]


def _date() -> str:
    """The Date header, made once a second."""
    now = int(time.time())
    if _dated[0] != now:
        _dated[:] = [now, tornado.httputil.format_timestamp(now)]
    return str(_dated[1])


def keep(h: BaseHandler, params: FetchParams, doc: Document, body: bytes, data: bytes) -> None:
    """Keep `data`, the encoded answer to `body`, ready for the next identical request of the
    caller's class, when it is a plain answer of the hot set's fresh document."""
    assert h.caller is not None
    if not memoizable(params, doc, h.trace) or h.svc.cfg.fetch.robots != "ignore":
        return  # robots.txt `report`/`respect` is read again for every answer
    key = (params.url, h.caller.cls)
    if h.svc.hot.get(key) is not doc.content:
        return
    until = expiry(doc.content, h.svc.cfg.cache.ttl, params.max_age)
    h.svc.answers.put(
        h.route, h.caller.cls, body, Ready(data, doc.content, key, until, h.trace.host)
    )


async def _done(step: Awaitable[None] | None) -> None:
    if step is not None:
        await step
