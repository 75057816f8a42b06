"""A loopback proxy in front of `sift mcp --listen` that adds `Authorization: Bearer <token>`
to every request, for MCP clients that cannot send one (the official conformance suite's).
Tornado on 127.0.0.1:0 in a thread; answers (event streams too) are relayed as they come."""

from __future__ import annotations

import asyncio
import threading
import urllib.parse

import tornado.httpclient
import tornado.httpserver
import tornado.netutil
import tornado.web

HOP = {"content-length", "transfer-encoding", "connection", "host"}


class BearerProxy:
    def __init__(self, upstream: str, token: str) -> None:
        self.upstream, self.token = upstream, token
        self.loop = asyncio.new_event_loop()
        self.port = 0
        self._ready = threading.Event()
        self._thread = threading.Thread(target=self._run, daemon=True, name="bearer-proxy")

    def behind(self, host: str) -> str:
        """`host`, with this proxy's port made the upstream's (any other value as it is)."""
        name, sep, port = host.rpartition(":")
        if sep and port == str(self.port):
            return f"{name}:{urllib.parse.urlsplit(self.upstream).port}"
        return host

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.port}/mcp"

    def __enter__(self) -> BearerProxy:
        self._thread.start()
        assert self._ready.wait(10)
        return self

    def __exit__(self, *exc: object) -> None:
        self.loop.call_soon_threadsafe(self.loop.stop)
        self._thread.join(10)

    def _run(self) -> None:
        asyncio.set_event_loop(self.loop)
        proxy = self

        class Relay(tornado.web.RequestHandler):
            SUPPORTED_METHODS = ("GET", "POST", "DELETE")

            async def _relay(self) -> None:
                headers = {k: v for k, v in self.request.headers.items() if k.lower() not in HOP}
                headers["Authorization"] = f"Bearer {proxy.token}"
                # The client's `Host` and `Origin` go through as it sent them, but where they
                # name this proxy they name the server behind it: what sift checks is what the
                # client meant (a conformance check of foreign names still reaches sift).
                headers["Host"] = proxy.behind(self.request.headers.get("Host", ""))
                scheme, sep, rest = headers.get("Origin", "").partition("://")
                if sep:
                    headers["Origin"] = scheme + sep + proxy.behind(rest)
                request = tornado.httpclient.HTTPRequest(
                    proxy.upstream,
                    method=self.request.method or "GET",
                    headers=headers,
                    body=self.request.body if self.request.method == "POST" else None,
                    header_callback=self._header,
                    streaming_callback=self._chunk,
                    request_timeout=120,
                )
                client = tornado.httpclient.AsyncHTTPClient()
                await client.fetch(request, raise_error=False)
                self.finish()

            def _header(self, line: str) -> None:
                if line.startswith("HTTP/"):
                    self.set_status(int(line.split()[1]))
                    self.clear_header("Content-Type")
                elif ":" in line:
                    name, _, value = line.partition(":")
                    if name.strip().lower() not in HOP:
                        self.set_header(name.strip(), value.strip())

            def _chunk(self, data: bytes) -> None:
                self.write(data)
                self.flush()

            get = post = delete = _relay

        app = tornado.web.Application([(r"/mcp", Relay)], log_function=lambda h: None)
        server = tornado.httpserver.HTTPServer(app)
        sockets = tornado.netutil.bind_sockets(0, "127.0.0.1")
        self.port = sockets[0].getsockname()[1]
        server.add_sockets(sockets)
        self.loop.call_soon(self._ready.set)
        self.loop.run_forever()
        server.stop()
