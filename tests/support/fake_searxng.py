"""A fake SearXNG instance (Tornado on 127.0.0.1:0, in a thread) for the search tests.

`/search?q=…&format=json&categories=…` answers SearXNG's JSON shape with `results` (set
`results` to change them; by default three hits on the session origin) and records every
query in `queries`. `format` other than json is a 403, as SearXNG answers when the JSON API
is not enabled. With `redirect` set, every search is a 302 to it.
"""

from __future__ import annotations

import asyncio
import threading
from collections.abc import Iterator
from typing import Any

import pytest
import tornado.httpserver
import tornado.netutil
import tornado.web


class FakeSearx:
    def __init__(self) -> None:
        self.results: list[dict[str, Any]] = []
        self.queries: list[dict[str, str]] = []
        self.redirect = ""
        self.loop = asyncio.new_event_loop()
        self._ready = threading.Event()
        self._thread = threading.Thread(target=self._run, daemon=True, name="fake-searxng")
        self.port = 0

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.port}"

    def start(self) -> FakeSearx:
        self._thread.start()
        self._ready.wait(10)
        return self

    def _run(self) -> None:
        asyncio.set_event_loop(self.loop)
        fake = self

        class Search(tornado.web.RequestHandler):
            def get(self) -> None:
                q = {k: self.get_argument(k, "") for k in ("q", "format", "categories")}
                fake.queries.append(q)
                if fake.redirect:
                    self.redirect(fake.redirect)
                    return
                if q["format"] != "json":
                    self.set_status(403)
                    self.finish("Forbidden")
                    return
                answer = {"query": q["q"], "results": fake.results, "suggestions": []}
                self.finish(answer)

        app = tornado.web.Application([(r"/search", Search)], log_function=lambda h: None)
        self.server = tornado.httpserver.HTTPServer(app)
        sockets = tornado.netutil.bind_sockets(0, "127.0.0.1")
        self.port = sockets[0].getsockname()[1]
        self.server.add_sockets(sockets)
        self.loop.call_soon(self._ready.set)
        self.loop.run_forever()

    def stop(self) -> None:
        async def shutdown() -> None:
            self.server.stop()
            await self.server.close_all_connections()

        asyncio.run_coroutine_threadsafe(shutdown(), self.loop).result(10)
        self.loop.call_soon_threadsafe(self.loop.stop)
        self._thread.join(10)
        self.loop.close()


@pytest.fixture
def searx(origin: Any) -> Iterator[FakeSearx]:
    fake = FakeSearx().start()
    fake.results = [
        {
            "url": origin.url("/article"),
            "title": "An article",
            "content": "About things.",
            "engine": "fake",
            "category": "general",
        },
        {
            "url": origin.url("/text"),
            "title": "Some text",
            "content": "Plain words.",
            "engine": "fake",
            "category": "general",
        },
        {
            "url": origin.url("/json"),
            "title": "Data",
            "content": "A JSON document.",
            "engine": "fake",
            "category": "general",
            "publishedDate": "2026-12-01T00:00:00",
        },
    ]
    yield fake
    fake.stop()
