"""The HTTP server at sift's edge: client timeouts, and answers in the one JSON error shape
where Tornado would close the connection silently or write a bare 400.

Tornado reads a request head with one bounded read; past `HEAD_CAP` it closes the stream, and a
malformed request gets `HTTP/1.1 400 Bad Request` with no body. `EdgeStream` turns the first into
a 431 written just before the close and the second into a JSON 400; `EdgeServer` refuses a head
with too many header lines with a 431, and a foreign `Host` or `Origin` with a 421 or 403
(`web/hosts.py`), before any handler runs — the ready answers of `web/ready.py` included.
"""

from __future__ import annotations

import contextlib
import http
import socket
from asyncio import Future
from collections.abc import Awaitable
from typing import Any

import msgspec
import tornado.httpserver
import tornado.httputil
import tornado.iostream
import tornado.web

from sift.core import metrics
from sift.core.callers import Callers
from sift.core.config import Config
from sift.core.hosts import HostRules
from sift.service.services import Services
from sift.web.hosts import edge_answer, local_port
from sift.web.ready import ReadyDelegate, wanted

HEAD_CAP = 64 * 1024  # request line and headers together
MAX_HEADERS = 100
BODY_CAP = 1024 * 1024  # the largest body any route takes; routes set their own, lower caps

_TORNADO_BARE_400 = b"HTTP/1.1 400 Bad Request\r\n\r\n"
JSON = "application/json; charset=utf-8"
NO_STORE = {"Cache-Control": "no-store"}  # on every answer, those of the edge too


def answer(status: int, message: str) -> bytes:
    """A whole HTTP/1.1 error answer in the JSON shape, for when no handler exists yet."""
    body = msgspec.json.encode({"success": False, "error": message})
    head = (
        f"HTTP/1.1 {status} {http.HTTPStatus(status).phrase}\r\n"
        f"Content-Type: {JSON}\r\nCache-Control: {NO_STORE['Cache-Control']}\r\n"
        f"Content-Length: {len(body)}\r\nConnection: close\r\n\r\n"
    )
    return head.encode() + body


HEAD_TOO_LARGE = answer(431, f"request line and headers over {HEAD_CAP // 1024} KiB")
MALFORMED = answer(400, "malformed HTTP request (bad request line, header or body framing)")


class EdgeStream(tornado.iostream.IOStream):
    """An IOStream that answers in JSON where Tornado would close or write a bare 400."""

    reading_head = False  # the server reads only request heads with a regex

    def read_until_regex(self, regex: bytes, max_bytes: int | None = None) -> Awaitable[bytes]:
        self.reading_head = True
        fut = super().read_until_regex(regex, max_bytes)
        if isinstance(fut, Future):
            fut.add_done_callback(self._head_read)
        return fut

    def _head_read(self, _fut: Future[bytes]) -> None:
        self.reading_head = False

    def write(self, data: bytes | memoryview) -> Future[None]:
        if len(data) == len(_TORNADO_BARE_400) and bytes(data) == _TORNADO_BARE_400:
            data = MALFORMED
        return super().write(data)

    def close(self, exc_info: Any = False) -> None:
        if (
            isinstance(exc_info, tornado.iostream.UnsatisfiableReadError)
            and self.reading_head
            and not self.closed()
        ):
            with contextlib.suppress(OSError):  # best effort: a small answer fits the buffer
                self.socket.send(HEAD_TOO_LARGE)
                for _ in range(16):  # what already arrived, read: closing on it would reset
                    if not self.socket.recv(65536, socket.MSG_DONTWAIT):  # the answer away
                        break
        super().close(exc_info)


class _HeadCheck(tornado.httputil.HTTPMessageDelegate):
    """Refuses a head with too many header lines before the application sees it."""

    def __init__(
        self,
        inner: tornado.httputil.HTTPMessageDelegate,
        conn: tornado.httputil.HTTPConnection,
        ready: tuple[Services, Callers] | None,
        hosts: HostRules | None,
    ) -> None:
        self.inner = inner
        self.conn = conn
        self.ready = ready
        self.hosts = hosts
        self.refused = False

    def headers_received(self, start_line: Any, headers: tornado.httputil.HTTPHeaders) -> Any:
        if sum(1 for _ in headers.get_all()) > MAX_HEADERS:
            body = {"success": False, "error": f"more than {MAX_HEADERS} header lines"}
            return self._refuse(431, {"Content-Type": JSON}, msgspec.json.encode(body))
        if self.hosts is not None:
            own = edge_answer(self.hosts, start_line, headers, local_port(self.conn))
            if own is not None:
                return self._refuse(*own)
        if self.ready is not None and wanted(start_line, headers, self.ready[0]):
            self.inner = ReadyDelegate(self.inner, self.conn, *self.ready)
        return self.inner.headers_received(start_line, headers)

    def _refuse(self, status: int, extra: dict[str, str], data: bytes) -> None:
        """Answer at the edge (an error in its route's shape, or an empty 204) and close."""
        self.refused = True
        line = tornado.httputil.ResponseStartLine(
            "HTTP/1.1", status, http.HTTPStatus(status).phrase
        )
        head = {"Content-Length": str(len(data)), "Connection": "close", **NO_STORE, **extra}
        self.conn.write_headers(line, tornado.httputil.HTTPHeaders(head), data)
        self.conn.finish()  # the body is not read: Tornado closes the connection
        metrics.REQUESTS.labels("other", str(status)).inc()  # no route was reached

    def data_received(self, chunk: bytes) -> Any:
        return None if self.refused else self.inner.data_received(chunk)

    def finish(self) -> None:
        if not self.refused:
            self.inner.finish()

    def on_connection_close(self) -> None:
        if not self.refused:
            self.inner.on_connection_close()


class EdgeServer(tornado.httpserver.HTTPServer):
    ready: tuple[Services, Callers] | None = None  # where ready answers are kept
    hosts: HostRules | None = None  # the Host and Origin rules (web/hosts.py)

    def handle_stream(self, stream: tornado.iostream.IOStream, address: tuple[Any, ...]) -> None:
        edge = EdgeStream(
            stream.socket,
            max_buffer_size=stream.max_buffer_size,
            read_chunk_size=stream.read_chunk_size,
        )
        super().handle_stream(edge, address)

    def start_request(
        self, server_conn: object, request_conn: tornado.httputil.HTTPConnection
    ) -> tornado.httputil.HTTPMessageDelegate:
        inner = super().start_request(server_conn, request_conn)
        return _HeadCheck(inner, request_conn, self.ready, self.hosts)


def make_server(app: tornado.web.Application, cfg: Config) -> EdgeServer:
    """The HTTP server for `app`: a client that stalls in its head or body, or idles between
    requests, is dropped after `[http]` timeouts."""
    server = EdgeServer(
        app,
        xheaders=False,
        max_header_size=HEAD_CAP,
        max_body_size=BODY_CAP,
        idle_connection_timeout=cfg.http.idle_timeout,
        body_timeout=cfg.http.body_timeout,
    )
    server.ready = app.settings.get("ready")
    server.hosts = app.settings.get("hosts")
    return server
