"""The sift server behind the MCP tools: which token a call carries, and sift's errors as tool
errors.

Over stdio the token is the CLI's (`$SIFT_TOKEN` or the state directory). Over HTTP it is the
MCP client's own `Authorization: Bearer` header and nothing else: the local token never serves a
remote client.
"""

from __future__ import annotations

import hashlib
import time
import urllib.error
from typing import Any

import anyio.to_thread
import msgspec
from mcp.server.mcpserver import Context
from mcp.server.mcpserver.exceptions import ToolError

from sift.client.http import request
from sift.core.envelope import Envelope

STARTUP_PROBE_SECONDS = 5.0
TOKEN_CHECK = "/v2/concurrency-check"  # the cheapest call that needs a token
FEATURES_FOR = 30.0  # seconds what /healthz said about search is taken without asking again


class SiftRefused(ToolError):
    """sift's one-line error for one call, with the HTTP status it came with (0: sift could
    not be reached or did not answer like sift)."""

    def __init__(self, message: str, status: int = 0) -> None:
        super().__init__(message)
        self.status = status


class Upstream:
    """A running sift, called the way the CLI calls it (`sift.client.http.request`).

    Args:
        server: sift's base URL.
        token: the token for every call (stdio), or None to take each call's Bearer header (HTTP).
        token_help: where a stdio token comes from, said when sift answers "unauthorized".
    """

    def __init__(self, server: str, token: str | None, token_help: str = "") -> None:
        self.server = server
        self.token = token
        self.pass_through = token is None
        self.token_help = token_help
        self._search: tuple[float, bool] = (0.0, False)  # (until when, what /healthz said)

    def probe(self) -> str | None:
        """At start: None when sift answers `/healthz`, else one line saying what is wrong."""
        try:
            status, _ = request(self.server, None, "GET", "/healthz", timeout=STARTUP_PROBE_SECONDS)
        except (urllib.error.URLError, OSError, ValueError) as exc:
            return f"no sift server answers at {self.server} ({_reason(exc)}); {_START_HELP}"
        if status != 200:
            return f"the sift server at {self.server} is not ready (/healthz answered {status})"
        return None

    def knows(self, token: str) -> bool | None:
        """Whether sift takes `token` (False: it answers 401), or None when sift cannot be
        asked now (the tool calls then say what is wrong)."""
        try:
            status, _ = request(
                self.server, token, "GET", TOKEN_CHECK, timeout=STARTUP_PROBE_SECONDS
            )
        except (urllib.error.URLError, OSError, ValueError):
            return None
        return status != 401 if status < 500 else None

    def searchable(self) -> bool:
        """Whether sift searches (`[search] searxng_url` is set), as its /healthz says; False
        while sift cannot be asked. Blocking: call it off the event loop."""
        until, known = self._search
        if time.monotonic() < until:
            return known
        try:
            _, health = request(self.server, None, "GET", "/healthz", timeout=STARTUP_PROBE_SECONDS)
        except (urllib.error.URLError, OSError, ValueError):
            return False
        known = isinstance(health, dict) and health.get("search") is True
        self._search = (time.monotonic() + FEATURES_FOR, known)
        return known

    async def call(self, ctx: Context, method: str, path: str, body: Any = None) -> Any:
        """One sift call for one tool call: the JSON answer, or `SiftRefused` (a ToolError)
        with sift's one-line message and hint."""
        return await self.ask(ctx.headers, method, path, body)

    async def ask(self, headers: Any, method: str, path: str, body: Any = None) -> Any:
        """`call` for a request that is not a tool call (a task's), by its HTTP `headers`."""
        token = self._token(headers)
        try:
            status, answer = await anyio.to_thread.run_sync(  # a cancelled call returns at once
                request, self.server, token, method, path, body, abandon_on_cancel=True
            )
        except (urllib.error.URLError, OSError) as exc:
            raise SiftRefused(
                f"no sift server answers at {self.server} ({_reason(exc)}); {_START_HELP}"
            ) from None
        except ValueError:
            raise SiftRefused(f"the server at {self.server} did not answer like sift") from None
        if status >= 400 or (isinstance(answer, dict) and answer.get("success") is False):
            raise SiftRefused(self._message(status, answer), status)
        return answer

    async def fetch(self, ctx: Context, body: dict[str, Any]) -> Envelope:
        """`/v1/fetch` of `body`: its answer, or `SiftRefused`."""
        return envelope_of(await self.call(ctx, "POST", "/v1/fetch", body), self.server)

    def client(self, headers: Any) -> str:
        """Whose call this is, as a key that holds no secret: over stdio the one client; over
        HTTP a hash of the client's token (what one client read, another cannot name)."""
        token = self._token(headers)
        if not self.pass_through or token is None:
            return "-"
        return hashlib.sha256(token.encode()).hexdigest()[:32]

    def _token(self, headers: Any) -> str | None:
        if not self.pass_through:
            return self.token
        auth = (headers or {}).get("authorization", "")
        scheme, _, token = auth.partition(" ")
        return token.strip() if scheme.lower() == "bearer" and token.strip() else None

    def _message(self, status: int, answer: Any) -> str:
        error = answer.get("error") if isinstance(answer, dict) else None
        text = str(error or f"sift answered HTTP {status}")
        if status == 401 and not self.pass_through:
            text += f" ({self.token_help})"
        hint = answer.get("hint") if isinstance(answer, dict) else None
        return f"{text} (hint: {hint})" if hint else text


def envelope_of(said: Any, server: str) -> Envelope:
    """A fetch's answer as sift wrote it (decoded JSON), read as the answer it is."""
    try:
        return msgspec.convert(said, Envelope)
    except msgspec.ValidationError:
        raise SiftRefused(f"the server at {server} did not answer like sift") from None


_START_HELP = "start it with `sift serve`, or point SIFT_URL / --server at a running sift"


def _reason(exc: BaseException) -> str:
    return str(getattr(exc, "reason", None) or exc)
