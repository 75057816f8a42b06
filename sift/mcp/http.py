"""`sift mcp --listen ADDR`: the tools over streamable HTTP, one Bearer token per MCP client.

A request without `Authorization: Bearer …`, or with a token sift refuses, is answered 401
before the MCP layer sees it: a client without a good token fails at `initialize` and sees
no tools at all. A token sift took is remembered (its hash, for a minute), so a session's
later requests cost no extra call.
"""

from __future__ import annotations

import hashlib
import time

import anyio.to_thread
import uvicorn
from mcp.server.mcpserver import MCPServer
from starlette.responses import JSONResponse
from starlette.types import ASGIApp, Receive, Scope, Send

from sift.mcp.upstream import Upstream

UNAUTHORIZED = {
    "success": False,
    "error": "unauthorized: send your sift token as `Authorization: Bearer <token>`",
}
REFUSED = {"success": False, "error": "unauthorized"}  # as sift answers an unknown token
KNOWN_FOR = 60.0  # seconds a token sift took is taken without asking again
KNOWN_MAX = 1024


def require_bearer(app: ASGIApp, upstream: Upstream) -> ASGIApp:
    """`app` behind a gate that answers 401 to any HTTP request without a Bearer token sift
    knows."""
    known: dict[str, float] = {}  # sha256 of a token → until when it is taken unasked

    async def gate(scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] == "http":
            token = _bearer(scope)
            refused = UNAUTHORIZED if token is None else None
            if token is not None and not await _known(token):
                refused = REFUSED
            if refused is not None:
                response = JSONResponse(refused, 401, {"WWW-Authenticate": "Bearer"})
                await response(scope, receive, send)
                return
        await app(scope, receive, send)

    async def _known(token: str) -> bool:
        key = hashlib.sha256(token.encode()).hexdigest()
        now = time.monotonic()
        if known.get(key, 0.0) > now:
            return True
        knows = await anyio.to_thread.run_sync(upstream.knows, token, abandon_on_cancel=True)
        if knows is None:  # sift cannot be asked now: the tool calls will say why
            return True
        if knows:
            if len(known) >= KNOWN_MAX:
                known.clear()
            known[key] = now + KNOWN_FOR
        return knows

    return gate


def _bearer(scope: Scope) -> str | None:
    for name, value in scope.get("headers", []):
        if name == b"authorization":
            scheme, _, token = value.decode("latin-1").partition(" ")
            token = token.strip()
            return token if scheme.lower() == "bearer" and token else None
    return None


def serve(server: MCPServer, upstream: Upstream, host: str, port: int) -> None:
    """Serve the MCP endpoint at http://host:port/mcp until SIGINT/SIGTERM. Stateless: every
    request stands alone and carries its own token. A call answers as an event stream, so
    the progress and log notifications of a long call reach the client before its result."""
    app = server.streamable_http_app(stateless_http=True, json_response=False, host=host)
    config = uvicorn.Config(
        require_bearer(app, upstream), host=host, port=port, log_level="warning"
    )
    uvicorn.Server(config).run()
