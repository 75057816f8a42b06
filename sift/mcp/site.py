"""The site tools: `map` lists a site's URLs and `crawl` walks it (sift's Firecrawl /v2/map
and /v2/crawl); a crawl answers the list of pages it read, which are then in sift's cache for
`fetch`."""

from __future__ import annotations

import time
import urllib.parse
from typing import Annotated, Any

import anyio
from mcp.server.mcpserver import Context
from mcp.types import CallToolResult, TextContent
from pydantic import Field

from sift.mcp import tasked
from sift.mcp.args import WaitSeconds
from sift.mcp.schemas import CrawlPage, CrawlState, SiteMap
from sift.mcp.server import of
from sift.mcp.upstream import Upstream

MAP = """\
List a site's URLs without reading them: from its robots.txt sitemaps, /sitemap.xml (indexes \
and gzipped sitemaps too) and the page's own links, on the same host. `search` keeps URLs \
containing a word; `limit` caps the list. Then `fetch` the URLs you need."""

CRAWL = """\
Crawl a site from `url`: sift reads the start page, follows its links on the same host and \
at or below url's path (robots.txt honoured) up to `limit` pages and `max_depth` link hops, \
and answers the pages it read (url, title, status). They are then in sift's cache: read each \
with `fetch` (use `pages` or `grep` on long ones). Waits up to `wait_seconds`; if the crawl is \
still running, call crawl_status with its id later."""

CRAWL_STATUS = """\
The state of a crawl started with `crawl`: scraping / completed / cancelled / failed, and the \
pages read so far (url, title, status). Read a page's text with `fetch`."""


async def map(
    url: Annotated[str, Field(description="the site's start URL")],
    ctx: Context,
    search: Annotated[str | None, Field(description="keep URLs containing this")] = None,
    limit: Annotated[int, Field(description="at most this many URLs", ge=1)] = 200,
    include_subdomains: Annotated[bool, Field(description="also subdomains")] = False,
) -> Annotated[CallToolResult, SiteMap]:
    body: dict[str, Any] = {"url": url, "limit": limit, "includeSubdomains": include_subdomains}
    if search:
        body["search"] = search
    answer = await of(ctx).upstream.call(ctx, "POST", "/v2/map", body)
    links = [str(link["url"]) for link in answer.get("links", [])]
    return CallToolResult(
        content=[TextContent(type="text", text=f"{len(links)} URLs\n" + "\n".join(links))],
        structured_content={"count": len(links), "links": links},
    )


async def crawl(
    url: Annotated[str, Field(description="the start URL")],
    ctx: Context,
    limit: Annotated[int, Field(description="at most this many pages", ge=1)] = 10,
    max_depth: Annotated[int | None, Field(description="link hops from url", ge=0)] = None,
    include_paths: Annotated[
        list[str] | None, Field(description="RE2 patterns a page's path must match")
    ] = None,
    exclude_paths: Annotated[
        list[str] | None, Field(description="RE2 patterns no page's path may match")
    ] = None,
    wait_seconds: WaitSeconds = 60,
) -> CrawlState:
    body: dict[str, Any] = {"url": url, "limit": limit}
    for key, value in (
        ("maxDiscoveryDepth", max_depth),
        ("includePaths", include_paths),
        ("excludePaths", exclude_paths),
    ):
        if value is not None:
            body[key] = value
    started = await of(ctx).upstream.call(ctx, "POST", "/v2/crawl", body)
    if tasked.started("crawl", str(started["id"])):
        return CrawlState(id=str(started["id"]), status="scraping")
    return await _crawl_state(ctx, str(started["id"]), wait_seconds)


async def crawl_status(
    job_id: Annotated[str, Field(description="the id crawl returned")], ctx: Context
) -> CrawlState:
    return await _crawl_state(ctx, job_id, 0)


async def _crawl_state(ctx: Context, job_id: str, wait: float) -> CrawlState:
    """The crawl's state once it is over or `wait` seconds have passed, with every page."""
    upstream = of(ctx).upstream
    deadline = time.monotonic() + wait
    while True:
        state = await upstream.call(ctx, "GET", _path(job_id))
        done, total = state.get("completed") or 0, state.get("total") or None
        await ctx.report_progress(done, total, f"{done} pages read")
        if state.get("status") != "scraping" or time.monotonic() >= deadline:
            break
        await anyio.sleep(1)
    return await crawl_state(upstream, ctx.headers, job_id, state)


async def ended(upstream: Upstream, headers: Any, job_id: str) -> CallToolResult:
    """What a crawl task answers once the crawl is over: what `crawl` answers."""
    state = await crawl_state(upstream, headers, job_id)
    return CallToolResult(
        content=[TextContent(type="text", text=state.model_dump_json(indent=2))],
        structured_content=state.model_dump(mode="json"),
        is_error=state.status == "failed",
    )


async def crawl_state(
    upstream: Upstream, headers: Any, job_id: str, state: dict[str, Any] | None = None
) -> CrawlState:
    """The crawl's state (`state`, as sift last said it, else asked now) with every page."""
    path = _path(job_id)
    if state is None:
        state = await upstream.ask(headers, "GET", path)
    docs, state = await _rest(upstream, headers, path, state)
    pages = [
        CrawlPage(
            url=d["metadata"].get("sourceURL"),
            title=d["metadata"].get("title", ""),
            status=d["metadata"].get("statusCode"),
        )
        for d in docs
        if isinstance(d, dict) and isinstance(d.get("metadata"), dict)
    ]
    return CrawlState(
        id=job_id,
        status=state.get("status"),
        completed=state.get("completed"),
        total=state.get("total"),
        pages=pages,
    )


def _path(job_id: str) -> str:
    return f"/v2/crawl/{urllib.parse.quote(job_id, safe='')}"


async def _rest(
    upstream: Upstream, headers: Any, path: str, state: dict[str, Any]
) -> tuple[list[Any], dict[str, Any]]:
    """Every document of a crawl that is over (`state`'s, then each `next` page's), and the
    state the last page said."""
    docs = list(state.get("data", []))
    seen = {path}
    while state.get("next") and state.get("status") != "scraping":
        page = path + "?" + urllib.parse.urlsplit(str(state["next"])).query
        if page in seen:
            break
        seen.add(page)
        state = await upstream.ask(headers, "GET", page)
        docs += state.get("data", [])
    return docs, state
