"""`sift mcp`: sift's tools for MCP clients (Claude Desktop, Claude Code, Cursor…), built on the
official `mcp` SDK (2.x: `MCPServer`). It is a client of a running sift, like the CLI: over stdio
with the CLI's server and token, or over streamable HTTP with each client's own token.
"""

from __future__ import annotations

import sys

from sift.core.config import Config, ConfigError


def run(
    cfg: Config,
    server: str | None,
    listen: str | None,
    only: str | None = None,
    exclude: str | None = None,
) -> int:
    """Serve MCP until the client goes away (stdio) or a signal (HTTP); `only` and `exclude`
    (`--tools`, `--exclude-tools`) replace `[mcp] tools` and `exclude_tools`."""
    from sift.client.http import find_token, server_url
    from sift.mcp import tools
    from sift.mcp.surface import Surface
    from sift.mcp.upstream import Upstream

    offered, caps = _offered(cfg, only, exclude), cfg.mcp.client_caps
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
        surface = Surface(tools.NAMES, offered, tools.BUDGETED, caps, upstream.client)
        _warn(upstream.probe())
        rules = HostRules(cfg.server, host)
        serve(tools.build(upstream, surface), upstream, host, port, rules, surface)
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
    surface = Surface(tools.NAMES, offered, tools.BUDGETED, caps, upstream.client)
    tools.build(upstream, surface).run("stdio")
    return 0


def _offered(cfg: Config, only: str | None, exclude: str | None) -> frozenset[str]:
    """The tools this server offers: the flags', else the config's; ConfigError (exit 2)
    names a tool that does not exist."""
    from sift.mcp.surface import shown
    from sift.mcp.tools import NAMES

    what = (
        "--tools" if only is not None else "config: `mcp.tools`",
        "--exclude-tools" if exclude is not None else "config: `mcp.exclude_tools`",
    )
    try:
        for flag, value in zip(what, (only, exclude), strict=True):
            if value is not None and not value.strip(" ,"):
                raise ValueError(f"{flag}: names no tool; the tools are {', '.join(NAMES)}")
        tools = cfg.mcp.tools if only is None else only
        return shown(NAMES, tools, cfg.mcp.exclude_tools if exclude is None else exclude, what)
    except ValueError as exc:
        raise ConfigError(str(exc)) from None


def _warn(problem: str | None) -> None:
    """Said on stderr at start (an MCP client logs it); the tools say it again when called."""
    if problem:
        print(f"sift mcp: {problem}", file=sys.stderr, flush=True)
