"""A real sift (actors, worker processes, Tornado) on 127.0.0.1:0 in a thread, for tests."""

from __future__ import annotations

import asyncio
import http.client
import json
import threading
import urllib.parse
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest
import tornado.netutil

from sift.actors.extract import ExtractWorker
from sift.core import config as config_mod
from sift.core.callers import Callers, sha256_hex
from sift.service.services import Services
from sift.web import looplag
from sift.web.app import make_app
from sift.web.edge import make_server

FLEET_TOKEN = "fleet-token-for-tests"
RESTRICTED_TOKEN = "restricted-token-for-tests"


class Response:
    def __init__(self, status: int, headers: dict[str, str], body: bytes) -> None:
        self.status = status
        self.headers = headers
        self.body = body

    @property
    def json(self) -> Any:
        return json.loads(self.body)


def http_call(
    base: str,
    method: str,
    path: str,
    body: Any = None,
    *,
    token: str | None,
    raw: bytes | None = None,
    headers: dict[str, str] | None = None,
    timeout: float = 60,
) -> Response:
    """One HTTP request to a sift at `base` (no proxies, no client retries): `body` as JSON,
    or `raw` bytes as they are."""
    parts = urllib.parse.urlsplit(base)
    assert parts.hostname, base
    conn = http.client.HTTPConnection(parts.hostname, parts.port, timeout=timeout)
    hdrs = dict(headers or {})
    if token is not None:
        hdrs["Authorization"] = f"Bearer {token}"
    data = raw if raw is not None else (json.dumps(body).encode() if body is not None else None)
    if data is not None:
        hdrs.setdefault("Content-Type", "application/json")
    try:
        conn.request(method, path, body=data, headers=hdrs)
        resp = conn.getresponse()
        return Response(resp.status, dict(resp.getheaders()), resp.read())
    finally:
        conn.close()


class SiftServer:
    """sift running in a background thread with its own event loop."""

    def __init__(
        self,
        state_dir: Path,
        overrides: dict[str, Any] | None = None,
        resolver: Callable[[str, int], list[str]] | None = None,
        extract_args: list[str] | None = None,
    ) -> None:
        raw: dict[str, Any] = {
            "state_dir": str(state_dir),
            "guard": {"allow_prefixes": ["127.0.0.0/8"]},
            "clean": {"workers": 1},
            "render": {"enabled": False},  # tests of the browser path turn it on
            "caller": [
                {"name": "agent", "token_sha256": sha256_hex(FLEET_TOKEN), "class": "fleet"},
                {
                    "name": "secret",
                    "token_sha256": sha256_hex(RESTRICTED_TOKEN),
                    "class": "restricted",
                },
            ],
        }
        for key, value in (overrides or {}).items():
            if isinstance(value, dict) and isinstance(raw.get(key), dict):
                raw[key] = {**raw[key], **value}
            else:
                raw[key] = value
        self.cfg = config_mod.from_dict(raw)
        self.svc = Services(self.cfg, resolver=resolver)
        if extract_args:  # test hooks of the PDF child, through ExtractWorker's own parameter
            pdf_cfg, args = self.cfg.pdf, tuple(extract_args)
            self.svc.system.roles["extract"].factory = lambda: ExtractWorker.start(
                pdf_cfg, child_args=args
            )
        self.callers = Callers([(c.name, c.token_sha256, c.class_) for c in self.cfg.caller])
        self.loop = asyncio.new_event_loop()
        self.svc.loop = self.loop  # batch workers run targets on the server's loop
        self._ready = threading.Event()
        self._thread = threading.Thread(target=self._run, daemon=True, name="sift-test-server")
        self.port = 0

    def start(self) -> SiftServer:
        self.svc.start()
        self._thread.start()
        self._ready.wait(10)
        return self

    def _run(self) -> None:
        asyncio.set_event_loop(self.loop)
        self.app = make_app(self.svc, self.callers)
        self.server = make_server(self.app, self.cfg)
        sockets = tornado.netutil.bind_sockets(0, "127.0.0.1")
        self.port = sockets[0].getsockname()[1]
        self.server.add_sockets(sockets)
        self.probe = self.loop.create_task(looplag._probe(looplag.INTERVAL))  # as `sift serve`
        self.loop.call_soon(self._ready.set)
        self.loop.run_forever()

    def stop(self) -> None:
        if self.loop.is_closed():  # stopped already (a test stopped it)
            return

        async def shutdown() -> None:
            await looplag.stop(self.probe)
            self.server.stop()
            await self.server.close_all_connections()
            await self.svc.settle()

        fut = asyncio.run_coroutine_threadsafe(shutdown(), self.loop)
        try:
            fut.result(10)
        finally:
            self.loop.call_soon_threadsafe(self.loop.stop)
            self._thread.join(10)
            self.svc.stop()
            self.loop.close()

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.port}"

    def request(
        self,
        method: str,
        path: str,
        body: Any = None,
        token: str | None = FLEET_TOKEN,
        raw: bytes | None = None,
        headers: dict[str, str] | None = None,
        timeout: float = 60,
    ) -> Response:
        return http_call(
            self.url, method, path, body, token=token, raw=raw, headers=headers, timeout=timeout
        )

    def post(self, path: str, body: Any = None, **kw: Any) -> Response:
        return self.request("POST", path, body, **kw)

    def fetch(self, url: str, **fields: Any) -> Response:
        token = fields.pop("token", FLEET_TOKEN)
        return self.post("/v1/fetch", {"url": url, **fields}, token=token)


@pytest.fixture
def make_sift(tmp_path: Path) -> Iterator[Callable[..., SiftServer]]:
    """Start a sift with config overrides; every one started is stopped at the end."""
    started: list[SiftServer] = []

    def make(overrides: dict[str, Any] | None = None, **kw: Any) -> SiftServer:
        s = SiftServer(tmp_path / f"state{len(started)}", overrides, **kw).start()
        started.append(s)
        return s

    yield make
    for s in started:
        s.stop()


@pytest.fixture
def sift(make_sift: Callable[..., SiftServer]) -> SiftServer:
    return make_sift()
