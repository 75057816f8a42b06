"""The MCP tools: `fetch` and the batch calls, each one call to sift's HTTP API.

The descriptions are what an agent reads before it calls, so they teach the one habit that
matters with sift: a long document answers with its map (outline, size, how to ask), and the
agent asks again for the part it needs with `pages` or `grep` instead of reading it all.
`map` and `crawl` are not here yet: they need sift's /v2/map and /v2/crawl, which do not exist.
"""

from __future__ import annotations

import urllib.parse
from typing import Annotated, Any

from mcp.server.mcpserver import Context, MCPServer
from mcp.server.mcpserver.exceptions import ToolError
from mcp.types import ToolAnnotations
from pydantic import Field

from sift import __version__
from sift.mcp.upstream import Upstream

INSTRUCTIONS = """\
sift fetches web pages and documents (HTML, PDF, JSON, text) safely and answers clean text.
A long document (a 300-page PDF, a long manual) does not come back whole: the first answer is \
its map — title, size, outline with page numbers, the leading pages. Read the map, then call \
`fetch` again on the same URL with `pages` (e.g. "41-60") or `grep` (a regex) for the part you \
need; those answers come from sift's cache. Use `question` to have sift answer from the document.
"""

FETCH = """\
Fetch a URL (web page, PDF, JSON, text) as clean markdown text, with a short header (title, \
source, page count).

A document longer than one answer returns its MAP instead of the full text: the outline with \
page numbers (`- 2 Background (p. 14)`), its size, and the leading pages. Then call fetch again \
with the same url and `pages="41-60"` for those pages, or `grep="attention head"` for matching \
lines with their page numbers (`p. 41: …`). Long HTML pages work the same way with sections. \
Errors come back as one line saying what happened (blocked address, upstream 404, no text \
layer…) with a hint such as `pages`, `grep`, `ocr` or `browser`."""

BATCH_FETCH = """\
Queue up to 32 URLs to be fetched in the background (one job per caller at a time); returns \
the job id at once. Poll it with batch_status, then read each result with batch_result. \
`pages`, `grep` and `question` apply to every URL."""

BATCH_STATUS = """\
The state of a batch job: queued / running / done / failed / cancelled, how many targets are \
done, and each target's status and error. Read a finished target's text with batch_result."""

BATCH_RESULT = """\
The result of one target of a batch job (idx from batch_status, starting at 0): its clean \
text, or its error. A long document's result is its map; fetch it again with pages or grep."""

READ_ONLY = ToolAnnotations(read_only_hint=True, open_world_hint=True)

Url = Annotated[str, Field(description="http(s) URL to fetch")]
Pages = Annotated[
    str | None, Field(description='page or section range of a long document: "41-60", "7", "300-"')
]
Grep = Annotated[
    str | None,
    Field(description="RE2 regex: matching lines with their page numbers (case-insensitive "
          "unless the pattern has upper case)"),
]  # fmt: skip
Question = Annotated[
    str | None, Field(description="answer this question from the document, citing pages")
]
MaxChars = Annotated[int | None, Field(description="lower the answer's size cap", gt=0)]
Raw = Annotated[bool, Field(description="the body as text, not cleaned (HTML, JSON, text)")]
Jq = Annotated[str | None, Field(description="jq program applied to a JSON response")]
Render = Annotated[bool, Field(description="render with a browser (when sift has one)")]
JobId = Annotated[str, Field(description="the job id batch_fetch returned")]


def build(upstream: Upstream) -> MCPServer:
    """The MCP server with sift's tools, each a client of `upstream`."""
    server: MCPServer = MCPServer(
        "sift", version=__version__, instructions=INSTRUCTIONS, log_level="WARNING"
    )

    @server.tool(description=FETCH, annotations=READ_ONLY, structured_output=False)
    async def fetch(
        url: Url,
        ctx: Context,
        pages: Pages = None,
        grep: Grep = None,
        question: Question = None,
        max_chars: MaxChars = None,
        raw: Raw = False,
        jq: Jq = None,
        render: Render = False,
    ) -> str:
        body: dict[str, Any] = {"url": url}
        for key, value in (("pages", pages), ("grep", grep), ("question", question),
                           ("max_chars", max_chars), ("jq", jq)):  # fmt: skip
            if value is not None:
                body[key] = value
        if raw:
            body["mode"] = "raw"
        if render:
            body["render"] = True
        env = await upstream.call(ctx, "POST", "/v1/fetch", body)
        text = str(env.get("content", ""))
        if env.get("warning"):
            text += f"\n\n[warning: {env['warning']}]"
        return text

    @server.tool(description=BATCH_FETCH)
    async def batch_fetch(
        urls: Annotated[list[str], Field(description="the URLs to fetch", min_length=1)],
        ctx: Context,
        pages: Pages = None,
        grep: Grep = None,
        question: Question = None,
    ) -> dict[str, Any]:
        common = {k: v for k, v in (("pages", pages), ("grep", grep), ("question", question)) if v}
        targets = [{"url": u, **common} for u in urls]
        return dict(await upstream.call(ctx, "POST", "/v1/batch", {"targets": targets}))

    @server.tool(description=BATCH_STATUS, annotations=READ_ONLY)
    async def batch_status(job_id: JobId, ctx: Context) -> dict[str, Any]:
        return dict(await upstream.call(ctx, "GET", _job(job_id)))

    @server.tool(description=BATCH_RESULT, annotations=READ_ONLY, structured_output=False)
    async def batch_result(
        job_id: JobId,
        idx: Annotated[int, Field(description="the target's index, from 0", ge=0)],
        ctx: Context,
    ) -> str:
        target = await upstream.call(ctx, "GET", f"{_job(job_id)}/{idx}")
        if target.get("status") != "done":
            why = target.get("error") or f"target {idx} is {target.get('status')}"
            hint = f" (hint: {target['hint']})" if target.get("hint") else ""
            raise ToolError(f"{why}{hint}")
        return str(target.get("result", {}).get("content", ""))

    return server


def _job(job_id: str) -> str:
    return f"/v1/batch/{urllib.parse.quote(job_id, safe='')}"
