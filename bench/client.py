"""A small blocking HTTP/1.1 client with one kept-alive connection, for timing requests.

`http.client` on a numeric address does no name lookup, and one persistent connection is
what an agent's SDK uses: a timing then holds sift's work, not a TCP handshake.
"""

from __future__ import annotations

import http.client
import json
import time
from dataclasses import dataclass
from typing import Any


@dataclass
class Reply:
    status: int
    headers: dict[str, str]
    body: bytes
    seconds: float

    @property
    def json(self) -> Any:
        return json.loads(self.body)


class Client:
    """Requests to 127.0.0.1:`port`, with a bearer token when one is given."""

    def __init__(self, port: int, token: str | None = None, timeout: float = 120) -> None:
        self.port = port
        self.token = token
        self.timeout = timeout
        self._conn: http.client.HTTPConnection | None = None

    def _connection(self) -> http.client.HTTPConnection:
        if self._conn is None:
            self._conn = http.client.HTTPConnection("127.0.0.1", self.port, timeout=self.timeout)
        return self._conn

    def close(self) -> None:
        if self._conn is not None:
            self._conn.close()
            self._conn = None

    def request(self, method: str, path: str, body: Any = None) -> Reply:
        headers = {"Connection": "keep-alive"}
        if self.token:
            headers["Authorization"] = f"Bearer {self.token}"
        data = None
        if body is not None:
            data = json.dumps(body).encode()
            headers["Content-Type"] = "application/json"
        for attempt in (1, 2):  # a kept-alive connection the server closed: reconnect once
            conn = self._connection()
            started = time.perf_counter()
            try:
                conn.request(method, path, body=data, headers=headers)
                resp = conn.getresponse()
                payload = resp.read()
            except (http.client.RemoteDisconnected, ConnectionResetError, BrokenPipeError):
                self.close()
                if attempt == 2:
                    raise
                continue
            seconds = time.perf_counter() - started
            if resp.getheader("Connection", "").lower() == "close":
                self.close()
            return Reply(resp.status, dict(resp.getheaders()), payload, seconds)
        raise AssertionError("unreachable")

    def post(self, path: str, body: Any) -> Reply:
        return self.request("POST", path, body)

    def get(self, path: str) -> Reply:
        return self.request("GET", path)
