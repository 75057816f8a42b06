"""`POST /v1/read`: many sources, one question, one budget. Each source goes through the one
pipeline as `/v1/fetch` takes it (guard, gates, cache, deadline), all at once; a source that
fails is that source's error, never the read's. The budget is then spent across them by
`answer/passages.py`. Each source's text is what `/v1/fetch`'s `offset` counts in for the
same options (`source_text`), so a citation's offsets and a continuation's `offset` mean the
same thing there as here."""

from __future__ import annotations

import asyncio
import time
from typing import Any

import msgspec

from sift.core.callers import Caller
from sift.core.config.sections import READ_MAX_TOKENS, READ_MIN_TOKENS
from sift.core.errors import BadRequest, CallerBusy, ClientGone, SiftError
from sift.core.fence import neutralise
from sift.core.request import FetchParams
from sift.documents import sections
from sift.documents.quotes import part_spans
from sift.documents.render import full_text
from sift.service.answer.passages import Allotted, Source, allot
from sift.service.document import Document, Trace
from sift.service.params import check
from sift.service.parts.runtime import Runtime
from sift.service.steps import pipeline

# The options of `/v1/fetch` that apply to a source of a read (for every source, or one).
SOURCE_OPTIONS = frozenset(
    {
        "pages",
        "headers",
        "render",
        "wait_for",
        "mobile",
        "languages",
        "max_age",
        "timeout",
        "recover",
        "store",
        "whole_page",
        "include_tags",
        "exclude_tags",
    }
)


class ReadRequest(msgspec.Struct, frozen=True, kw_only=True):
    """A read, checked: its sources' fetch requests, the question and the budget."""

    sources: tuple[FetchParams, ...]
    question: str | None
    max_tokens: int


def parse_read(body: dict[str, Any], max_urls: int, default_tokens: int) -> ReadRequest:
    """A `/v1/read` body checked; every problem a 400 naming the field, before any fetch."""
    body = dict(body)
    urls = body.pop("urls", None)
    question = body.pop("question", None)
    max_tokens = body.pop("max_tokens", None)
    max_tokens = default_tokens if max_tokens is None else max_tokens  # null: as not given
    if not isinstance(urls, list) or not 1 <= len(urls) <= max_urls:
        raise BadRequest(f"invalid request: `urls` is a list of 1 to {max_urls} URLs")
    if question is not None and (not isinstance(question, str) or len(question) > 2000):
        raise BadRequest("invalid request: `question` is a string of at most 2000 characters")
    low, high = READ_MIN_TOKENS, READ_MAX_TOKENS  # `[read] max_tokens` is checked alike
    if not isinstance(max_tokens, int) or not low <= max_tokens <= high:
        raise BadRequest(f"invalid request: `max_tokens` must be {low} to {high:,}")
    _options(body, "")
    sources = []
    for n, entry in enumerate(urls):
        one = {"url": entry} if isinstance(entry, str) else entry
        if not isinstance(one, dict):
            raise BadRequest(f"invalid request: `urls[{n}]` is a URL or an object with `url`")
        _options({k: v for k, v in one.items() if k != "url"}, f"urls[{n}].")
        fields = {**body, **one, "context": False, "offset": 0, "max_chars": 1}
        try:
            p = check(msgspec.convert(fields, FetchParams))
        except msgspec.ValidationError as exc:
            raise BadRequest(f"invalid request: `urls[{n}]`: {exc}") from None
        sources.append(p)
    return ReadRequest(sources=tuple(sources), question=question, max_tokens=max_tokens)


def _options(fields: dict[str, Any], where: str) -> None:
    unknown = sorted(set(fields) - SOURCE_OPTIONS)
    if unknown:
        raise BadRequest(
            f"invalid request: `{where}{unknown[0]}` is not an option of a read "
            f"(its sources take {', '.join(sorted(SOURCE_OPTIONS))})"
        )


