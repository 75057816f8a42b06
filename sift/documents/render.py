"""A document as the text of one answer: whole, a page range, its map or grep hits, within
the output cap; and the short context header every answer's text shares."""

from __future__ import annotations

import datetime as dt
import functools

from sift.core.fence import neutralise, one_line
from sift.documents import tokens
from sift.documents.grep import grep_pages
from sift.documents.map import doc_map
from sift.documents.pages import (
    UNITS,
    PagedText,
    Rendered,
    extracted_note,
    page_range,
    parse_pages,
    with_markers,
)


def render(
    doc: PagedText,
    *,
    out_cap: int,
    pages: str | None = None,
    grep: str | None = None,
    url: str = "",
) -> Rendered:
    """The answer for `doc`: whole text, map, a page range, or grep hits; ≤ `out_cap` chars.

    `url` is the document's URL: the map and the notes name the fragment URLs to ask for next
    (`<url>#pages=41-60`), for clients that can only send a URL (Firecrawl, MCP, `/r/`).

    Raises:
        BadRequest: a bad `pages` range or grep pattern.
    """
    rng = parse_pages(pages, doc.count) if pages is not None else None
    if grep is not None:
        return grep_pages(doc, grep, out_cap, rng)
    if rng is not None:
        return page_range(doc, rng, out_cap, url)
    unit, _ = UNITS[doc.kind]
    fenced = tuple(map(neutralise, doc.pages))  # once: the whole text, the map's leading pages
    numbers = range(1, doc.count + 1)
    whole = with_markers(fenced, numbers, warnings=doc.warnings, unit=unit, fenced=True)
    if doc.kind == "html" and len(whole) <= out_cap:  # a page that fits reads as it was
        return Rendered(content="\n\n".join(fenced), returned=(1, doc.count))
    note = extracted_note(doc)
    if len(whole) + len(note) <= out_cap:
        returned = (1, doc.count) if doc.count else None
        return Rendered(content=whole + note, returned=returned, note=note.strip() or None)
    return doc_map(doc, out_cap, tokens.estimate(whole), url, fenced)


def full_text(doc: PagedText, *, pages: str | None = None, grep: str | None = None) -> str:
    """The text an `offset` reads in: the asked range or grep hits, else the whole document
    with its page markers, uncut (`window` takes the part that fits).

    Raises:
        BadRequest: a bad `pages` range or grep pattern.
    """
    rng = parse_pages(pages, doc.count) if pages is not None else None
    if grep is not None:
        return grep_pages(doc, grep, 1 << 40, rng).content
    a, b = rng or (1, doc.count)
    unit, _ = UNITS[doc.kind]
    text = with_markers(doc.pages[a - 1 : b], range(a, b + 1), warnings=doc.warnings, unit=unit)
    return text if rng else text + extracted_note(doc)


@functools.lru_cache(maxsize=4096)
def iso(ts: float) -> str:
    return dt.datetime.fromtimestamp(ts, dt.UTC).strftime("%Y-%m-%dT%H:%M:%SZ")


def header(
    title: str, url: str, fetched_at: float, pages: int | None = None, unit: str = "page"
) -> str:
    """The short context header: what the reader is reading, from where, and when (and how
    many parts, by their name: an xlsx has sheets, a deck slides)."""
    lines = [f"# {one_line(title)}"] if title else []
    extra = f" · {pages} {unit}{'' if pages == 1 else 's'}" if pages else ""
    lines.append(f"Source: {one_line(url)} · fetched {iso(fetched_at)}{extra}")
    return "\n".join(lines) + "\n\n"
