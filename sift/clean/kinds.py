"""What a fetched body is (html, json, text, pdf, image or other) and how to turn its bytes
into text.

The kind decides the path a response takes (clean worker, PDF pool, OCR, or 415), so the rule
is strict: the Content-Type's media type decides, and only an empty, octet-stream or zip type
lets the first bytes speak (`%PDF-` within the first 1024; an image's signature; an office
file's signature and manifest, `formats.py`). Decoding honours a byte-order mark
first, then the header's charset, then an HTML `<meta charset>`, then detection
(`sift.clean.charset`): a wrong guess must never raise.
"""

from __future__ import annotations

import codecs
import functools
import re
from typing import Literal

import msgspec

from sift.clean import charset as encodings
from sift.clean import formats

Kind = Literal["html", "json", "text", "pdf", "image", "other"] | formats.Format
OFFICE: frozenset[str] = frozenset(formats.FORMATS)  # office files and e-books (`formats.py`)

PDF_TYPES = frozenset({"application/pdf", "application/x-pdf"})
HTML_TYPES = frozenset({"text/html", "application/xhtml+xml"})
TEXT_TYPES = frozenset({"text/plain", "text/markdown"})
OCTET_TYPES = frozenset({"application/octet-stream", "binary/octet-stream"})
ZIP_TYPES = frozenset({"application/zip", "application/x-zip-compressed"})
# Images sift reads by OCR, by type and by signature (a WebP is RIFF, its size, then WEBP).
IMAGE_TYPES = frozenset({"image/png", "image/jpeg", "image/webp", "image/tiff", "image/gif"})
_IMAGE_MAGIC = (b"\x89PNG\r\n\x1a\n", b"\xff\xd8\xff", b"GIF87a", b"GIF89a", b"II*\x00", b"MM\x00*")


def is_image(body: bytes) -> bool:
    """Do the first bytes say PNG, JPEG, GIF, TIFF or WebP?"""
    return body.startswith(_IMAGE_MAGIC) or (body[:4] == b"RIFF" and body[8:12] == b"WEBP")


SNIFF_LEN = 1024


@functools.cache  # compiled at the first sniff: a cached `sift extract` sniffs nothing
def _sniffers() -> tuple[re.Pattern[bytes], re.Pattern[bytes], re.Pattern[bytes]]:
    """WHATWG "binary data bytes" (control characters that never occur in text); the tags an
    HTML document starts with (after white space); the tags it may hold further on."""
    return (
        re.compile(rb"[\x00-\x08\x0b\x0e-\x1a\x1c-\x1f]"),
        re.compile(
            rb"\s*<(!doctype\s+html|html|head|script|iframe|h1|div|font|table|a|style|title|b"
            rb"|body|br|p|!--)[\s>]",
            re.IGNORECASE,
        ),
        re.compile(rb"<(html|body)[\s>]", re.IGNORECASE),
    )


def media_type(content_type: str) -> str:
    """The media type alone: lower-cased, parameters dropped."""
    return content_type.split(";", 1)[0].strip().lower()


def kind(content_type: str, body: bytes) -> Kind:
    """Classify a fetched body: the media type decides; only an empty or octet-stream type sniffs.

    Args:
        content_type: the response's Content-Type header ("" when absent).
        body: the (possibly partial) body; only the first bytes are looked at, except that
            a sniffed `{`/`[` body must parse as JSON to be called json.

    Returns:
        "html", "json", "text", "pdf", "image", an office format (`formats.FORMATS`) or
        "other".
    """
    mt = media_type(content_type)
    if mt in PDF_TYPES:
        return "pdf"
    office = formats.by_media_type(mt)
    if office is not None:
        return office
    if mt in HTML_TYPES:
        return "html"
    if mt == "application/json" or (mt.startswith("application/") and mt.endswith("+json")):
        return "json"
    if mt in TEXT_TYPES:
        return "text"
    if mt in IMAGE_TYPES:
        return "image"
    if mt in OCTET_TYPES or mt in ZIP_TYPES or not mt:
        if b"%PDF-" in body[:SNIFF_LEN]:
            return "pdf"
        if is_image(body):
            return "image"
        office = formats.sniff(body)
        if office:
            return office
    return "other" if mt else sniff(body)


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
    binary, html_start, html_anywhere = _sniffers()
    if binary.search(head):
        return "other"
    if html_start.match(head) or html_anywhere.search(head):
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
    return encodings.header_charset(content_type)


def decode(body: bytes, content_type: str) -> str:
    """The body as text, its encoding resolved as browsers do (`sift.clean.charset`): BOM,
    header charset, (HTML) `<meta charset>`, then detection. Never raises: undecodable bytes
    become U+FFFD.
    """
    mt = media_type(content_type)
    return encodings.decode(body, content_type, html=mt in HTML_TYPES or not mt)
