"""Tables with merged cells, flattened faithfully before extraction.

A GFM table has no merged cells. trafilatura writes a `colspan` cell once and pads the row
with empty cells, and ignores `rowspan` (the rows below come out a cell short and shifted), so
a reader loses which header or value the merged cell stood for. Here each merged cell is
repeated in every row and column it spans, in the page's tree, so any extractor reads a plain
grid.
"""

from __future__ import annotations

from copy import deepcopy

import lxml.etree
from lxml.html import HtmlElement

_MAX_SPAN = 50  # a span larger than this is a layout trick, not data: read as 1
_MERGED = lxml.etree.XPath(".//*[(self::td or self::th) and (@colspan or @rowspan)]")


def _span(cell: HtmlElement, name: str) -> int:
    try:
        value = int(str(cell.get(name) or "1").strip())
    except ValueError:
        return 1
    return value if 1 <= value <= _MAX_SPAN else 1


def _rows(table: HtmlElement) -> list[HtmlElement]:
    """The table's own rows (not those of a table nested in one of its cells)."""
    return [tr for tr in table.iter("tr") if next(tr.iterancestors("table"), None) is table]


def _copy(cell: HtmlElement) -> HtmlElement:
    twin = deepcopy(cell)
    twin.tail = None
    for name in ("colspan", "rowspan", "id"):
        twin.attrib.pop(name, None)
    return twin


def flatten_table(table: HtmlElement) -> None:
    """Repeat each merged cell of `table` over the cells it spans."""
    pending: dict[int, tuple[int, HtmlElement]] = {}  # column → (rows left, the cell)
    for tr in _rows(table):
        cells = [c for c in tr if c.tag in ("td", "th")]
        col, out = 0, []
        for cell in cells:
            while col in pending:
                out.append(_take(pending, col))
                col += 1
            rows, cols = _span(cell, "rowspan"), _span(cell, "colspan")
            cell.attrib.pop("colspan", None)
            cell.attrib.pop("rowspan", None)
            for k in range(cols):
                piece = cell if k == 0 else _copy(cell)
                out.append(piece)
                if rows > 1:
                    pending[col] = (rows - 1, _copy(cell))
                col += 1
        while col in pending:
            out.append(_take(pending, col))
            col += 1
        if len(out) != len(cells):
            for cell in cells:
                tr.remove(cell)
            tr.extend(out)


def _take(pending: dict[int, tuple[int, HtmlElement]], col: int) -> HtmlElement:
    left, cell = pending[col]
    if left <= 1:
        del pending[col]
    else:
        pending[col] = (left - 1, cell)
    return _copy(cell)


def flatten(root: HtmlElement) -> None:
    """Every table of `root` with merged cells, flattened."""
    for table in root.iter("table"):
        if _MERGED(table):
            flatten_table(table)
