"""The markdown every office converter writes, and the parts it hands the parent.

A document is a list of `Part`s (a section, a slide, a sheet, a chapter), each with a title
for the outline; tables are GFM with every cell on one line, bounded in rows and columns.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field

MAX_ROWS = 100_000  # rows of one table (a sheet) converted
MAX_COLS = 200
ROWS_PER_PART = 500  # a longer sheet is split in parts of this many rows, its header repeated
CELL_CAP = 1_000  # characters of one cell
_PIPE = re.compile(r"(?<!\\)\|")


@dataclass
class Part:
    """One part of a document: its markdown, the title the outline shows, and its level."""

    text: str
    title: str = ""
    level: int = 1
    heads: list[tuple[str, int]] = field(default_factory=list)  # (title, level) in outline
    warning: str | None = None  # sift's, under the part's marker (never in the text: fenced)


@dataclass
class Converted:
    """What a converter answers: the parts in order, the unit they are, the document title;
    `prose` when the parts are one text to split at its headings (sections)."""

    parts: list[Part]
    unit: str
    title: str = ""
    prose: str | None = None


def cell(value: object) -> str:
    """A table cell: one line, pipes escaped, capped."""
    if value is None:
        return ""
    text = " ".join(str(value).split())
    if len(text) > CELL_CAP:
        text = text[: CELL_CAP - 1] + "…"
    return _PIPE.sub(r"\\|", text) if "|" in text else text


def table(rows: Sequence[Sequence[object]]) -> str:
    """GFM: the first row as the header; rows padded to the widest, trailing empties dropped."""
    return _table([[cell(v) for v in row[:MAX_COLS]] for row in rows])


def _table(cells: list[list[str]]) -> str:
    width = max((_width(r) for r in cells), default=0)
    if width == 0:
        return ""
    lines = []
    for i, row in enumerate(cells):
        padded = (row + [""] * width)[:width]
        lines.append("| " + " | ".join(padded) + " |")
        if i == 0:
            lines.append("|" + " --- |" * width)
    return "\n".join(lines)


def _width(row: list[str]) -> int:
    n = len(row)
    while n and not row[n - 1]:
        n -= 1
    return n


def sheet_parts(name: str, rows: Iterable[Sequence[object]]) -> list[Part]:
    """A sheet's cells as tables of at most ROWS_PER_PART rows (the first row, its header,
    repeated atop each), with the sheet's size in the outline; bounded by MAX_ROWS and
    MAX_COLS, a cut said by a warning (sift's line: in the text the fence would escape it)."""
    kept: list[list[str]] = []
    more = wide = False
    for row in rows:
        if len(kept) >= MAX_ROWS:
            more = True
            break
        wide = wide or any(v not in (None, "") for v in row[MAX_COLS:])
        kept.append([cell(v) for v in row[:MAX_COLS]])
    while kept and not any(kept[-1]):
        kept.pop()
    width = max((_width(r) for r in kept), default=0)
    size = f"{len(kept):,}{'+' if more else ''} rows × {width}{'+' if wide else ''} columns"
    if not kept:
        return [Part(f"## {name}\n\n(empty sheet)", f"{name} (empty)")]
    head, body = kept[0], kept[1:] or []
    parts = []
    chunks = [body[i : i + ROWS_PER_PART] for i in range(0, len(body), ROWS_PER_PART)] or [[]]
    for i, chunk in enumerate(chunks):
        first, last = 2 + i * ROWS_PER_PART, 1 + i * ROWS_PER_PART + len(chunk)
        where = f" (rows {first:,}–{last:,})" if len(chunks) > 1 else ""
        cuts = [f"{MAX_ROWS:,} rows"] if more and i == len(chunks) - 1 else []
        cuts += [f"{MAX_COLS} columns"] if wide else []
        text = f"## {name}{where}\n\n{_table([head, *chunk])}"
        title = f"{name} · {size}" if i == 0 else f"rows {first:,}–{last:,}"
        warning = f"sheet cut at {' and '.join(cuts)}" if cuts else None
        parts.append(Part(text, title, 1 if i == 0 else 2, warning=warning))
    return parts


def link(text: str, href: str | None) -> str:
    """`[text](href)` for a web or mail link, the text alone otherwise."""
    if not text.strip() or not href or not href.startswith(("http://", "https://", "mailto:")):
        return text
    return f"[{text}]({href.replace(' ', '%20').replace(')', '%29')})"


def join(blocks: Iterable[str]) -> str:
    return "\n\n".join(b for b in blocks if b.strip())
