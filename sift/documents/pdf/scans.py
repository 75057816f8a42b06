"""Image-only pages and their OCR text, as a document's page notes carry them.

A page with no usable text layer is marked `IMAGE_ONLY` by extraction; once OCR'd, its text is
the OCR text and its note `OCR_TEXT`. The notes travel where every page note goes (the page
cache's rows, the map's warning line, the line under a page's marker), so an agent always
sees which pages are OCR text and which are images not read yet.
"""

from __future__ import annotations

import msgspec

from sift.documents.pages import MAX_ANSWER_PAGES, PagedText, page_spec

IMAGE_ONLY = "image-only page (no text layer): ask for it by `pages` to OCR it"
OCR_TEXT = "OCR text (read from the page image; may hold recognition errors)"
INSTALL = "apt-get install tesseract-ocr"


def pending(doc: PagedText) -> list[int]:
    """The image-only pages not OCR'd yet."""
    return sorted(n for n, w in doc.warnings.items() if w == IMAGE_ONLY and n <= doc.count)


def ocr_pages(doc: PagedText) -> list[int]:
    """The pages whose text is OCR text."""
    return sorted(n for n, w in doc.warnings.items() if w == OCR_TEXT)


def wanted(doc: PagedText, pages: str | None, lead: int) -> list[int]:
    """The image-only pages an answer needs OCR'd before it is rendered: those of its range
    (at most the pages one answer holds), else those of pages 1–`lead` (the first answer's
    leading pages). A bad range is left to the renderer, which answers it 400."""
    todo = pending(doc)
    if pages is None:
        return [n for n in todo if n <= lead]
    try:
        a, b = page_spec(pages)
    except Exception:
        return []
    last = min(b or doc.count, a + MAX_ANSWER_PAGES - 1)
    return [n for n in todo if a <= n <= last]


def with_text(doc: PagedText, texts: dict[int, str]) -> PagedText:
    """`doc` with the OCR text of the pages in `texts` (each noted `OCR_TEXT`)."""
    if not texts:
        return doc
    pages = list(doc.pages)
    warnings = dict(doc.warnings)
    for n, text in texts.items():
        if 1 <= n <= len(pages):
            pages[n - 1] = text
            warnings[n] = OCR_TEXT
    return msgspec.structs.replace(doc, pages=tuple(pages), warnings=warnings)


def has_text(doc: PagedText) -> bool:
    """Is there any text to answer with (a text layer or OCR text)?"""
    return any(t.strip() for t in doc.pages)
