"""`sift mcp --listen ADDR`: the tools over streamable HTTP, one Bearer token per MCP client.

A request without `Authorization: Bearer …` is refused with 401 before the MCP layer sees it,
so a client without a token sees no tools at all. A token that is present is not checked here:
each tool call carries it to sift, which refuses an unknown one ("unauthorized").
"""

from __future__ import annotations

import uvicorn
from mcp.server.mcpserver import MCPServer
from starlette.responses import JSONResponse
from starlette.types import ASGIApp, Receive, Scope, Send

UNAUTHORIZED = {
    "success": False,
    "error": "unauthorized: send your sift token as `Authorization: Bearer <token>`",
}


def require_bearer(app: ASGIApp) -> ASGIApp:
    """`app` behind a gate that answers 401 to any HTTP request without a Bearer token."""

    async def gate(scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] == "http" and not _has_bearer(scope):
            response = JSONResponse(UNAUTHORIZED, 401, {"WWW-Authenticate": "Bearer"})
            await response(scope, receive, send)
            return
        await app(scope, receive, send)

    return gate


def _has_bearer(scope: Scope) -> bool:
    for name, value in scope.get("headers", []):
        if name == b"authorization":
            scheme, _, token = value.decode("latin-1").partition(" ")
            return scheme.lower() == "bearer" and bool(token.strip())
    return False


def serve(server: MCPServer, host: str, port: int) -> None:
    """Serve the MCP endpoint at http://host:port/mcp until SIGINT/SIGTERM. Stateless: every
    request stands alone and carries its own token."""
    app = server.streamable_http_app(stateless_http=True, json_response=True, host=host)
    config = uvicorn.Config(require_bearer(app), host=host, port=port, log_level="warning")
    uvicorn.Server(config).run()
