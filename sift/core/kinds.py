"""What a fetched body is (html, json, text, pdf or other) and how to turn its bytes into text.

The kind decides the path a response takes (clean worker, PDF pool, or 415), so it follows
reference/P5a-01 rule 1 exactly: the Content-Type's media type decides, and only an empty or
octet-stream type lets the first bytes speak. Decoding honours the header's charset first,
then an HTML `<meta charset>` or a byte-order mark, then falls back to UTF-8 with replacement
characters: a wrong guess must never raise.
"""

from __future__ import annotations

import codecs
import re
from typing import Literal

import msgspec

Kind = Literal["html", "json", "text", "pdf", "other"]

PDF_TYPES = frozenset({"application/pdf", "application/x-pdf"})
HTML_TYPES = frozenset({"text/html", "application/xhtml+xml"})
TEXT_TYPES = frozenset({"text/plain", "text/markdown", "text/csv"})
OCTET_TYPES = frozenset({"application/octet-stream", "binary/octet-stream"})

SNIFF_LEN = 1024
# WHATWG "binary data bytes": control characters that never occur in text.
_BINARY = re.compile(rb"[\x00-\x08\x0b\x0e-\x1a\x1c-\x1f]")
# WHATWG sniffing: an HTML document starts with one of these tags (after white space).
_HTML_START = re.compile(
    rb"\s*<(!doctype\s+html|html|head|script|iframe|h1|div|font|table|a|style|title|b|body|br|p"
    rb"|!--)[\s>]",
    re.IGNORECASE,
)
_HTML_ANYWHERE = re.compile(rb"<(html|body)[\s>]", re.IGNORECASE)
_CHARSET_PARAM = re.compile(r"""charset\s*=\s*["']?([^"';\s]+)""", re.IGNORECASE)
_META_CHARSET = re.compile(rb"""<meta[^>]+charset\s*=\s*["']?\s*([\w.:-]+)""", re.IGNORECASE)
# Labels that browsers (WHATWG Encoding) read as a superset of what they name: pages written
# in the superset while declaring the subset are common.
_SUPERSETS = {
    **dict.fromkeys(
        ("iso-8859-1", "iso8859-1", "latin1", "latin-1", "l1", "us-ascii", "ascii"), "cp1252"
    ),
    **dict.fromkeys(("gb2312", "gb_2312-80", "gbk", "x-gbk"), "gb18030"),
    **dict.fromkeys(("shift_jis", "shift-jis", "sjis", "x-sjis", "ms_kanji"), "cp932"),
    **dict.fromkeys(("euc-kr", "ks_c_5601-1987", "windows-949"), "cp949"),
    **dict.fromkeys(("iso-8859-9", "latin5"), "cp1254"),
    **dict.fromkeys(("tis-620", "iso-8859-11"), "cp874"),
}


def media_type(content_type: str) -> str:
    """The media type alone: lower-cased, parameters dropped."""
    return content_type.split(";", 1)[0].strip().lower()


def kind(content_type: str, body: bytes) -> Kind:
    """Classify a fetched body as in P5a-01 rule 1.

    Args:
        content_type: the response's Content-Type header ("" when absent).
        body: the (possibly partial) body; only the first bytes are looked at, except that
            a sniffed `{`/`[` body must parse as JSON to be called json.

    Returns:
        "html", "json", "text", "pdf" or "other".
    """
    mt = media_type(content_type)
    if mt in PDF_TYPES:
        return "pdf"
    if mt in HTML_TYPES:
        return "html"
    if mt == "application/json" or (mt.startswith("application/") and mt.endswith("+json")):
        return "json"
    if mt in TEXT_TYPES:
        return "text"
    if mt in OCTET_TYPES:
        return "pdf" if b"%PDF-" in body[:SNIFF_LEN] else "other"
    if not mt:
        return "pdf" if b"%PDF-" in body[:SNIFF_LEN] else sniff(body)
    return "other"


def sniff(body: bytes) -> Kind:
    """html, json or text from the first bytes of a body that came without a type.

    A body with binary control bytes near its start (images, archives, executables) is
    "other": handing it to a text cleaner would only produce garbage.
    """
    head = body[:SNIFF_LEN]
    for bom in (codecs.BOM_UTF8, codecs.BOM_UTF16_LE, codecs.BOM_UTF16_BE):
        if head.startswith(bom):
            if bom != codecs.BOM_UTF8:
                return "text"
            head = head[len(bom) :]
            body = body[len(bom) :]
            break
    if _BINARY.search(head):
        return "other"
    if _HTML_START.match(head) or _HTML_ANYWHERE.search(head):
        return "html"
    if head.lstrip()[:1] in (b"{", b"["):
        try:
            msgspec.json.decode(body)
        except msgspec.DecodeError:
            return "text"
        return "json"
    return "text"


def charset(content_type: str) -> str | None:
    """The charset parameter of a Content-Type as a Python codec name, or None.

    An unknown charset counts as none, so that decoding falls through to the next clue.
    """
    m = _CHARSET_PARAM.search(content_type.partition(";")[2])
    return _codec(m.group(1)) if m else None


def _codec(label: str) -> str | None:
    label = label.strip().lower()
    if label in _SUPERSETS:
        return _SUPERSETS[label]
    try:
        return codecs.lookup(label).name
    except LookupError:
        return None


def _bom(body: bytes) -> str | None:
    if body.startswith(codecs.BOM_UTF8):
        return "utf-8-sig"
    if body.startswith(codecs.BOM_UTF16_LE) or body.startswith(codecs.BOM_UTF16_BE):
        return "utf-16"
    return None


def _meta_charset(body: bytes) -> str | None:
    m = _META_CHARSET.search(body[:4096])
    if not m:
        return None
    name = _codec(m.group(1).decode("ascii", "replace"))
    # A page that could carry an ASCII <meta> cannot be UTF-16 (WHATWG: read it as UTF-8).
    return "utf-8" if name and name.startswith("utf-16") else name


def decode(body: bytes, content_type: str) -> str:
    """The body as text: header charset, then BOM, then (HTML) `<meta charset>`, then UTF-8.

    Never raises: undecodable bytes become U+FFFD.
    """
    mt = media_type(content_type)
    encoding = charset(content_type) or _bom(body)
    if encoding is None and (mt in HTML_TYPES or not mt):
        encoding = _meta_charset(body)
    text = body.decode(encoding or "utf-8", errors="replace")
    return text[1:] if text.startswith("\ufeff") else text
