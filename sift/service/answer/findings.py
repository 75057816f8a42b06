"""The parts of a document an answer shows, as the document had them (before the fence), for
the injection scan (`clean/injection_scan.py`): the pages of a range, a map or grep hits by their
numbers, or the one text of any other answer."""

from __future__ import annotations

import re
from collections.abc import Iterable
from typing import TYPE_CHECKING

from sift.clean.injection_scan import Found, scan
from sift.documents.pages import UNITS, parse_pages

if TYPE_CHECKING:
    from sift.service.answer.envelope import Shown

# A grep hit's line: `p. 3: …` (a document line never starts so: the fence escapes it).
_HIT = r"^(?:p|s|sl|sh|ch)\. (\d+): "  # compiled on first use (`re` keeps it)
Parts = tuple[tuple[str, str], ...]  # (where: "page 3", "body" …, the text)

__all__ = ["Found", "Parts", "page_parts", "scan", "size"]


def page_parts(shown: Shown | None, pages: str | None = None) -> Parts:
    """The pages `shown` returned (a map's leading pages, a range, the pages of grep's hits);
    read by `offset`, the `pages` asked (else all)."""
    if shown is None:
        return ()
    paged = shown.paged
    unit = UNITS[paged.kind][0]
    returned = shown.rendered.returned
    if returned is None:
        returned = parse_pages(pages, paged.count) if pages and paged.count else (1, paged.count)
    a, b = returned
    numbers: Iterable[int] = range(a, min(b, paged.count) + 1)
    if shown.rendered.grep_hits:  # grep shows lines of the pages it names, not the whole range
        numbers = sorted({int(n) for n in re.findall(_HIT, shown.rendered.content, re.MULTILINE)})
    return tuple((f"{unit} {n}", paged.pages[n - 1]) for n in numbers if 1 <= n <= paged.count)


def size(parts: Parts) -> int:
    """The characters a scan reads (its cost on the CPU threads)."""
    return sum(len(text) for _, text in parts)
