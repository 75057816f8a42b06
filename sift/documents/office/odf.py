"""ODT, ODS and ODP as markdown, with odfpy.

odfpy parses the package into a tree; the walk here writes headings (`text:h` and its outline
level), paragraphs, lists, tables and links. Repetition is bounded where ODF lets a file ask
for it: `text:s` spaces, and the repeated rows and columns a spreadsheet uses to fill its
whole grid.
"""

from __future__ import annotations

import io
from collections.abc import Iterator
from typing import Any

from sift.documents.office.markdown import (
    MAX_COLS,
    MAX_ROWS,
    Converted,
    Part,
    join,
    link,
    sheet_parts,
    table,
)

TEXT = "urn:oasis:names:tc:opendocument:xmlns:text:1.0"
TABLE = "urn:oasis:names:tc:opendocument:xmlns:table:1.0"
DRAW = "urn:oasis:names:tc:opendocument:xmlns:drawing:1.0"
PRES = "urn:oasis:names:tc:opendocument:xmlns:presentation:1.0"
XLINK = "http://www.w3.org/1999/xlink"
MAX_SPACES = 100


def _load(data: bytes) -> Any:
    from odf.opendocument import load

    return load(io.BytesIO(data))


def _attr(el: Any, ns: str, name: str) -> str | None:
    value = el.attributes.get((ns, name))
    return str(value) if value is not None else None


def _repeat(el: Any, name: str, cap: int) -> int:
    try:
        return max(1, min(cap, int(_attr(el, TABLE, name) or 1)))
    except ValueError:
        return 1


def text_of(el: Any) -> str:
    """An element's text, spaces, tabs and line breaks as ODF means them; links kept."""
    out: list[str] = []
    for child in el.childNodes:
        if child.nodeType == child.TEXT_NODE:
            out.append(child.data)
            continue
        if child.nodeType != child.ELEMENT_NODE:
            continue
        ns, tag = child.qname
        if ns == TEXT and tag == "s":
            try:
                out.append(" " * max(1, min(MAX_SPACES, int(_attr(child, TEXT, "c") or 1))))
            except ValueError:
                out.append(" ")
        elif ns == TEXT and tag == "tab":
            out.append("\t")
        elif ns == TEXT and tag == "line-break":
            out.append("\n")
        elif ns == TEXT and tag == "a":
            out.append(link(text_of(child), _attr(child, XLINK, "href")))
        elif not (ns == TEXT and tag in ("note", "tracked-changes")):
            out.append(text_of(child))
    return "".join(out)


def _blocks(el: Any, depth: int = 0) -> Iterator[str]:
    """Markdown blocks of a text body: headings, paragraphs, lists, tables, frames."""
    for child in el.childNodes:
        if child.nodeType != child.ELEMENT_NODE:
            continue
        ns, tag = child.qname
        if ns == TEXT and tag == "h":
            try:
                level = int(_attr(child, TEXT, "outline-level") or 1)
            except ValueError:
                level = 1
            text = " ".join(text_of(child).split())
            if text:
                yield f"{'#' * max(1, min(6, level))} {text}"
        elif ns == TEXT and tag == "p":
            text = text_of(child).strip()
            if text:
                yield text
            yield from _blocks_in_frames(child, depth)
        elif ns == TEXT and tag == "list":
            yield "\n".join(_items(child, depth))
        elif ns == TABLE and tag == "table":
            yield table(list(_rows(child)))
        elif ns in (TEXT, DRAW) and tag in ("section", "frame", "text-box", "g"):
            yield from _blocks(child, depth)


def _blocks_in_frames(p: Any, depth: int) -> Iterator[str]:
    for child in p.childNodes:
        if child.nodeType == child.ELEMENT_NODE and child.qname == (DRAW, "frame"):
            yield from _blocks(child, depth)


