"""The pypdf engine: pure Python, for a file pdfium cannot open, a page pdfium garbles, and
`[pdf] engine = "pypdf"`.

Besides the text, it inspects each page's fonts, because pypdf turns the codes of a font
without a Unicode map into wrong characters without any error (CID fonts with an Identity
encoding and no /ToUnicode; simple fonts whose glyph names mean nothing).
"""

from __future__ import annotations

import contextlib
import io
import logging
import re
from typing import Any

from sift.core.types import OutlineItem
from sift.documents.pdf import plausible
from sift.documents.pdf.engine_base import MAX_OUTLINE, Encrypted, Unreadable, clean_title
from sift.documents.wire import Meta

_UNICODE_NAME = re.compile(r"(uni[0-9A-Fa-f]{4,}|u[0-9A-Fa-f]{4,6})(\..*)?")
_MAX_DEPTH = 4  # form XObjects inside form XObjects
_MAX_FONTS = 200


class PypdfEngine:
    def __init__(self, data: bytes) -> None:
        logging.getLogger("pypdf").setLevel(logging.CRITICAL + 1)
        from pypdf import PasswordType, PdfReader

        try:
            self._reader = PdfReader(io.BytesIO(data), strict=False)
            reader = self._reader
            if reader.is_encrypted and reader.decrypt("") == PasswordType.NOT_DECRYPTED:
                raise Encrypted
            self.pages = len(self._reader.pages)
        except Encrypted:
            raise
        except Exception as exc:  # pypdf raises many kinds on a broken file
            raise Unreadable(type(exc).__name__) from None
        if self.pages < 1:
            raise Unreadable("no pages")
        self._font_verdicts: dict[int, bool] = {}

    def meta(self, outline: bool) -> Meta:
        try:
            info = self._reader.metadata
            title = clean_title(info.title if info is not None else "")
        except Exception:
            title = ""
        items: list[OutlineItem] = []
        if outline:
            with contextlib.suppress(Exception):  # optional: keep what was read
                self._walk(self._reader.outline, 1, items)
        return Meta(pages=self.pages, title=title, outline=tuple(items))

    def _walk(self, nodes: list[Any], level: int, out: list[OutlineItem]) -> None:
        for node in nodes:
            if len(out) >= MAX_OUTLINE or level > 64:
                return
            if isinstance(node, list):
                self._walk(node, level + 1, out)
                continue
            try:
                index = self._reader.get_destination_page_number(node)
            except Exception:
                continue
            if index is None or not 0 <= index < self.pages:
                continue
            title = clean_title(getattr(node, "title", ""), 300)
            if title:
                out.append(OutlineItem(title=title, page=index + 1, level=level))

    def page(self, number: int) -> tuple[str, str | None]:
        page = self._reader.pages[number - 1]
        text = page.extract_text() or ""
        if not text.strip():
            return text, None
        if self._unmapped_font(page):
            return text, plausible.UNMAPPED_FONT
        return text, plausible.check(text)

    def _unmapped_font(self, page: Any) -> bool:
        """Does the page (or a form it draws) use a font whose codes have no Unicode meaning?"""
        seen: set[int] = set()
        stack: list[tuple[Any, int]] = [(page.get("/Resources"), 0)]
        while stack and len(seen) < _MAX_FONTS:
            res, depth = stack.pop()
            res = _resolve(res)
            if not hasattr(res, "get"):
                continue
            fonts = _resolve(res.get("/Font"))
            for ref in fonts.values() if hasattr(fonts, "values") else ():
                key = id(_resolve(ref)) if not hasattr(ref, "idnum") else ref.idnum
                if key in seen:
                    continue
                seen.add(key)
                if self._verdict(key, _resolve(ref)):
                    return True
            xobjects = _resolve(res.get("/XObject"))
            if depth < _MAX_DEPTH and hasattr(xobjects, "values"):
                for x in xobjects.values():
                    x = _resolve(x)
                    if hasattr(x, "get") and x.get("/Subtype") == "/Form":
                        stack.append((x.get("/Resources"), depth + 1))
        return False

    def _verdict(self, key: int, font: Any) -> bool:
        if key not in self._font_verdicts:
            try:
                self._font_verdicts[key] = unmapped(font)
            except Exception:
                self._font_verdicts[key] = False
        return self._font_verdicts[key]


def unmapped(font: Any) -> bool:
    """A font dictionary whose character codes pypdf cannot turn into the right Unicode."""
    if not hasattr(font, "get") or "/ToUnicode" in font:
        return False
    subtype = font.get("/Subtype")
    encoding = _resolve(font.get("/Encoding"))
    if subtype == "/Type0":
        if isinstance(encoding, str):  # a predefined CMap
            return encoding.startswith("/Identity") or not (
                "UCS2" in encoding or "UTF16" in encoding or _pypdf_knows(encoding)
            )
        return True  # an embedded CMap maps codes to CIDs, never to Unicode
    differences = _resolve(encoding.get("/Differences")) if hasattr(encoding, "get") else None
    if not isinstance(differences, list):
        return subtype == "/Type3" and encoding is None
    from pypdf._codecs.adobe_glyphs import adobe_glyphs

    names = [str(_resolve(n)) for n in differences if isinstance(_resolve(n), str)]
    unknown = [n for n in names if n not in adobe_glyphs and not _UNICODE_NAME.fullmatch(n[1:])]
    return len(unknown) > len(names) / 2


def _pypdf_knows(cmap: str) -> bool:
    try:
        from pypdf._cmap import _predefined_cmap

        return cmap in _predefined_cmap
    except Exception:
        return False


def _resolve(obj: Any) -> Any:
    try:
        return obj.get_object() if hasattr(obj, "get_object") else obj
    except Exception:
        return None
