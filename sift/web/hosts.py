"""`Host` and `Origin` at the API's edge (`core/hosts.py` has the rules): a request refused
there is answered before any handler, the ready answers of `web/ready.py` included, so no
route can forget it. Also the links sift builds for a caller, which never use `Host`."""

from __future__ import annotations

import msgspec
import tornado.httputil
import tornado.web

from sift.core.config import Config, listen_address
from sift.core.hosts import HostRules, any_refusal

# What a configured origin's page may send (a CORS preflight's answer).
_CORS_METHODS = "GET, POST, DELETE"
_CORS_HEADERS = "Authorization, Content-Type"
_CORS_MAX_AGE = "600"
READER = "/r/"


def rules_for(cfg: Config) -> HostRules:
    """The API's rules: sites reach its key directory at `[identity] signature_agent`."""
    agent = cfg.identity.signature_agent if cfg.identity.enabled else ""
    return HostRules(cfg.server, listen_address(cfg.listen)[0], [agent])


def local_port(conn: tornado.httputil.HTTPConnection) -> int:
    """The port the request came in on (the listen port, whatever `listen` said)."""
    sock = getattr(getattr(conn, "stream", None), "socket", None)
    return int(sock.getsockname()[1]) if sock is not None else 0


def edge_answer(
    rules: HostRules,
    start_line: tornado.httputil.RequestStartLine,
    headers: tornado.httputil.HTTPHeaders,
    port: int,
) -> tuple[int, dict[str, str], bytes] | None:
    """The answer the edge gives itself, or None to go on: a refusal (421 or 403, the one
    error shape; the reader URL's line of text), or a configured origin's CORS preflight."""
    refused = any_refusal(rules, headers.get_all(), port)
    if refused is not None:
        if start_line.path.startswith(READER):  # the reader URL's errors: one line of text
            line = f"{refused.status} {refused.message}\n".encode()
            return refused.status, {"Content-Type": "text/plain; charset=utf-8"}, line
        data = msgspec.json.encode(refused.to_body())
        return refused.status, {"Content-Type": "application/json; charset=utf-8"}, data
    origin = headers.get("Origin")
    allow = rules.cors(origin)
    if allow is None or start_line.method != "OPTIONS":
        return None
    if "Access-Control-Request-Method" not in headers:
        return None
    return (
        204,
        {
            **cors_headers(allow),
            "Access-Control-Allow-Methods": _CORS_METHODS,
            "Access-Control-Allow-Headers": _CORS_HEADERS,
            "Access-Control-Max-Age": _CORS_MAX_AGE,
        },
        b"",
    )


def cors_headers(origin: str | None) -> dict[str, str]:
    """The CORS headers of an answer to `origin` (one the operator configured), else none."""
    if origin is None:
        return {}
    return {"Access-Control-Allow-Origin": origin, "Vary": "Origin"}


def link_base(handler: tornado.web.RequestHandler) -> str:
    """Where links sift builds for a caller start: `[server] public_url`, else the address the
    request came in on (the listen address) — never the request's `Host`, which a page that
    rebinds a name could set."""
    cfg: Config = handler.application.settings["cfg"]
    if cfg.server.public_url:
        return cfg.server.public_url.rstrip("/")
    sock = handler.request.connection.stream.socket  # type: ignore[union-attr]
    host, port = sock.getsockname()[:2]
    scheme = "https" if handler.request.protocol == "https" else "http"
    return f"{scheme}://{'[' + host + ']' if ':' in host else host}:{port}"