def _items(lst: Any, depth: int) -> Iterator[str]:
    for item in lst.childNodes:
        if item.nodeType != item.ELEMENT_NODE or item.qname[1] not in ("list-item", "list-header"):
            continue
        for child in item.childNodes:
            if child.nodeType != child.ELEMENT_NODE:
                continue
            if child.qname == (TEXT, "list"):
                yield from _items(child, depth + 1)
            else:
                text = " ".join(text_of(child).split())
                if text:
                    yield f"{'  ' * depth}- {text}"


def _rows(tbl: Any) -> Iterator[list[str]]:
    """A table's rows of cell texts; repeated rows and columns bounded (one past MAX_ROWS,
    MAX_COLS)."""
    emitted = 0
    for row in _all_rows(tbl):
        cells: list[str] = []
        for c in row.childNodes:
            if c.nodeType != c.ELEMENT_NODE or c.qname[1] not in (
                "table-cell",
                "covered-table-cell",
            ):
                continue
            text = "\n".join(text_of(p) for p in c.childNodes if p.nodeType == p.ELEMENT_NODE)
            # one past each bound, so `sheet_parts` sees (and says) the cut
            cells.extend([text] * _repeat(c, "number-columns-repeated", MAX_COLS + 1 - len(cells)))
            if len(cells) > MAX_COLS:
                break
        repeat = _repeat(row, "number-rows-repeated", MAX_ROWS + 1)
        if not any(s.strip() for s in cells):
            repeat = min(repeat, 1)  # an empty grid filler: one row stands for all
        for _ in range(repeat):
            if emitted > MAX_ROWS:
                return
            emitted += 1
            yield cells


def _all_rows(tbl: Any) -> Iterator[Any]:
    for child in tbl.childNodes:
        if child.nodeType != child.ELEMENT_NODE:
            continue
        if child.qname == (TABLE, "table-row"):
            yield child
        elif child.qname[1] in ("table-header-rows", "table-rows", "table-row-group"):
            yield from _all_rows(child)


def _title(doc: Any) -> str:
    from odf import dc

    meta: Any = getattr(doc, "meta", None)  # a text node in some writers' files
    found = meta.getElementsByType(dc.Title) if hasattr(meta, "getElementsByType") else []
    return " ".join(text_of(found[0]).split()) if found else ""


def _body(doc: Any, kind: Any) -> Any:
    """The document's body of `kind` (office:text, :spreadsheet, :presentation), found in the
    tree: odfpy's shortcut to it is a text node in some writers' files (KSpread's)."""
    found = doc.body.getElementsByType(kind)
    return found[0] if found else doc.body


def odt(data: bytes) -> Converted:
    from odf.office import Text

    doc = _load(data)
    return Converted([], "section", _title(doc), prose=join(_blocks(_body(doc, Text))))


def ods(data: bytes) -> Converted:
    from odf.office import Spreadsheet
    from odf.table import Table

    doc = _load(data)
    parts: list[Part] = []
    for sheet in _body(doc, Spreadsheet).getElementsByType(Table):
        parts.extend(sheet_parts(_attr(sheet, TABLE, "name") or "Sheet", _rows(sheet)))
    return Converted(parts, "sheet", _title(doc))


def odp(data: bytes) -> Converted:
    from odf.draw import Page
    from odf.office import Presentation

    doc = _load(data)
    parts = []
    for n, page in enumerate(_body(doc, Presentation).getElementsByType(Page), start=1):
        title, blocks = "", []
        notes: list[str] = []
        for frame in page.childNodes:
            if frame.nodeType != frame.ELEMENT_NODE:
                continue
            if frame.qname == (PRES, "notes"):
                notes.extend(_blocks(frame))
                continue
            found = list(_blocks(frame))
            if not title and _attr(frame, PRES, "class") == "title" and found:
                title = " ".join(found[0].split())
                found = found[1:]
            blocks.extend(found)
        name = title or _attr(page, DRAW, "name") or f"Slide {n}"
        body = [f"## {name}", *blocks]
        if any(b.strip() for b in notes):
            body.append("### Notes\n\n" + join(notes))
        parts.append(Part(join(body), name))
    return Converted(parts, "slide", _title(doc))
