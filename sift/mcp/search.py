"""The `search` tool: web search through sift's SearXNG (`POST /v2/search`), listed only while
sift has one configured (`[search] searxng_url`, as its /healthz says)."""

from __future__ import annotations

from typing import Annotated

from mcp.server.mcpserver import Context
from mcp.types import CallToolResult, TextContent
from pydantic import Field

from sift.core.fence import one_line
from sift.mcp.schemas import SearchHit, SearchResults
from sift.mcp.server import of

SEARCH = """\
Search the web (through sift's SearXNG) and answer the results, best first: title, URL and a \
short description each. Then `fetch` the URLs worth reading."""


async def search(
    query: Annotated[str, Field(description="what to search for", min_length=1)],
    ctx: Context,
    limit: Annotated[int, Field(description="at most this many results", ge=1)] = 5,
) -> Annotated[CallToolResult, SearchResults]:
    asked = {"query": query, "limit": limit}
    answer = await of(ctx).upstream.call(ctx, "POST", "/v2/search", asked)
    hits = [
        SearchHit(
            url=str(d.get("url", "")),
            title=str(d.get("title") or ""),
            description=str(d.get("description") or ""),
            position=int(d.get("position") or i + 1),
        )
        for i, d in enumerate(answer.get("data", {}).get("web", []))
        if isinstance(d, dict)
    ]
    found = SearchResults(query=query, results=hits, warning=answer.get("warning"))
    lines = [_hit(h) for h in hits]
    text = "\n".join(lines) or f"no results for {query!r}"
    if found.warning:
        text += f"\n\n[warning: {one_line(found.warning)}]"
    return CallToolResult(
        content=[TextContent(type="text", text=text)],
        structured_content=found.model_dump(mode="json", exclude_none=True),
    )


def _hit(h: SearchHit) -> str:
    """A result as two lines of sift's: what the engine said of a page is made one line each."""
    head = f"{h.position}. {one_line(h.title)} — {one_line(h.url)}"
    return f"{head}\n   {one_line(h.description)}".rstrip()
