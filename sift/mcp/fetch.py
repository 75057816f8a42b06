"""The `fetch` tool, and how a document answer reads in a tool's result (`batch_result`'s
too): its text, its warning, how to read on, its facts, and a link to the document."""

from __future__ import annotations

import json
import re
from typing import Any

import msgspec
from mcp.server.mcpserver import Context
from mcp.types import CallToolResult, ResourceLink, TextContent

from sift.core.envelope import Envelope
from sift.core.request import next_fields
from sift.mcp.args import (
    Grep,
    IfNoneMatch,
    Jq,
    MaxChars,
    MaxTokens,
    Pages,
    Question,
    Raw,
    Render,
    StartIndex,
    Url,
)
from sift.mcp.notify import watched
from sift.mcp.server import of

FETCH = """\
Fetch a URL (web page, PDF, DOCX/PPTX/XLSX and other office files, EPUB, JSON, text) as \
clean markdown text, with a short header (title, \
source, page count).

A document longer than one answer returns its MAP instead of the full text: the outline with \
page numbers (`- 2 Background (p. 14)`), its size, and the leading pages. Then call fetch again \
with the same url and `pages="41-60"` for those pages, or `grep="attention head"` for matching \
lines with their page numbers (`p. 41: …`). Long HTML pages work the same way with sections. \
Errors come back as one line saying what happened (blocked address, upstream 404, no text \
layer…) with a hint such as `pages`, `grep`, `ocr` or `browser`.

Budgets: `max_tokens` caps the answer in tokens (o200k_base, as counted for every answer). An \
answer cut by a cap ends with `[continue: …]`: call fetch again with the same arguments and the \
`start_index` (or `pages`) it names to read on from there — served from sift's cache, never \
downloaded again; read to the end that way, you get the whole text exactly once."""


# A document answer: its text and link; with `structuredContent` when it found an injection.
Answered = list[TextContent | ResourceLink] | CallToolResult


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
    max_tokens: MaxTokens = None,
    start_index: StartIndex = None,
    if_none_match: IfNoneMatch = None,
) -> Answered:
    body: dict[str, Any] = {"url": url}
    for key, value in (
        ("pages", pages),
        ("grep", grep),
        ("question", question),
        ("max_chars", max_chars),
        ("jq", jq),
        ("max_tokens", max_tokens),
        ("offset", start_index),
        ("if_none_match", if_none_match),
    ):
        if value is not None:
            body[key] = value
    if raw:
        body["mode"] = "raw"
    if render:
        body["render"] = True
    upstream = of(ctx).upstream
    answer = await watched(ctx, upstream, url, upstream.fetch(ctx, body))
    text = answer.content
    if answer.unchanged:
        text = "[unchanged: the document is the same as the version you named]"
    elif answer.changes:
        text += f"\n\n[changes since {if_none_match}:]\n{answer.changes}"
    return await answered(ctx, "fetch", answer, text, _continuation(answer) + _facts(answer))


async def answered(
    ctx: Context, tool: str, answer: Envelope, text: str, after: str = "", *, warn: bool = True
) -> Answered:
    """The text of a document answer (its warning unless `warn` is off, then `after`), and
    the link to the document it came from."""
    if warn and answer.warning:
        text += f"\n\n[warning: {answer.warning}]"
    text = _OFFSET_NOTE.sub(r"\1start_index=\2", text) + after
    server = of(ctx)
    cached = ", cached" if answer.cached else ""
    await server.logbook.say(ctx, "info", f"{tool}: {answer.kind}, {answer.chars} chars{cached}")
    link = server.documents.link(ctx, answer)
    blocks: list[TextContent | ResourceLink] = [TextContent(type="text", text=text)]
    blocks += [link] if link else []
    if not answer.injection:
        return blocks
    # what addresses an AI reader, as data too (the text's warning line names it)
    found = {"injection": msgspec.to_builtins(answer.injection)}
    return CallToolResult(content=list(blocks), structured_content=found)


# sift's note on a page cut at the cap (`[returned pages 3–5 …; ask pages="3-9" with offset=N
# for the rest]`, a line of its own in brackets: a document's such line comes escaped) says
# the HTTP field; a tool's argument is `start_index`.
_OFFSET_NOTE = re.compile(r"^(\[[^\n]* with )offset=(\d+)(?= for the rest\b[^\n]*\]$)", re.M)


def _facts(answer: Envelope) -> str:
    """The answer's content_hash (for `if_none_match`) and what the site says about automated
    use (`usage`), as a last line."""
    said = f"content_hash: {answer.content_hash}"
    if answer.source:
        said += f"; source: {answer.source}"
    if answer.usage.says():
        usage = msgspec.to_builtins(answer.usage)
        said += f"; usage: {json.dumps(usage, separators=(',', ':'))}"
    return f"\n\n[{said}]"


def _continuation(answer: Envelope) -> str:
    """How to read on from an answer cut by a cap, in the tool's own argument names."""
    if not answer.next:
        return ""
    how = ", ".join(
        f"start_index={v}" if k == "offset" else f'{k}="{v}"'
        for k, v in next_fields(answer.next).items()
    )
    return f"\n\n[continue: call fetch again with {how}]"
