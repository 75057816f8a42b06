"""The `read` and `verify` tools: many sources, one question, one budget (`POST /v1/read`), and
whether a quote is in a page (`POST /v1/verify`). Both answer data: the passages with their
citations and every source's state, or where a quote is. A long read, for a client that takes
tasks, answers as a task (`_as_task`, `ended`; tasks.py)."""

from __future__ import annotations

import base64
import binascii
import json
import urllib.parse
from typing import Annotated, Any

from mcp.server.mcpserver import Context
from mcp.server.mcpserver.exceptions import ToolError
from mcp.types import CallToolResult, TextContent
from pydantic import Field

from sift.mcp import tasked
from sift.mcp.args import MaxTokens, Pages, Url
from sift.mcp.schemas import Passage, ReadAnswer, ReadSource, Verified
from sift.mcp.server import of
from sift.mcp.upstream import SiftRefused, Upstream

READ = """\
Read several URLs (web pages, PDFs, office files …) for one question within ONE token budget: \
sift fetches them all, then spends `max_tokens` on the passages that best answer `question` \
across every source (without a question, each source's opening, shared fairly). Each passage \
is cited `[sift: source N · page P · chars A–B · URL]`; each source is ok, cut (read on with \
`fetch` of its url and the start_index given, with the pages given if any) or failed (its \
error). Prefer this to fetching each result of a search one by one."""

TASK_SOURCES = 3  # a read of this many sources is long: a task where the client takes tasks
SPEC_CAP = 2048  # the most characters a read task's id spends on its question, budget, pages

VERIFY = """\
Check a quote against a page: whether it is in the page's text (exactly, or with white space \
folded; a near-miss is never found), where (page, character offsets), and, given the \
content_hash a citation named, whether the page changed since. `refetch` asks the site again \
instead of sift's cached copy."""


async def read(
    urls: Annotated[list[str], Field(description="the URLs to read", min_length=1)],
    ctx: Context,
    question: Annotated[
        str | None, Field(description="spend the budget on what answers this")
    ] = None,
    max_tokens: MaxTokens = None,
    pages: Pages = None,
) -> Annotated[CallToolResult, ReadAnswer]:
    recall: dict[str, Any] = {}
    for key, value in (("question", question), ("max_tokens", max_tokens), ("pages", pages)):
        if value is not None:
            recall[key] = value
    if tasked.taking(len(urls) >= TASK_SOURCES) and await _as_task(ctx, urls, recall):
        said = ReadAnswer(tokens=0, max_tokens=max_tokens or 0, passages=[], sources=[])
        return CallToolResult(content=[], structured_content=said.model_dump(mode="json"))
    return answered(await of(ctx).upstream.call(ctx, "POST", "/v1/read", {"urls": urls, **recall}))


async def _as_task(ctx: Context, urls: list[str], recall: dict[str, Any]) -> bool:
    """The read as a task: a sift batch job fetches its sources into the cache, and the task's
    id keeps the question, budget and pages (`spec`) for the read that answers it once the job
    is over (`ended`). False, and the read answers inline, where the id would be too long or
    sift will not hold the sources as a job (one refused by its guard at once, the caller's
    batch job still running, more than a batch holds, batch disabled or its store down)."""
    spec = base64.urlsafe_b64encode(json.dumps(recall, separators=(",", ":")).encode())
    if len(spec) > SPEC_CAP:
        return False
    body = {"targets": [{"url": u} for u in urls]}
    try:
        job = await of(ctx).upstream.call(ctx, "POST", "/v1/batch", body)
    except SiftRefused as exc:
        if exc.status == 401:  # the read would be refused alike: say so
            raise
        return False
    return tasked.started("read", str(job["job_id"]), spec.decode().rstrip("="))


def recalled(spec: str) -> dict[str, Any]:
    """What a read task's id keeps (`_as_task`); ValueError if it is not such."""
    if len(spec) > SPEC_CAP:
        raise ValueError("too long")
    try:
        said = json.loads(base64.b64decode(spec + "=" * (-len(spec) % 4), b"-_", validate=True))
    except (binascii.Error, UnicodeDecodeError, json.JSONDecodeError):
        raise ValueError("not a read task") from None
    if not isinstance(said, dict) or set(said) - {"question", "max_tokens", "pages"}:
        raise ValueError("not a read task")
    return said


async def ended(upstream: Upstream, headers: Any, job_id: str, spec: str) -> CallToolResult:
    """What a read task answers once its job is over: the read of the job's sources, now in
    sift's cache, with the question, budget and pages the task recalls."""
    job = await upstream.ask(headers, "GET", f"/v1/batch/{urllib.parse.quote(job_id, safe='')}")
    if job.get("error"):
        return _failed(f"fetching the sources failed: {job['error']}")
    urls = [t["url"] for t in sorted(job["targets"], key=lambda t: int(t["idx"]))]
    try:
        answer = await upstream.ask(headers, "POST", "/v1/read", {"urls": urls, **recalled(spec)})
        return answered(answer)
    except ToolError as exc:
        return _failed(str(exc))


def answered(answer: dict[str, Any]) -> CallToolResult:
    """sift's `/v1/read` answer as the tool's: its text, and the passages as data; a
    ToolError when no source could be read (the first one's error)."""
    sources = [_source(s) for s in answer["sources"]]
    if all(s.status == "error" for s in sources):  # nothing read: the first source's error
        first = sources[0]
        raise ToolError(f"{first.error} (hint: {first.hint})" if first.hint else str(first.error))
    said = ReadAnswer(
        tokens=answer["tokens"],
        max_tokens=answer["max_tokens"],
        passages=[Passage(**p) for p in answer["passages"]],
        sources=sources,
    )
    return CallToolResult(
        content=[TextContent(type="text", text=answer["content"])],
        structured_content=said.model_dump(mode="json"),
    )


def _failed(why: str) -> CallToolResult:
    return CallToolResult(content=[TextContent(type="text", text=why)], is_error=True)


def _source(state: dict[str, Any]) -> ReadSource:
    err = state.get("error") or {}
    nxt = state.get("next") or {}
    return ReadSource(
        url=state["url"],
        status=state["status"],
        error=err.get("error"),
        hint=err.get("hint"),
        code=state.get("code"),
        next_start_index=nxt.get("offset"),
        next_pages=nxt.get("pages"),
        not_shown=state.get("not_shown"),
        content_hash=state.get("content_hash"),
    )


async def verify(
    url: Url,
    quote: Annotated[str, Field(description="the words to look for", min_length=1)],
    ctx: Context,
    content_hash: Annotated[
        str | None, Field(description="the content_hash the citation named")
    ] = None,
    refetch: Annotated[bool, Field(description="ask the site again, not the cache")] = False,
) -> Annotated[CallToolResult, Verified]:
    body: dict[str, Any] = {"url": url, "quote": quote, "refetch": refetch}
    if content_hash is not None:
        body["content_hash"] = content_hash
    answer = await of(ctx).upstream.call(ctx, "POST", "/v1/verify", body)
    said = Verified(**{k: v for k, v in answer.items() if k in Verified.model_fields})
    changed = {None: "", True: "; the page changed since", False: "; unchanged"}[said.changed]
    if said.found:
        part = f"{said.unit} {said.part}, " if said.part is not None else ""
        text = f"found ({said.match}) at {part}characters {said.start}–{said.end}{changed}"
    else:
        text = f"not found in {said.url} (content_hash {said.content_hash}){changed}"
    return CallToolResult(
        content=[TextContent(type="text", text=text)],
        structured_content=said.model_dump(mode="json"),
    )
