"""What `sift mcp` tells a client while it works: log messages (the `logging` capability) and
progress notifications.

Log messages say what sift did in words and numbers only — the tool, the kind of document, its
size, cached or not, an HTTP status — never a URL (a query can hold a key), a page's text or a
token. Over the initialize handshake a client picks its level with `logging/setLevel` (until it
does, nothing is sent); on the per-request protocol (2026-07-28) each request carries its own
level and the SDK filters. Progress goes out only when the request has a progress token (the
SDK's `report_progress` sends nothing otherwise).
"""

from __future__ import annotations

import warnings
from typing import Any

from mcp.server.context import ServerRequestContext
from mcp.server.mcpserver import Context, MCPServer
from mcp.shared.exceptions import MCPDeprecationWarning
from mcp.types import EmptyResult, LoggingLevel, SetLevelRequestParams
from mcp_types.version import MODERN_PROTOCOL_VERSIONS

from sift.mcp.upstream import Upstream

LEVELS: tuple[LoggingLevel, ...] = (
    "debug",
    "info",
    "notice",
    "warning",
    "error",
    "critical",
    "alert",
    "emergency",
)


class Logbook:
    """Each client's chosen log level, and the messages sent at or above it."""

    def __init__(self, upstream: Upstream) -> None:
        self.upstream = upstream
        self._levels: dict[str, int] = {}  # client -> the lowest level sent

    def install(self, server: MCPServer) -> None:
        """Answer `logging/setLevel` (which also declares the `logging` capability)."""

        async def set_level(
            ctx: ServerRequestContext[Any], params: SetLevelRequestParams
        ) -> EmptyResult:
            headers = getattr(ctx.request, "headers", None)
            if len(self._levels) >= 4096:
                self._levels.clear()
            self._levels[self.upstream.client(headers)] = LEVELS.index(params.level)
            return EmptyResult()

        server._lowlevel_server.add_request_handler(  # the SDK has no public hook for it
            "logging/setLevel", SetLevelRequestParams, set_level
        )

    async def say(self, ctx: Context, level: LoggingLevel, message: str) -> None:
        """Send `message` to this client if it asked for `level` (never a URL, text or token)."""
        if ctx.protocol_version not in MODERN_PROTOCOL_VERSIONS:
            chosen = self._levels.get(self.upstream.client(ctx.headers))
            if chosen is None or LEVELS.index(level) < chosen:
                return
        with warnings.catch_warnings():  # deprecated in 2026-07-28, still the way before it
            warnings.simplefilter("ignore", MCPDeprecationWarning)
            await ctx.log(level, message, logger_name="sift")

