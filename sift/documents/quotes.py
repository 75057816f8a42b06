"""Where a document's text is, and whether a quote is in it: the ground of a citation an agent
can check.

A source's text is what `/v1/fetch`'s `offset` counts in (an HTML page's markdown; a paged
document's pages with their markers): a citation's `start` and `end` are character offsets in
it, and its `part` is the page (section, sheet …) those offsets fall in. A quote is found only
where its very characters are, or the same words with the spacing folded (runs of white space
as one space): never a near-miss, and never across a part's marker, which is not the
document's text.
"""

from __future__ import annotations

import re
import threading
from array import array
from collections.abc import Callable, Hashable, Sequence
from dataclasses import dataclass
from typing import Any, TypeVar, cast

from sift.core.fence import neutralise
from sift.core.lru import SizedLRU
from sift.documents.pages import UNITS, PagedText, with_markers

_SPACE = re.compile(r"\s+")
# bytes of what citations remember of a document: its parts' offsets (16 bytes a part: 40 KB
# for 2,500 pages) and the lines of its recent grep patterns
MEMORY = 16 << 20
V = TypeVar("V")


@dataclass(frozen=True)
class Part:
    """One page (section, sheet …) of a source: its number and its span in the text."""

    number: int
    start: int
    end: int


@dataclass(frozen=True)
class Found:
    """Where a quote is: `how` is `exact` or `whitespace` (found with the spacing folded)."""

    how: str
    start: int
    end: int
    part: int | None


def part_spans(
    text: str, paged: PagedText | None, upto: int | None = None
) -> tuple[str | None, list[Part]]:
    """The unit (`page`, `section` …) and each part's span in `text` (the pages in order, each
    found after the one before; those up to part `upto` only); none for a document without
    pages."""
    if paged is None:
        return None, []
    unit = UNITS[paged.kind][0]
    spans: list[Part] = []
    cursor = 0
    for number, page in enumerate(paged.pages[:upto], start=1):
        block = neutralise(page).strip("\n")  # as `with_markers` puts it in the text
        if not block:
            continue
        at = text.find(block, cursor)
        if at < 0:
            continue
        spans.append(Part(number, at, at + len(block)))
        cursor = at + len(block)
    return unit, spans


class Spans:
    """Each part's span in a document's text, by part number (compact: two arrays)."""

    def __init__(self, parts: Sequence[Part], count: int) -> None:
        self.starts = array("q", [-1]) * count
        self.ends = array("q", [-1]) * count
        for part in parts:
            self.starts[part.number - 1] = part.start
            self.ends[part.number - 1] = part.end

    def get(self, number: int) -> Part | None:
        if not 0 < number <= len(self.starts) or self.starts[number - 1] < 0:
            return None
        return Part(number, self.starts[number - 1], self.ends[number - 1])


_remembered: SizedLRU[Any] = SizedLRU(MEMORY)
_lock = threading.Lock()  # citations are found on CPU threads


def layout(paged: PagedText, key: Hashable) -> Hashable:
    """`key` (a document's content hash and caller class) with what its text's layout hangs on:
    its pages change only where OCR text replaces an image-only page (its warning with it)."""
    return (key, paged.kind, paged.count, paged.chars, tuple(sorted(paged.warnings.items())))


def remembered(key: Hashable | None, make: Callable[[], V], weight: Callable[[V], int]) -> V:
    """`make()`, remembered under `key` (within `MEMORY` bytes, as `weight` counts them); made
    afresh, and not kept, without a key (a private request's)."""
    if key is None:
        return make()
    with _lock:
        found = _remembered.get(key)
    if found is None:
        found = make()
        with _lock:
            _remembered.put(key, found, weight(found))
    return cast(V, found)


def spans_of(paged: PagedText, key: Hashable | None, upto: int) -> Spans:
    """`part_spans` in the text with markers, without that text: all of them remembered under
    `key` (`layout`), so that a cited grep of a long document does not neutralise and join
    every page again; up to part `upto` only when there is no `key` (a private request's)."""
    last = paged.count if key is not None else min(upto, paged.count)

    def make() -> Spans:
        unit = UNITS[paged.kind][0]
        # the text up to part `last` is where the spans of parts up to it are found in all
        pages, numbers = paged.pages[:last], range(1, last + 1)
        text = with_markers(pages, numbers, warnings=paged.warnings, unit=unit)
        return Spans(part_spans(text, paged, last)[1], paged.count)

    return remembered(key, make, lambda _: 16 * paged.count + 256)


def part_at(parts: Sequence[Part], start: int, end: int) -> int | None:
    """The part whose span holds all of `start`..`end`, else None (a span across a break)."""
    for part in parts:
        if part.start <= start and end <= part.end:
            return part.number
    return None


def find(text: str, quote: str, parts: Sequence[Part]) -> Found | None:
    """Where `quote` is in `text`: exactly, else with white space folded; never across parts.

    Every occurrence is tried, so a quote whose first occurrence straddles a page break but
    which stands whole in a later page is still found there."""
    quote = quote.strip()
    if not quote:
        return None
    at = text.find(quote)
    while at >= 0:
        end = at + len(quote)
        if not parts or part_at(parts, at, end) is not None:
            return Found("exact", at, end, part_at(parts, at, end))
        at = text.find(quote, at + 1)
    return _folded(text, quote, parts)


def _folded(text: str, quote: str, parts: Sequence[Part]) -> Found | None:
    """The quote found in the text with every run of white space read as one space."""
    words = _SPACE.split(quote)
    pattern = re.compile(r"\s+".join(map(re.escape, words)))
    for match in pattern.finditer(text):
        start, end = match.span()
        if not parts or part_at(parts, start, end) is not None:
            return Found("whitespace", start, end, part_at(parts, start, end))
    return None
