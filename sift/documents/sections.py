"""A long HTML page read like a PDF: its markdown split into sections at its headings,
short ones merged, long ones split at paragraphs, each section a page."""

from __future__ import annotations

import re

from sift.core.types import OutlineItem
from sift.documents.pages import OUTLINE_TITLE_CAP, PagedText

SECTION_MIN = 1_500  # long HTML: merge sections shorter than this with the next
SECTION_MAX = 8_000  # …and split sections longer than this at paragraphs
_HEADING = re.compile(r"#{1,6}[ \t]+(.*?)[ \t#]*")
_FENCE = re.compile(r"[ ]{0,3}(```|~~~)")


def html_document(markdown: str, *, title: str = "") -> PagedText:
    """A long HTML page's markdown as `PagedText` of sections, its headings as the outline."""
    sections, headings = _sections(markdown)
    top = min((level for _, level, _ in headings), default=1)
    outline = tuple(
        OutlineItem(title=" ".join(t.split())[:OUTLINE_TITLE_CAP], page=n, level=level - top + 1)
        for t, level, n in headings
        if t.strip()
    )
    return PagedText(kind="html", title=title, pages=tuple(sections), outline=outline)


def split_sections(markdown: str) -> list[str]:
    """Sections of reasonable size, split at headings (never inside a code fence)."""
    return _sections(markdown)[0]


def _sections(markdown: str) -> tuple[list[str], list[tuple[str, int, int]]]:
    """The sections, and each heading as (title, level, section number)."""
    chunks: list[tuple[list[tuple[str, int]], list[str]]] = [([], [])]
    fence = None
    for line in markdown.split("\n"):
        m = _FENCE.match(line)
        if m:
            fence = None if fence == m.group(1) else (fence or m.group(1))
        h = _HEADING.fullmatch(line) if fence is None else None
        if h and (chunks[-1][1] or chunks[-1][0]):
            chunks.append(([], []))
        if h:
            chunks[-1][0].append((h.group(1), len(line) - len(line.lstrip("#"))))
        chunks[-1][1].append(line)
    sections: list[str] = []
    headings: list[tuple[str, int, int]] = []
    current: list[str] = []
    for heads, lines in chunks:
        for i, piece in enumerate(_pieces("\n".join(lines).strip("\n"))):
            joined = "\n\n".join(current)
            if current and (len(joined) >= SECTION_MIN or len(joined) + len(piece) > SECTION_MAX):
                sections.append(joined)
                current = []
            current.append(piece)
            if i == 0:
                headings += [(t, level, len(sections) + 1) for t, level in heads]
    if current:
        sections.append("\n\n".join(current))
    return [s for s in sections if s.strip()] or [""], headings


def _pieces(text: str) -> list[str]:
    """`text` in pieces of at most SECTION_MAX characters, cut at paragraphs, else lines."""
    if len(text) <= SECTION_MAX:
        return [text] if text.strip() else []
    pieces: list[str] = []
    current = ""
    for para in text.split("\n\n"):
        while len(para) > SECTION_MAX:  # one huge paragraph: cut at a line, else anywhere
            cut = para.rfind("\n", 0, SECTION_MAX)
            cut = cut if cut > SECTION_MAX // 2 else SECTION_MAX
            pieces += [current, para[:cut]]
            current, para = "", para[cut:].lstrip("\n")
        if current and len(current) + 2 + len(para) > SECTION_MAX:
            pieces.append(current)
            current = para
        else:
            current = f"{current}\n\n{para}" if current else para
    pieces.append(current)
    return [p for p in pieces if p.strip()]
