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

import urllib.parse
import warnings
from collections.abc import Awaitable
from typing import Any, TypeVar

import anyio
from mcp.server.context import ServerRequestContext
from mcp.server.mcpserver import Context, MCPServer
from mcp.server.mcpserver.exceptions import ToolError
from mcp.shared.exceptions import MCPDeprecationWarning
from mcp.types import EmptyResult, LoggingLevel, SetLevelRequestParams
from mcp_types.version import MODERN_PROTOCOL_VERSIONS

from sift.mcp.upstream import Upstream

T = TypeVar("T")

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


WATCH_EVERY = 0.5  # seconds between two looks at a long fetch's progress


def wants_progress(ctx: Context) -> bool:
    """Whether this request carries a progress token (else no progress is sent)."""
    meta: Any = ctx.request_context.meta or {}
    return "progress_token" in meta or "progressToken" in meta


async def watched(ctx: Context, upstream: Upstream, url: str, work: Awaitable[T]) -> T:
    """`work` (a fetch of `url`), with its progress (pages extracted of N, for a PDF; any
    stage sift names) sent to the client every half second while it runs, when the client
    asked for progress."""
    if not wants_progress(ctx):
        return await work
    query = urllib.parse.urlencode({"url": url})

    async def watch() -> None:
        while True:
            await anyio.sleep(WATCH_EVERY)
            try:
                seen = await upstream.call(ctx, "GET", f"/v1/progress?{query}")
            except ToolError:  # progress is a courtesy: the work itself says what failed
                continue
            if seen.get("stage") and seen.get("total"):
                done, total = seen["done"], seen["total"]
                await ctx.report_progress(done, total, f"{seen['stage']}: {done} of {total} pages")

    failed: ToolError | None = None
    async with anyio.create_task_group() as tasks:
        tasks.start_soon(watch)
        try:
            done = await work
        except ToolError as exc:  # raised out here: inside, the task group would wrap it
            failed = exc
        finally:
            tasks.cancel_scope.cancel()
    if failed is not None:
        raise failed
    return done
