"""A plain JSON-RPC client of `sift mcp` on the 2025-11-25 handshake, for what the SDK's client
cannot send (a `tools/call` with `task`, `tasks/result`): `RawStdio` spawns `python -m sift mcp`
and speaks JSON lines on its pipes, `RawHttp` posts to `sift mcp --listen` and reads the event
stream. Both answer `ask(method, params)` with the JSON-RPC response (notifications skipped)."""

from __future__ import annotations

import itertools
import json
import subprocess
import sys
from typing import Any

import httpx2

from tests.support.mcp_client import REPO, client_env
from tests.support.sift_server import FLEET_TOKEN

VERSION = "2025-11-25"
HELLO = {
    "protocolVersion": VERSION,
    "capabilities": {},
    "clientInfo": {"name": "raw-tasks-client", "version": "1"},
}


class RawStdio:
    def __init__(self, server_url: str, token: str = FLEET_TOKEN) -> None:
        self.ids = itertools.count(1)
        self.proc = subprocess.Popen(
            [sys.executable, "-m", "sift", "mcp"],
            env=client_env(SIFT_URL=server_url, SIFT_TOKEN=token),
            cwd=str(REPO),
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=subprocess.DEVNULL,
            text=True,
        )

    def __enter__(self) -> RawStdio:
        self.hello = self.ask("initialize", HELLO)
        self._send({"jsonrpc": "2.0", "method": "notifications/initialized"})
        return self

    def __exit__(self, *exc: object) -> None:
        assert self.proc.stdin is not None
        self.proc.stdin.close()
        try:
            self.proc.wait(10)
        except subprocess.TimeoutExpired:
            self.proc.kill()
            self.proc.wait(10)
        finally:
            assert self.proc.stdout is not None
            self.proc.stdout.close()

    def ask(self, method: str, params: dict[str, Any] | None = None) -> dict[str, Any]:
        rid = next(self.ids)
        self._send({"jsonrpc": "2.0", "id": rid, "method": method, "params": params or {}})
        assert self.proc.stdout is not None
        while True:
            line = self.proc.stdout.readline()
            assert line, "sift mcp ended"
            said = json.loads(line)
            if said.get("id") == rid and "method" not in said:
                return dict(said)

    def _send(self, message: dict[str, Any]) -> None:
        assert self.proc.stdin is not None
        self.proc.stdin.write(json.dumps(message) + "\n")
        self.proc.stdin.flush()


class RawHttp:
    def __init__(self, url: str, token: str = FLEET_TOKEN) -> None:
        self.url = url
        self.ids = itertools.count(1)
        self.http = httpx2.Client(
            headers={
                "Authorization": f"Bearer {token}",
                "Accept": "application/json, text/event-stream",
                "MCP-Protocol-Version": VERSION,
            },
            trust_env=False,
            timeout=120,
        )

    def __enter__(self) -> RawHttp:
        self.hello = self.ask("initialize", HELLO)
        return self

    def __exit__(self, *exc: object) -> None:
        self.http.close()

    def ask(self, method: str, params: dict[str, Any] | None = None) -> dict[str, Any]:
        rid = next(self.ids)
        body = {"jsonrpc": "2.0", "id": rid, "method": method, "params": params or {}}
        r = self.http.post(self.url, json=body)
        assert r.status_code == 200, (r.status_code, r.text)
        if r.headers.get("content-type", "").startswith("application/json"):
            return dict(r.json())
        for line in r.text.splitlines():
            if line.startswith("data:"):
                said = json.loads(line[5:])
                if said.get("id") == rid and "method" not in said:
                    return dict(said)
        raise AssertionError(f"no answer to {method}: {r.text[:500]}")
