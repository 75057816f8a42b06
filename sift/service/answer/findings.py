"""The parts of a document an answer shows, as the document had them (before the fence), for
the injection scan (`clean/injection_scan.py`): the pages of a range, a map or grep hits by their
numbers, or the one text of any other answer."""

from __future__ import annotations

import _thread  # its lock is threading's, without importing threading on the CLI's cached path
import re
from collections import OrderedDict
from collections.abc import Iterable
from typing import TYPE_CHECKING

from sift.clean.injection_scan import Found, scan, scan_text
from sift.documents.pages import UNITS, parse_pages

if TYPE_CHECKING:
    from sift.core.types import Content
    from sift.service.answer.envelope import Shown

# A grep hit's line: `p. 3: …` (a document line never starts so: the fence escapes it).
_HIT = r"^(?:p|s|sl|sh|ch)\. (\d+): "  # compiled on first use (`re` keeps it)
Parts = tuple[tuple[str, str], ...]  # (where: "page 3", "body" …, the text)
Said = tuple[tuple[int, str], ...]  # `injection.find`'s lines of a text: (number, what it said)

__all__ = ["Found", "Parts", "page_parts", "remember", "scan", "scan_answer", "size"]

_REMEMBERED = 4_096  # texts whose `Said` is kept, by their content hash (the newest)
_lock = _thread.allocate_lock()
_said: OrderedDict[str, Said] = OrderedDict()


def remember(text_hash: str | None, said: Said | None) -> None:
    """What the clean worker found addressing an AI reader in a text as it cleaned it (`said`),
    by the text's digest (`CleanResult.content_hash`, made beside it): an answer with that
    whole text scans it from there instead of reading it again (`scan_answer`)."""
    if text_hash is None or said is None:
        return
    with _lock:
        _said[text_hash] = said
        _said.move_to_end(text_hash)
        if len(_said) > _REMEMBERED:
            _said.popitem(last=False)


def scan_answer(parts: Parts, c: Content) -> Found:
    """The findings in the `parts` an answer shows of `c`: when that is `c`'s whole text, as
    its clean worker left it (named by `c.content_hash`), from what the worker found in it."""
    if len(parts) == 1 and parts[0][0] == "body" and parts[0][1] == c.text:
        with _lock:
            said = _said.get(c.content_hash)
        if said is not None:
            return scan_text("body", c.text, said)
    return scan(parts)


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
