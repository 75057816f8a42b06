"""`sift mcp`: sift's tools for MCP clients (Claude Desktop, Claude Code, Cursor…), built on the
official `mcp` SDK (2.x: `MCPServer`). It is a client of a running sift, like the CLI: over stdio
with the CLI's server and token, or over streamable HTTP with each client's own token.
"""

from __future__ import annotations

import sys

from sift.core.config import Config, ConfigError


def run(cfg: Config, server: str | None, listen: str | None) -> int:
    """Serve MCP until the client goes away (stdio) or a signal (HTTP)."""
    from sift.client.http import find_token, server_url
    from sift.mcp import tools
    from sift.mcp.upstream import Upstream

    base = server_url(cfg, server)
    if listen:
        from sift.core.config import listen_address
        from sift.core.hosts import HostRules
        from sift.mcp.http import serve

        try:
            host, port = listen_address(listen)
        except ValueError as exc:
            raise ConfigError(f"--listen: {exc}") from None
        upstream = Upstream(base, None)
        _warn(upstream.probe())
        serve(tools.build(upstream), upstream, host, port, HostRules(cfg.server, host))
        return 0
    from sift.core.callers import token_path

    token_help = f"the token comes from $SIFT_TOKEN or {token_path(cfg)}"
    token = find_token(cfg)
    upstream = Upstream(base, token or "", token_help)
    problem = upstream.probe()
    _warn(problem)
    # Over stdio the token is this server's own, not the MCP client's: one sift refuses
    # ends `sift mcp` before `initialize` is answered, and the client's log shows why.
    if problem is None and upstream.knows(token or "") is False:
        why = "no token is set" if not token else "sift does not know the token"
        _warn(f"unauthorized: {why}; {token_help}")
        return 1
    tools.build(upstream).run("stdio")
    return 0


def _warn(problem: str | None) -> None:
    """Said on stderr at start (an MCP client logs it); the tools say it again when called."""
    if problem:
        print(f"sift mcp: {problem}", file=sys.stderr, flush=True)
