"""The pdfium engine (the default): ~15× faster than pypdf, and right on CJK fonts without a
Unicode map (its CID tables) and on Arabic script (letters, not shaped forms, in reading order).

pdfium tells per character whether the font had no Unicode map for it
(`FPDFText_HasUnicodeMapError`); a page with a share of such characters is flagged.
"""

from __future__ import annotations

import ctypes
from typing import Any

from sift.core.types import OutlineItem
from sift.documents.pdf import plausible, scans
from sift.documents.pdf.engine_base import MAX_OUTLINE, Encrypted, Unreadable, clean_title
from sift.documents.wire import Meta

# Characters probed for a map error per page (one C call each, ~1 µs): a first few, and the
# full sample only when one of those is bad (a font without a map is seldom a few characters).
_GLANCE = 24
_SAMPLE = 200


class PdfiumEngine:
    def __init__(self, data: bytes) -> None:
        import pypdfium2 as pdfium
        import pypdfium2.raw as raw

        self._raw = raw
        self._error = pdfium.PdfiumError
        try:
            self._doc = pdfium.PdfDocument(data)
            self.pages = len(self._doc)
        except pdfium.PdfiumError as exc:
            if getattr(exc, "err_code", None) == raw.FPDF_ERR_PASSWORD:
                raise Encrypted from None
            raise Unreadable(str(exc)[:200]) from None
        except Exception as exc:
            raise Unreadable(type(exc).__name__) from None
        if self.pages < 1:
            raise Unreadable("no pages")

    def meta(self, outline: bool) -> Meta:
        try:
            title = clean_title(self._doc.get_metadata_dict().get("Title", ""))
        except Exception:
            title = ""
        items: list[OutlineItem] = []
        if outline:
            try:
                for item in self._doc.get_toc(max_depth=64):
                    if len(items) >= MAX_OUTLINE:
                        break
                    dest = item.get_dest()
                    index = dest.get_index() if dest is not None else None
                    name = clean_title(item.get_title(), 300)
                    if name and index is not None and 0 <= index < self.pages:
                        items.append(OutlineItem(title=name, page=index + 1, level=item.level + 1))
            except Exception:
                pass
        return Meta(pages=self.pages, title=title, outline=tuple(items))

    def page(self, number: int) -> tuple[str, str | None]:
        raw = self._raw  # the C calls themselves: pypdfium2's wrappers cost ~10 % a page
        page = raw.FPDF_LoadPage(self._doc.raw, number - 1)
        if not page:
            raise self._error("the page did not load")
        textpage = raw.FPDFText_LoadPage(page)
        try:
            if not textpage:
                raise self._error("the page's text did not load")
            text = _bounded_text(raw, page, textpage)
            if not text.strip():
                return text, scans.IMAGE_ONLY if _drawn(raw, page) else None
            if self._map_errors(textpage):
                return text, plausible.UNMAPPED_FONT
            return text, plausible.check(text)
        finally:
            if textpage:
                raw.FPDFText_ClosePage(textpage)
            raw.FPDF_ClosePage(page)

    def _map_errors(self, textpage: Any) -> bool:
        """Do many of the page's characters come from codes the font could not map?"""
        has_error = self._raw.FPDFText_HasUnicodeMapError
        n = self._raw.FPDFText_CountChars(textpage)
        if n <= 0:
            return False
        for sample in (_GLANCE, _SAMPLE):
            probes = range(0, n, max(1, n // sample))
            bad = sum(1 for i in probes if has_error(textpage, i))
            if not bad:
                return False
        return plausible.too_many(bad, len(probes))


def _drawn(raw: Any, page: Any) -> bool:
    """Does the page draw an image or a form (where a scan's image sits)? A page with neither
    and no text is blank, not image-only."""
    kinds = (raw.FPDF_PAGEOBJ_IMAGE, raw.FPDF_PAGEOBJ_FORM)
    for i in range(raw.FPDFPage_CountObjects(page)):
        if raw.FPDFPageObj_GetType(raw.FPDFPage_GetObject(page, i)) in kinds:
            return True
    return False


def _bounded_text(raw: Any, page: Any, textpage: Any) -> str:
    """The text within the page's box (none drawn outside it), newlines for CR LF.

    One call into pdfium with room to spare (each character may bring a line break and be a
    surrogate pair), where pypdfium2 calls twice: once for the length, once for the text.
    """
    box = raw.FS_RECTF()
    raw.FPDF_GetPageBoundingBox(page, box)
    room = 4 * max(0, raw.FPDFText_CountChars(textpage)) + 2
    buffer = (ctypes.c_ushort * room)()
    args = (textpage, box.left, box.top, box.right, box.bottom)
    got = raw.FPDFText_GetBoundedText(*args, buffer, room)
    if got >= room:  # never expected: ask for the length, as pypdfium2 does
        room = raw.FPDFText_GetBoundedText(*args, None, 0) + 1
        buffer = (ctypes.c_ushort * room)()
        got = raw.FPDFText_GetBoundedText(*args, buffer, room)
    text = ctypes.string_at(buffer, 2 * max(0, got)).decode("utf-16-le", "ignore")
    return text.rstrip("\x00").replace("\r\n", "\n").replace("\r", "\n")