async def read(
    svc: Runtime, caller: Caller, req: ReadRequest, gone: asyncio.Future[None] | None = None
) -> dict[str, Any]:
    """The sources fetched at once, then the budget spent across them: the read's answer."""
    sources = await _sources(svc, caller, req.sources, gone)
    cost = sum(len(s.text) for s in sources) * 40
    done: Allotted = await svc.cpu.compute(allot, sources, req.question, req.max_tokens, cost=cost)
    return {
        "success": True,
        "question": req.question,
        "max_tokens": req.max_tokens,
        "tokens": done.tokens,
        "content": done.content,
        "passages": [
            {
                "source": p.source + 1,
                "url": sources[p.source].url,
                "part": p.part,
                "unit": sources[p.source].unit if p.part is not None else None,
                "start": p.start,
                "end": p.end,
                "content_hash": sources[p.source].content_hash,
                "score": p.score,
                "text": sources[p.source].text[p.start : p.end],
            }
            for p in done.passages
        ],
        "sources": done.states,
    }


async def _sources(
    svc: Runtime, caller: Caller, asked: tuple[FetchParams, ...], gone: asyncio.Future[None] | None
) -> list[Source]:
    """Every source at once; those a gate of the caller's own turned away for another of them
    (one PDF job, one render at a time: `CallerBusy`) then one after another, in what is left
    of the read's deadline."""
    until = time.monotonic() + svc.cfg.request_deadline
    firsts = await asyncio.gather(*(_source(svc, caller, p, gone, until) for p in asked))
    sources = []
    for p, (source, again) in zip(asked, firsts, strict=True):
        if again and time.monotonic() < until:
            source, _ = await _source(svc, caller, p, gone, until)
        sources.append(source)
    return sources


async def _source(
    svc: Runtime, caller: Caller, p: FetchParams, gone: asyncio.Future[None] | None, until: float
) -> tuple[Source, bool]:
    """One source through the pipeline as `/v1/fetch` runs it, by `until`; its error kept, not
    raised, and whether it was the caller's own gate that refused it."""
    try:
        budget = until - time.monotonic()
        result = await pipeline.within(svc, caller, p, Trace(), budget, gone=gone)
        return await document_source(svc, p, result.doc), False
    except ClientGone:
        raise
    except SiftError as exc:
        return Source(p.url, error=exc.to_body(), code=exc.status), isinstance(exc, CallerBusy)


async def document_source(svc: Runtime, p: FetchParams, doc: Document) -> Source:
    """The source a document is for citations: its text, its hash, its parts."""
    c = doc.content
    size = len(c.text) + (doc.pages.chars if doc.pages is not None else 0)
    text, unit, parts = await svc.cpu.compute(source_text, doc, p, cost=2 * size + 1)
    return Source(p.url, text, c.content_hash, unit, parts, options=same_text(p))


def same_text(p: FetchParams) -> dict[str, object]:
    """The options `/v1/fetch` needs beside `offset` to read the text a source was read in
    (the caller's own `headers` are theirs to send again, never echoed)."""
    said: dict[str, object] = {"pages": p.pages, "render": p.render or None}
    said |= {"whole_page": p.whole_page or None}
    said |= {"include_tags": list(p.include_tags) or None}
    said |= {"exclude_tags": list(p.exclude_tags) or None}
    return {k: v for k, v in said.items() if v is not None}


def source_text(doc: Document, p: FetchParams) -> tuple[str, Any, Any]:
    """What `/v1/fetch`'s `offset` counts in for `p` (`answer/render.py` `_full_text`): an
    HTML page's markdown as it is, else the pages (or the `pages` asked) with their markers;
    with the unit and spans of its parts."""
    c = doc.content
    paged = doc.pages
    if paged is None and p.pages and c.kind == "html":
        paged = sections.html_document(c.text, title=c.title)
    if paged is None or (c.kind == "html" and not p.pages):
        return neutralise(c.text), None, []  # fenced, as every answer's text is
    text = full_text(paged, pages=p.pages)
    unit, parts = part_spans(text, paged)
    return text, unit, parts
