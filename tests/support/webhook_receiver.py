"""A loopback webhook receiver (a small Tornado app in its own thread): it keeps every post
(headers and raw body), checks Firecrawl's HMAC signature when given the secret, and answers
each post with the next status the test queued (then 200). A `GET` is never expected: any
request but a POST is recorded as `wrong`."""

from __future__ import annotations

import asyncio
import hashlib
import hmac
import json
import threading
from collections import deque
from dataclasses import dataclass
from typing import Any

import tornado.httpserver
import tornado.netutil
import tornado.web


@dataclass(frozen=True)
class Post:
    path: str
    headers: dict[str, str]
    raw: bytes

    @property
    def body(self) -> Any:
        return json.loads(self.raw)

    def signed_with(self, secret: str) -> bool:
        want = "sha256=" + hmac.new(secret.encode(), self.raw, hashlib.sha256).hexdigest()
        return hmac.compare_digest(self.headers.get("X-Firecrawl-Signature", ""), want)


class Receiver:
    def __init__(self, host: str = "127.0.0.1", port: int = 0) -> None:
        self.host = host
        self.posts: list[Post] = []
        self.wrong: list[str] = []
        self.answers: deque[tuple[int, dict[str, str]]] = deque()
        self._lock = threading.Lock()
        self._sockets = tornado.netutil.bind_sockets(port, host)  # bound now: the port is known
        self.port: int = self._sockets[0].getsockname()[1]
        self._loop = asyncio.new_event_loop()
        self._up = threading.Event()
        self._thread = threading.Thread(target=self._serve, name="webhook-receiver", daemon=True)

    def url(self, path: str = "/hook") -> str:
        return f"http://{self.host}:{self.port}{path}"

    def answer(self, status: int, times: int = 1, headers: dict[str, str] | None = None) -> None:
        """The next `times` posts are answered with `status` (and `headers`)."""
        for _ in range(times):
            self.answers.append((status, headers or {}))

    def received(self, path: str | None = None) -> list[Post]:
        with self._lock:
            return [p for p in self.posts if path is None or p.path == path]

    def types(self, path: str | None = None) -> list[str]:
        return [p.body["type"] for p in self.received(path)]

    def start(self) -> Receiver:
        self._thread.start()
        assert self._up.wait(10), "the receiver did not start"
        return self

    def stop(self) -> None:
        async def close() -> None:
            self._server.stop()
            await self._server.close_all_connections()

        asyncio.run_coroutine_threadsafe(close(), self._loop).result(10)
        self._loop.call_soon_threadsafe(self._loop.stop)
        self._thread.join(10)
        self._loop.close()

    def _serve(self) -> None:
        asyncio.set_event_loop(self._loop)
        routes = [(r"/.*", _Handler, {"receiver": self})]
        app = tornado.web.Application(routes, log_function=lambda _h: None)
        self._server = tornado.httpserver.HTTPServer(app)
        self._server.add_sockets(self._sockets)
        self._loop.call_soon(self._up.set)
        self._loop.run_forever()


class _Handler(tornado.web.RequestHandler):
    def initialize(self, receiver: Receiver) -> None:
        self.receiver = receiver

    def post(self) -> None:
        r = self.receiver
        with r._lock:
            r.posts.append(Post(self.request.path, dict(self.request.headers), self.request.body))
        status, headers = r.answers.popleft() if r.answers else (200, {})
        self.set_status(status)
        for name, value in headers.items():
            self.set_header(name, value)
        self.finish("ok")

    def prepare(self) -> None:
        if self.request.method != "POST":
            self.receiver.wrong.append(f"{self.request.method} {self.request.path}")
