"""How a PDF library is chosen: each engine is imported only when used (pypdf costs nothing
on a document pdfium reads well)."""

from __future__ import annotations

from typing import Literal

from sift.documents.pdf.engine_base import Engine


def open_engine(name: Literal["pypdf", "pdfium"], data: bytes) -> Engine:
    """Open `data` with the named library."""
    if name == "pdfium":
        from sift.documents.pdf.pdfium_engine import PdfiumEngine

        return PdfiumEngine(data)
    from sift.documents.pdf.pypdf_engine import PypdfEngine

    return PypdfEngine(data)
