"""EPUB (ebooklib, its chapters' XHTML parsed by lxml through markdownify), RTF (striprtf)
and CSV/TSV (the standard library's csv) as markdown."""

from __future__ import annotations

import csv
import io
import re

from sift.documents.office.markdown import Converted, Part, sheet_parts

_HEADING = re.compile(r"^#{1,6}[ \t]+(.+?)[ \t#]*$", re.MULTILINE)
_BLANKS = re.compile(r"\n{3,}")
_PROLOG = re.compile(r"^\s*(<\?xml[^>]*\?>\s*)?(<!DOCTYPE[^>]*>)?", re.IGNORECASE)


def epub(data: bytes) -> Converted:
    import ebooklib
    from bs4 import BeautifulSoup
    from ebooklib import epub as reader
    from markdownify import MarkdownConverter

    book = reader.read_epub(io.BytesIO(data), {"ignore_ncx": True})
    labels = _toc_labels(book.toc)
    converter = MarkdownConverter(heading_style="ATX", strip=["img", "script", "style"])
    parts = []
    for ident, _linear in book.spine:
        item = book.get_item_with_id(ident)
        if item is None or item.get_type() != ebooklib.ITEM_DOCUMENT:
            continue
        if isinstance(item, reader.EpubNav):
            continue  # the table of contents: the outline says it
        html = _PROLOG.sub("", item.get_content().decode("utf-8", "replace"), count=1)
        text = converter.convert_soup(BeautifulSoup(html, "lxml"))  # lxml: 4× html.parser
        text = _BLANKS.sub("\n\n", text).strip()
        if not text:
            continue
        heading = _HEADING.search(text)
        name = labels.get(item.get_name()) or (heading.group(1) if heading else item.get_name())
        parts.append(Part(text, " ".join(name.split())))
    titles = book.get_metadata("DC", "title")
    return Converted(parts, "chapter", str(titles[0][0]) if titles else "")


def _toc_labels(toc: object) -> dict[str, str]:
    """Each chapter file's title in the table of contents (its first entry)."""
    labels: dict[str, str] = {}
    stack = list(toc) if isinstance(toc, (list, tuple)) else []
    while stack:
        entry = stack.pop(0)
        if isinstance(entry, tuple) and len(entry) == 2:
            section, children = entry
            stack[:0] = [section, *children]
            continue
        href, title = getattr(entry, "href", None), getattr(entry, "title", None)
        if href and title:
            labels.setdefault(href.split("#", 1)[0], str(title))
    return labels


def rtf(data: bytes) -> Converted:
    from striprtf.striprtf import rtf_to_text

    text: str = rtf_to_text(data.decode("latin-1"), errors="replace")  # type: ignore[no-untyped-call]
    paras = [" ".join(p.split()) for p in re.split(r"\n\s*\n|\n", text)]
    return Converted([], "section", "", prose="\n\n".join(p for p in paras if p))


def delimited(data: bytes, delimiter: str) -> Converted:
    """CSV or TSV: one sheet of cells."""
    text = _text(data)
    rows = csv.reader(io.StringIO(text, newline=""), delimiter=delimiter)
    parts: list[Part] = sheet_parts("Table", rows)
    return Converted(parts, "sheet", "")


def _text(data: bytes) -> str:
    """UTF-8 (a BOM dropped), else Windows-1252, as a browser reads a file with no charset."""
    try:
        return data.decode("utf-8-sig")
    except UnicodeDecodeError:
        return data.decode("cp1252", "replace")
