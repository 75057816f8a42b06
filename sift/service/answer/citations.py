"""Citations of what an answer quotes from its document: each grep hit's line and each
passage a digest quotes (an extractive digest quotes; a model's own words are not found, and
get none), located in the document's text as `/v1/read` and `/v1/verify` read it
(`documents/quotes.py`): the same offsets, the same version, checkable by `/v1/verify`."""

from __future__ import annotations

import re
from collections.abc import Hashable, Iterator
from typing import TYPE_CHECKING

import msgspec

from sift.core.envelope import Citation
from sift.core.fence import neutralise
from sift.documents.grep import GREP_MAX_HITS, compile_grep
from sift.documents.pages import UNITS, PagedText, parse_pages
from sift.documents.quotes import find, layout, remembered, spans_of
from sift.documents.render import full_text

if TYPE_CHECKING:
    from sift.core.envelope import Envelope
    from sift.core.request import FetchParams
    from sift.service.document import Document
    from sift.service.parts.runtime import Runtime

_CITED_LINE = re.compile(r"^(?P<text>.+?)…? \((?:p|s|sl|sh|ch)\. (?P<part>\d+)\)$", re.MULTILINE)


async def cited(
    svc: Runtime, p: FetchParams, doc: Document, env: Envelope, paged: PagedText | None
) -> Envelope:
    """`env` with the citations of its grep hits or its digest's passages (none else), found
    on a CPU thread."""
    if env.unchanged or not (p.grep or env.digest is not None):
        return env
    pages = doc.pages if doc.pages is not None else paged
    cost = 4 * (len(doc.content.text) + (pages.chars if pages is not None else 0)) + 1
    return await svc.cpu.compute(with_citations, p, doc, env, paged, cost=cost)


def with_citations(
    p: FetchParams, doc: Document, env: Envelope, paged: PagedText | None
) -> Envelope:
    """`cited`'s work, where the caller may block (the cached `sift extract`)."""
    if env.unchanged or not (p.grep or env.digest is not None):
        return env
    c = doc.content
    pages = doc.pages if doc.pages is not None else paged
    # the document's parts' spans are remembered by its identity (not a private request's)
    key = (c.content_hash, c.caller_class) if c.content_hash and not p.private else None
    found = _citations(c.text, pages, c.kind, p.grep, p.pages, env.content, key)
    said = tuple(
        Citation(url=p.url, start=s, end=e, content_hash=c.content_hash, part=n, unit=u)
        for s, e, n, u in found
    )
    return msgspec.structs.replace(env, citations=said)


def _citations(
    markdown: str,
    paged: PagedText | None,
    kind: str,
    grep: str | None,
    pages: str | None,
    answer: str,
    key: Hashable | None,
) -> list[tuple[int, int, int | None, str | None]]:
    """(start, end, part, unit) of each quoted snippet found in the document's text."""
    if paged is not None and key is not None:
        key = layout(paged, key)
    if grep is not None and paged is not None:
        snippets = remembered(
            None if key is None else ("grep", key, grep, pages),
            lambda: list(_grep_lines(paged, grep, pages)),
            lambda lines: 256 + sum(len(line) + 64 for _, line in lines),
        )
    else:
        snippets = [(int(m["part"]), m["text"]) for m in _CITED_LINE.finditer(answer)]
    if not snippets:
        return []
    if paged is None or kind == "html":  # flat: found anywhere in the markdown
        return [(*at, None, None) for _, s in snippets if (at := _anywhere(markdown, s))]
    # the parts' spans up to the last one quoted; each quote is looked for in its own part's
    # text, and the whole text is joined only for a quote of a part not in it (an empty one)
    spans = spans_of(paged, key, max(n for n, _ in snippets))
    unit = UNITS[paged.kind][0]
    whole: str | None = None
    blocks: dict[int, str] = {}
    out: list[tuple[int, int, int | None, str | None]] = []
    for number, snippet in snippets:
        span = spans.get(number)
        if span is None:
            whole = full_text(paged) if whole is None else whole
            if at := _anywhere(whole, snippet):
                out.append((*at, None, None))
            continue
        if number not in blocks:  # the part's text, as the text with markers has it
            blocks[number] = neutralise(paged.pages[number - 1]).strip("\n")
        found = find(blocks[number], snippet, [])
        if found is not None:
            out.append((span.start + found.start, span.start + found.end, number, unit))
    return out


def _grep_lines(paged: PagedText, pattern: str, pages: str | None) -> Iterator[tuple[int, str]]:
    """The matching lines as grep shows them (`documents/grep.py`): (page, line), the first
    GREP_MAX_HITS."""
    regex = compile_grep(pattern)
    # whole pages first, as grep does: only a page with a matching line is split into lines
    page_regex = compile_grep("(?m)" + pattern) if len(pattern.encode()) <= 196 else None
    a, b = parse_pages(pages, paged.count) if pages is not None else (1, paged.count)
    hits = 0
    for n in range(a, b + 1):
        if page_regex is not None and not page_regex.search(paged.pages[n - 1]):
            continue
        for line in paged.pages[n - 1].split("\n"):
            if line.strip() and regex.search(line):
                yield n, line.strip()
                hits += 1
                if hits >= GREP_MAX_HITS:
                    return


def _anywhere(text: str, snippet: str) -> tuple[int, int] | None:
    """Where `snippet` is in `text`, with no parts to keep it in."""
    at = find(text, snippet, [])
    return (at.start, at.end) if at is not None else None
