"""Scanned documents generated at test time: a text PDF in a real font, its pages rendered
with pdfium and rebuilt as an image-only PDF (the text layer dropped), a mixed one, and the
pages as PNG or a multi-page TIFF. Nothing binary is committed."""

from __future__ import annotations

import io
from functools import cache
from typing import Any

FONT = "/usr/share/fonts/truetype/dejavu/DejaVuSans.ttf"
# Words OCR reads back reliably at the size they are set in, one phrase a page.
PHRASES = [
    "harbour lighthouse keeper",
    "seventeen copper kettles",
    "violet mountain railway",
    "patient orchard beekeeper",
    "silver river ferryman",
    "quiet northern observatory",
]


@cache
def text_pdf(pages: int = 3) -> bytes:
    """`pages` pages of text, PHRASES[n-1] on page n, in DejaVu Sans (or Helvetica)."""
    from fpdf import FPDF

    pdf = FPDF()
    try:
        pdf.add_font("body", fname=FONT)
        pdf.set_font("body", size=16)
    except (OSError, FileNotFoundError):
        pdf.set_font("helvetica", size=16)
    for n in range(1, pages + 1):
        pdf.add_page()
        pdf.multi_cell(0, 10, f"Page {n}.\nThe {PHRASES[n - 1]} is on page {n}.")
    return bytes(pdf.output())


def page_images(pdf: bytes, dpi: int = 150) -> list[Any]:
    """Each page of `pdf` as a grayscale PIL image."""
    import pypdfium2 as pdfium

    doc = pdfium.PdfDocument(pdf)
    return [doc[i].render(scale=dpi / 72, grayscale=True).to_pil() for i in range(len(doc))]


@cache
def scanned_pdf(pages: int = 3) -> bytes:
    """`text_pdf(pages)` as a scan: every page an image, no text layer."""
    images = page_images(text_pdf(pages))
    buf = io.BytesIO()
    images[0].save(buf, "PDF", save_all=True, append_images=images[1:], resolution=150)
    return buf.getvalue()


@cache
def mixed_pdf() -> bytes:
    """Three pages: 1 and 3 with a text layer, 2 an image of `text_pdf`'s page 2."""
    from fpdf import FPDF

    image = page_images(text_pdf(3))[1]
    pdf = FPDF()
    pdf.set_font("helvetica", size=16)
    for n in (1, 2, 3):
        pdf.add_page()
        if n == 2:
            pdf.image(image, x=0, y=0, w=210)
        else:
            pdf.multi_cell(0, 10, f"Page {n}.\nThe {PHRASES[n - 1]} is on page {n}.")
    return bytes(pdf.output())


def png(page: int = 1) -> bytes:
    buf = io.BytesIO()
    page_images(text_pdf(3))[page - 1].save(buf, "PNG")
    return buf.getvalue()


def tiff(pages: int = 3) -> bytes:
    """A multi-page TIFF, a frame a page of `text_pdf(pages)`."""
    images = page_images(text_pdf(pages))
    buf = io.BytesIO()
    images[0].save(buf, "TIFF", save_all=True, append_images=images[1:], compression="tiff_lzw")
    return buf.getvalue()
