"""DOCX, PPTX and XLSX as markdown: python-docx, python-pptx and openpyxl (read-only).

Each reads the package `guard.check_zip` has passed. DOCX keeps headings (by style), lists,
tables, links and bold/italic, as one text the child splits into sections at its headings;
PPTX a part per slide (its title, text, tables, links, then its notes); XLSX a part per sheet
(cells as tables, `markdown.sheet_parts`).
"""

from __future__ import annotations

import io
from typing import Any

from sift.documents.office.markdown import Converted, Part, join, link, sheet_parts, table


def docx(data: bytes) -> Converted:
    import docx as python_docx
    from docx.table import Table
    from docx.text.paragraph import Paragraph

    doc = python_docx.Document(io.BytesIO(data))
    # style names by id, read once (python-docx looks a paragraph's style up each time)
    styles = {s.style_id: s.name or "" for s in doc.styles}
    blocks = []
    for item in doc.iter_inner_content():
        if isinstance(item, Paragraph):
            blocks.append(_paragraph(item, styles))
        elif isinstance(item, Table):
            blocks.append(table([[_cell_text(c) for c in row.cells] for row in item.rows]))
    title = doc.core_properties.title or ""
    return Converted([], "section", title, prose=_tight_lists(blocks))


def _cell_text(cell: Any) -> str:
    """A table cell's text, with the text of the tables nested in it (one line)."""
    from docx.table import Table

    pieces = []
    for item in cell.iter_inner_content():
        if isinstance(item, Table):
            pieces += [_cell_text(c) for row in item.rows for c in row.cells]
        else:
            pieces.append(item.text)
    return " ".join(p for p in pieces if p.strip())


def _paragraph(p: Any, styles: dict[str, str]) -> str:
    from docx.text.hyperlink import Hyperlink

    text = ""
    for piece in p.iter_inner_content():
        if isinstance(piece, Hyperlink):
            text += link(piece.text, piece.address)
        else:
            text += _styled(piece.text, bool(piece.bold), bool(piece.italic))
    if not text.strip():
        return ""
    style = styles.get(p._p.style or "", "")
    if style == "Title":
        return f"# {text.strip()}"
    if style.startswith("Heading"):
        level = style.removeprefix("Heading").strip()
        return f"{'#' * min(6, int(level) if level.isdigit() else 1)} {text.strip()}"
    ppr = p._p.pPr
    numbered = ppr is not None and ppr.numPr is not None
    if numbered or style.startswith("List"):
        depth = 0
        if numbered and ppr.numPr.ilvl is not None:
            depth = int(ppr.numPr.ilvl.val or 0)
        marker = "1." if "Number" in style else "-"
        return f"\x00{'  ' * depth}{marker} {text.strip()}"  # \x00: a list item (`_tight_lists`)
    return text.strip()


def _styled(text: str, bold: bool, italic: bool) -> str:
    if not text.strip() or not (bold or italic):
        return text
    mark = "**" if bold else ""
    mark += "*" if italic else ""
    core = text.strip()
    lead, trail = text[: len(text) - len(text.lstrip())], text[len(text.rstrip()) :]
    return f"{lead}{mark}{core}{mark[::-1]}{trail}"


def _tight_lists(blocks: list[str]) -> str:
    """Blocks joined by blank lines, but the items of one list on consecutive lines."""
    out: list[str] = []
    for block in blocks:
        if not block.strip():
            continue
        if block.startswith("\x00"):
            item = block[1:]
            if out and out[-1].lstrip().startswith(("- ", "1. ")) and not out[-1].startswith("#"):
                out[-1] += "\n" + item
            else:
                out.append(item)
        else:
            out.append(block)
    return "\n\n".join(out)


def pptx(data: bytes) -> Converted:
    import pptx as python_pptx

    prs = python_pptx.Presentation(io.BytesIO(data))
    parts = []
    for n, slide in enumerate(prs.slides, start=1):
        title_shape = slide.shapes.title
        title = " ".join((title_shape.text_frame.text if title_shape is not None else "").split())
        blocks = [f"## {title or f'Slide {n}'}"]
        skip = title_shape.shape_id if title_shape is not None else None
        for shape in _ordered(slide.shapes):
            if shape.shape_id == skip:
                continue
            blocks.extend(_shape(shape))
        notes = ""
        if slide.has_notes_slide and slide.notes_slide.notes_text_frame is not None:
            notes = slide.notes_slide.notes_text_frame.text.strip()
        if notes:
            blocks.append(f"### Notes\n\n{notes}")
        parts.append(Part(join(blocks), title or f"Slide {n}"))
    return Converted(parts, "slide", prs.core_properties.title or "")


def _ordered(shapes: Any) -> list[Any]:
    """Shapes top to bottom, left to right (placeholders without a position first)."""
    return sorted(shapes, key=lambda s: (s.top or 0, s.left or 0))


def _shape(shape: Any) -> list[str]:
    from pptx.enum.shapes import MSO_SHAPE_TYPE

    if shape.shape_type == MSO_SHAPE_TYPE.GROUP:
        return [b for inner in _ordered(shape.shapes) for b in _shape(inner)]
    if getattr(shape, "has_table", False) and shape.has_table:
        return [table([[c.text for c in row.cells] for row in shape.table.rows])]
    if not getattr(shape, "has_text_frame", False) or not shape.has_text_frame:
        return []
    lines = []
    for para in shape.text_frame.paragraphs:
        if any(r.hyperlink.address for r in para.runs):
            text = "".join(link(r.text, r.hyperlink.address) for r in para.runs).strip()
        else:  # its text has its line breaks (vertical tabs) and fields, which runs lack
            text = para.text.replace("\x0b", "\n").strip()
        if text:
            lines.append(f"{'  ' * para.level}- {text}" if para.level else text)
    return ["\n".join(lines)] if lines else []


def xlsx(data: bytes) -> Converted:
    import openpyxl

    wb = openpyxl.load_workbook(io.BytesIO(data), read_only=True, data_only=True)
    try:
        parts = []
        for ws in wb.worksheets:
            parts.extend(sheet_parts(ws.title, ws.iter_rows(values_only=True)))
        title = wb.properties.title or ""
    finally:
        wb.close()
    return Converted(parts, "sheet", title)
