"""Long documents as an agent reads them: `PagedText`, the pages (a PDF's, a long HTML
page's sections, an office file's parts) joined with `--- page N ---` markers so agents and
digests can cite them, page ranges, and the notes on pages flagged while extracting.
`render.render` chooses between the whole text, a range, the map (`map.py`) and grep hits
(`grep.py`).
"""

from __future__ import annotations

import re
from typing import Any, Literal

import msgspec

from sift.core.errors import BadRequest
from sift.core.fence import neutralise, one_line
from sift.core.types import OutlineItem
from sift.documents.window import window

FRAGMENT_URL_MAX = 500  # a longer URL is not repeated in maps and notes
MAX_ANSWER_PAGES = 100
TITLE_CAP = 200
OUTLINE_TITLE_CAP = 120

# What a document's pages are called, by `PagedText.kind`: a PDF's pages, a long HTML page's
# sections, an office file's or e-book's parts.
UNITS = {
    "pdf": ("page", "p."),
    "html": ("section", "s."),
    "section": ("section", "s."),
    "slide": ("slide", "sl."),
    "sheet": ("sheet", "sh."),
    "chapter": ("chapter", "ch."),
}
PageKind = Literal["pdf", "html", "section", "slide", "sheet", "chapter"]
_PART_KINDS: dict[str, PageKind] = {
    "section": "section",
    "slide": "slide",
    "sheet": "sheet",
    "chapter": "chapter",
}
_PAGES_SPEC = re.compile(r"\s*(\d{1,9})\s*(?:([-–—])\s*(\d{1,9})?)?\s*")


class PagedText(msgspec.Struct, frozen=True, kw_only=True):
    """The text of a long document split into pages (sections for HTML); `total` pages exist
    when extraction stopped early.

    `warnings` maps a page number to why its text is unreliable (or failed).
    """

    pages: tuple[str, ...]
    kind: PageKind = "pdf"
    title: str = ""
    outline: tuple[OutlineItem, ...] = ()
    warnings: dict[int, str] = {}
    total: int = 0

    @property
    def count(self) -> int:
        return len(self.pages)

    @property
    def size(self) -> int:
        return self.total or len(self.pages)

    @property
    def chars(self) -> int:
        """Characters of text in all (what rendering and grep work through)."""
        return sum(map(len, self.pages))


def from_rows(
    meta: dict[str, Any], rows: list[tuple[int, str, str | None]], count: int | None = None
) -> PagedText:
    """A PDF from the page cache: its meta (title, outline, pages in all) and its page rows
    (number, text, warning). With a `count`, the rows are a window of pages 1–count and the
    pages outside it are left empty: enough for a page range, which reads only its own."""
    texts: tuple[str, ...] = tuple(t for _, t, _ in rows)
    if count is not None:
        blank = [""] * count
        for n, text, _ in rows:
            blank[n - 1] = text
        texts = tuple(blank)
    outline = tuple(OutlineItem(**o) for o in meta.get("outline", ()))
    return PagedText(
        kind=page_kind(meta.get("unit", "page")),
        title=meta.get("title", ""),
        pages=texts,
        outline=outline,
        warnings={n: w for n, _, w in rows if w},
        total=meta.get("pages", 0),
    )


def page_kind(unit: str) -> PageKind:
    """The `PagedText.kind` of a document whose parts are `unit`s (a PDF's are pages)."""
    return _PART_KINDS.get(unit, "pdf")


class Rendered(msgspec.Struct, frozen=True, kw_only=True):
    """What `render` answers: the content and the facts the envelope reports about it."""

    content: str
    truncated: bool = False
    map: bool = False
    returned: tuple[int, int] | None = None
    grep_hits: int = 0
    note: str | None = None
    # what to ask next for the rest, when cut: {"pages": "8-20"} (that range, from its start),
    # or {"offset": n} (the same request, read on from there); never both
    next: dict[str, int | str] | None = None
    # how much of `content` is the text the same request's `offset` counts in (a range's
    # pages, grep hits, before any note): a cut inside it goes on by `offset`
    body: int | None = None


def with_markers(
    pages: list[str] | tuple[str, ...],
    numbers: list[int] | range,
    *,
    warnings: dict[int, str] | None = None,
    unit: str = "page",
    fenced: bool = False,
) -> str:
    """`<page 1 text>\\n\\n--- page 2 ---\\n\\n<page 2 text>`; every page but page 1 is marked.

    A page with a warning carries it right under its marker, where the reader meets it. The
    pages' text is fenced (`fence.neutralise`): no line of it reads as a marker or a note;
    `fenced` says the caller fenced them already (once for a whole rendering: the fence reads
    every character, and a map measured its leading pages one by one, then joined them).
    """
    parts: list[str] = []
    for text, n in zip(pages, numbers, strict=True):
        block = (text if fenced else neutralise(text)).strip("\n")
        if warnings and n in warnings:
            block = f"[warning: {one_line(warnings[n])}]\n\n{block}"
        parts.append(block if n == 1 and not parts else f"--- {unit} {n} ---\n\n{block}")
    return "\n\n".join(parts)


