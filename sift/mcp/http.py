"""`sift mcp --listen ADDR`: the tools over streamable HTTP, one Bearer token per MCP client.

First `Host` and `Origin` (`core/hosts.py`, on any listen address: the SDK checks them only
for loopback names, and lets any loopback page in): 421 or 403 before anything else. Then a
request without `Authorization: Bearer …`, or with a token sift refuses, is answered 401
before the MCP layer sees it: a client without a good token fails at `initialize` and sees
no tools at all; while sift cannot be asked, no token can be checked and each is refused
(503). A token sift took is remembered (its hash, for a minute), so a session's later
requests cost no extra call.
"""

from __future__ import annotations

import hashlib
import time
import urllib.parse

import anyio.to_thread
import uvicorn
from mcp.server.mcpserver import MCPServer
from mcp.server.transport_security import TransportSecuritySettings
from starlette.responses import JSONResponse
from starlette.types import ASGIApp, Receive, Scope, Send

from sift.core.hosts import HostRules, any_refusal
from sift.mcp.surface import Surface
from sift.mcp.upstream import Upstream

UNAUTHORIZED = {
    "success": False,
    "error": "unauthorized: send your sift token as `Authorization: Bearer <token>`",
}
REFUSED = {"success": False, "error": "unauthorized"}  # as sift answers an unknown token
UNCHECKED = {
    "success": False,
    "error": "sift is not answering, so the token cannot be checked; try again once it is up",
    "hint": "retry",
}
UNCHECKED_RETRY = "5"
KNOWN_FOR = 60.0  # seconds a token sift took is taken without asking again
KNOWN_MAX = 1024


def require_bearer(
    app: ASGIApp, upstream: Upstream, rules: HostRules, port: int, surface: Surface | None = None
) -> ASGIApp:
    """`app` behind a gate that answers 421/403 to a foreign `Host`/`Origin`, then 401 to any
    HTTP request without a Bearer token sift knows (503 while sift cannot say), then 400 to a
    URL whose `tools` / `exclude_tools` name a tool that does not exist (`surface.py`)."""
    known: dict[str, float] = {}  # sha256 of a token → until when it is taken unasked

    async def gate(scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] == "http":
            response = await _refusal(scope)
            if response is not None:
                await response(scope, receive, send)
                return
        await app(scope, receive, send)

    async def _refusal(scope: Scope) -> JSONResponse | None:
        headers = [(n.decode("latin-1"), v.decode("latin-1")) for n, v in scope["headers"]]
        foreign = any_refusal(rules, headers, port)
        if foreign is not None:
            return JSONResponse(foreign.to_body(), foreign.status)
        token = _bearer(scope)
        knows = None if token is None else await _known(token)
        if token is not None and knows is None:
            return JSONResponse(UNCHECKED, 503, {"Retry-After": UNCHECKED_RETRY})
        if not knows:
            refused = UNAUTHORIZED if token is None else REFUSED
            return JSONResponse(refused, 401, {"WWW-Authenticate": "Bearer"})
        return None if surface is None else _bad_tools(surface, scope)

    async def _known(token: str) -> bool | None:
        key = hashlib.sha256(token.encode()).hexdigest()
        now = time.monotonic()
        if known.get(key, 0.0) > now:
            return True
        knows = await anyio.to_thread.run_sync(upstream.knows, token, abandon_on_cancel=True)
        if knows:
            if len(known) >= KNOWN_MAX:
                known.clear()
            known[key] = now + KNOWN_FOR
        return knows

    return gate


def _bad_tools(surface: Surface, scope: Scope) -> JSONResponse | None:
    """400 for a URL's `tools` / `exclude_tools` that name a tool sift does not have, or leave
    none of the tools this server offers."""
    query = dict(urllib.parse.parse_qsl(scope.get("query_string", b"").decode("latin-1")))
    try:
        surface.narrowed(query)
    except ValueError as exc:
        hint = "name tools from the list, comma-separated: /mcp?tools=fetch,read"
        return JSONResponse({"success": False, "error": str(exc), "hint": hint}, 400)
    return None


def _bearer(scope: Scope) -> str | None:
    for name, value in scope.get("headers", []):
        if name == b"authorization":
            scheme, _, token = value.decode("latin-1").partition(" ")
            token = token.strip()
            return token if scheme.lower() == "bearer" and token else None
    return None


def serve(
    server: MCPServer,
    upstream: Upstream,
    host: str,
    port: int,
    rules: HostRules,
    surface: Surface | None = None,
) -> None:
    """Serve the MCP endpoint at http://host:port/mcp until SIGINT/SIGTERM. Stateless: every
    request stands alone and carries its own token. A call answers as an event stream, so
    the progress and log notifications of a long call reach the client before its result.
    The SDK's own Host and Origin check is on too, with sift's lists, on every address."""
    security = TransportSecuritySettings(
        enable_dns_rebinding_protection=True,
        allowed_hosts=_sdk_hosts(rules, port),
        allowed_origins=_sdk_origins(rules, port),
    )
    app = server.streamable_http_app(
        stateless_http=True, json_response=False, host=host, transport_security=security
    )
    config = uvicorn.Config(
        require_bearer(app, upstream, rules, port, surface),
        host=host,
        port=port,
        log_level="warning",
    )
    uvicorn.Server(config).run()


def _sdk_origins(rules: HostRules, port: int) -> list[str]:
    """The origins the SDK lets through: those configured, and a page of one of sift's own
    names (sift's check, which runs first, lets such a page through only where its origin is
    the very `Host` it asked: `HostRules.refusal`)."""
    own = [f"{scheme}://{host}" for host in _sdk_hosts(rules, port) for scheme in ("http", "https")]
    return sorted(rules.origins) + own


def _sdk_hosts(rules: HostRules, port: int) -> list[str]:
    """sift's `Host` list as the SDK spells it: an entry without a port, with and without
    the listening port."""
    hosts: list[str] = []
    for name, at in sorted(rules.hosts, key=str):
        hosts += [f"{name}:{at}"] if at is not None else [name, f"{name}:{port}"]
    return hosts
