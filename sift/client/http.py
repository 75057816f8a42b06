"""Talking to a running sift over HTTP: which server, which token, one request. Used by the
CLI (`sift fetch --server`, `sift batch`) and by `sift mcp`."""

from __future__ import annotations

import json
import os
from typing import Any

from sift.core.config import Config


def server_url(cfg: Config, given: str | None) -> str:
    """The server to talk to: `--server` / `$SIFT_URL`, else the configured `listen`."""
    return given or "http://" + cfg.listen.replace("0.0.0.0:", "127.0.0.1:")


def find_token(cfg: Config) -> str | None:
    from sift.core.callers import local_token

    return os.environ.get("SIFT_TOKEN") or local_token(cfg, create=False)


def unauthorized(cfg: Config, config: str | None = None) -> str:
    """What a 401 means on the command line: where the token was looked for, and the config
    that said where (`--config`, else `$SIFT_CONFIG`, else none)."""
    from sift.core.callers import token_path

    used = config or os.environ.get("SIFT_CONFIG") or "none: the built-in defaults"
    return (
        "unauthorized: the token comes from $SIFT_TOKEN, else from the state directory "
        f"({token_path(cfg)}, written by `sift serve` on its first start; config {used}: "
        "give the same --config as the server, or set SIFT_TOKEN)"
    )


def request(
    server: str, token: str | None, method: str, path: str, body: Any = None, timeout: float = 240
) -> tuple[int, Any]:
    """One call to a sift server: (status, JSON body). Proxies from the environment are
    never used."""
    import urllib.error  # late: the commands that talk to no server start faster
    import urllib.request

    req = urllib.request.Request(
        server.rstrip("/") + path,
        method=method,
        data=json.dumps(body).encode() if body is not None else None,
        headers={"Content-Type": "application/json", "Authorization": f"Bearer {token or ''}"},
    )
    opener = urllib.request.build_opener(urllib.request.ProxyHandler({}))
    try:
        with opener.open(req, timeout=timeout) as resp:
            return resp.status, json.loads(resp.read())
    except urllib.error.HTTPError as exc:
        try:
            return exc.code, json.loads(exc.read())
        except ValueError:
            return exc.code, {"success": False, "error": f"HTTP {exc.code} {exc.reason}"}