def page_spec(spec: str) -> tuple[int, int | None]:
    """The syntax of a `pages` value: `a-b`, `a` or `a-` (None = to the end).

    Raises:
        BadRequest: not one of those forms.
    """
    m = _PAGES_SPEC.fullmatch(spec) if isinstance(spec, str) else None
    if not m:
        raise BadRequest(f'invalid `pages`: expected "a-b", "a" or "a-", got {str(spec)[:40]!r}')
    a = int(m.group(1))
    if m.group(2) is None:
        return a, a
    return a, int(m.group(3)) if m.group(3) else None


def parse_pages(spec: str, n: int) -> tuple[int, int]:
    """The 1-based inclusive range `spec` names in a document of `n` pages.

    An end past the last page is clamped to it; anything else outside 1–n is an error.

    Raises:
        BadRequest: malformed (naming the field) or `pages out of range (1–n)`.
    """
    a, b = page_spec(spec)
    if b is None:
        b = n
    if a < 1 or b < a or a > n:
        raise BadRequest(f"pages out of range (1–{n})")
    return a, min(b, n)


def extracted_note(doc: PagedText) -> str:
    if doc.size > doc.count:
        return f"\n\n[{UNITS[doc.kind][0]}s 1–{doc.count} of {doc.size} extracted]"
    return ""


def warning_note(doc: PagedText, numbers: range) -> str | None:
    """One line naming the flagged pages among `numbers` by reason, or None."""
    flagged = [n for n in numbers if n in doc.warnings]
    if not flagged:
        return None
    unit = UNITS[doc.kind][0]
    notes = []
    for reason in sorted({doc.warnings[n] for n in flagged}):
        some = [n for n in flagged if doc.warnings[n] == reason]
        shown = ", ".join(str(n) for n in some[:20]) + (" …" if len(some) > 20 else "")
        notes.append(f"{unit}s {shown}: {reason}")
    return "; ".join(notes)


def fragment_url(url: str, name: str, value: str) -> str | None:
    """`url#name=value` for an http(s) URL short enough to repeat in an answer, else None."""
    if len(url) > FRAGMENT_URL_MAX or not url.startswith(("http://", "https://")):
        return None
    return f"{url}#{name}={value}"


def page_range(doc: PagedText, rng: tuple[int, int], out_cap: int, url: str = "") -> Rendered:
    """Pages a–b, at most 100 of them and what fits in the cap, with a note when cut."""
    a, b = rng
    unit, _ = UNITS[doc.kind]
    room = out_cap - 160  # for the note
    last = a - 1
    size = 0
    fenced: list[str] = []  # each page fenced once
    for n in range(a, min(b, a + MAX_ANSWER_PAGES - 1) + 1):
        fenced.append(neutralise(doc.pages[n - 1]))
        piece = len(with_markers(fenced[-1:], [n], warnings=doc.warnings, unit=unit, fenced=True))
        if size + piece + 2 > room and last >= a:
            break
        last, size = n, size + piece + 2
    content = with_markers(
        fenced[: last - a + 1], range(a, last + 1), warnings=doc.warnings, unit=unit, fenced=True
    )
    cut_page = len(content) > room
    if cut_page:  # one page over the cap: its first part, cut between blocks
        content = content[: window(content, 0, max(1, room))]
    notes = []
    nxt: dict[str, int | str] | None = None
    body = len(content)
    if last < b or cut_page:
        # a cut page reads on in the same range, by `offset`: never the range again
        nxt = {"offset": body} if cut_page else {"pages": f"{last + 1}-{b}"}
        there = fragment_url(url, "pages", f"{last + 1}-{b}")
        more = f'; ask pages="{last + 1}-{b}" for more' if last < b else ""
        more += f" (or {there})" if more and there else ""
        if cut_page:
            more = f'; ask pages="{a}-{b}" with offset={len(content)} for the rest'
        cut = f" ({unit} {last} cut at the output cap)" if cut_page else ""
        notes.append(f"returned {unit}s {a}–{last} of {a}–{b}{cut}{more}")
    flagged = warning_note(doc, range(a, last + 1))
    if flagged:
        notes.append(flagged)
    note = "; ".join(notes) or None
    if notes and (last < b or cut_page):
        content += f"\n\n[{notes[0]}]"
    return Rendered(
        content=content[:out_cap],
        truncated=last < b or cut_page,
        returned=(a, last),
        note=note,
        next=nxt,
        body=body,
    )
