"""The `read` and `verify` tools: many sources, one question, one budget (`POST /v1/read`), and
whether a quote is in a page (`POST /v1/verify`). Both answer data: the passages with their
citations and every source's state, or where a quote is."""

from __future__ import annotations

from typing import Annotated, Any

from mcp.server.mcpserver import Context
from mcp.server.mcpserver.exceptions import ToolError
from mcp.types import CallToolResult, TextContent
from pydantic import Field

from sift.mcp.args import MaxTokens, Pages, Url
from sift.mcp.schemas import Passage, ReadAnswer, ReadSource, Verified
from sift.mcp.server import of

READ = """\
Read several URLs (web pages, PDFs, office files …) for one question within ONE token budget: \
sift fetches them all, then spends `max_tokens` on the passages that best answer `question` \
across every source (without a question, each source's opening, shared fairly). Each passage \
is cited `[sift: source N · page P · chars A–B · URL]`; each source is ok, cut (read on with \
`fetch` of its url and the start_index given) or failed (its error). Prefer this to fetching \
each result of a search one by one."""

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
    body: dict[str, Any] = {"urls": urls}
    for key, value in (("question", question), ("max_tokens", max_tokens), ("pages", pages)):
        if value is not None:
            body[key] = value
    answer = await of(ctx).upstream.call(ctx, "POST", "/v1/read", body)
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
