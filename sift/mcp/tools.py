"""The MCP tools, each one call (or a few) to sift's HTTP API, registered from one table: one
module per family (`fetch`, `read`, `batch`, `site`, `search`), a top-level function per tool that
reaches the sift behind it through its `Context` (`server.of`).

The descriptions are what an agent reads before it calls, so they teach the one habit that
matters with sift: a long document answers with its map (outline, size, how to ask), and the
agent asks again for the part it needs with `pages` or `grep` instead of reading it all.
"""

from __future__ import annotations

import inspect
from collections.abc import Callable
from typing import Any

from mcp.server.mcpserver import Context, MCPServer
from mcp.types import ToolAnnotations

from sift.mcp import batch, documents, fetch, read, search, site, tasks
from sift.mcp.args import READ_ONLY
from sift.mcp.server import SiftServer, of
from sift.mcp.surface import Surface
from sift.mcp.upstream import Upstream

TEXT = False  # a document's text: no outputSchema, no structuredContent
DATA = None  # data: the SDK gives it the outputSchema of its return type

# (the tool, its description, its annotations, TEXT or DATA), in the order a client lists them
TOOLS: tuple[tuple[Callable[..., Any], str, ToolAnnotations | None, bool | None], ...] = (
    (search.search, search.SEARCH, ToolAnnotations(read_only_hint=True), DATA),
    (fetch.fetch, fetch.FETCH, READ_ONLY, TEXT),
    (read.read, read.READ, READ_ONLY, DATA),
    (read.verify, read.VERIFY, READ_ONLY, DATA),
    (batch.batch_fetch, batch.BATCH_FETCH, None, DATA),
    (batch.batch_status, batch.BATCH_STATUS, READ_ONLY, DATA),
    (batch.batch_result, batch.BATCH_RESULT, READ_ONLY, TEXT),
    (site.map, site.MAP, READ_ONLY, DATA),
    (site.crawl, site.CRAWL, None, DATA),
    (site.crawl_status, site.CRAWL_STATUS, READ_ONLY, DATA),
)
NAMES = tuple(tool.__name__ for tool, *_ in TOOLS)
# the tools a client's default `max_tokens` applies to (`surface.py`)
BUDGETED = frozenset(
    tool.__name__ for tool, *_ in TOOLS if "max_tokens" in inspect.signature(tool).parameters
)


async def doc(hash: str, ctx: Context, pages: str | None = None, grep: str | None = None) -> str:
    """A document this client was linked, read from sift's cache (`documents.TEMPLATE`)."""
    return await of(ctx).documents.read(ctx, hash, pages, grep)


def build(upstream: Upstream, surface: Surface | None = None) -> MCPServer:
    """The MCP server with sift's tools, each a client of `upstream`; `surface` chooses the
    tools each client sees and its default budget (before a call is taken as a task)."""
    taken = tasks.SiftTasks(upstream)
    server = SiftServer(
        upstream,
        log_level="WARNING",
        middleware=[surface] if surface else None,
        extensions=[taken],
    )
    tasks.install(server, taken)
    server.resource(
        documents.TEMPLATE, description=documents.DESCRIPTION, mime_type="text/markdown"
    )(doc)
    for tool, description, hints, shape in TOOLS:
        server.tool(description=description, annotations=hints, structured_output=shape)(tool)
    return server
