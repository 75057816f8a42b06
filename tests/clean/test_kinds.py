"""Kinds (the media type decides; only an empty or octet-stream type sniffs), charsets and
decoding."""

from __future__ import annotations

import io
import zipfile

import pytest

from sift.clean import kinds
from tests.support import office

PDF = b"%PDF-1.7\n%\xe2\xe3\xcf\xd3\n1 0 obj"
PNG = b"\x89PNG\r\n\x1a\n\x00\x00\x00\rIHDR"


@pytest.mark.parametrize(
    ("content_type", "body", "expected"),
    [
        ("application/pdf", b"not a pdf at all", "pdf"),
        ("Application/X-PDF; charset=binary", b"", "pdf"),
        ("text/html", b"{}", "html"),
        ("TEXT/HTML; charset=UTF-8", b"", "html"),
        ("application/xhtml+xml", b"<html/>", "html"),
        ("application/json", b"<html>", "json"),
        ("application/ld+json; charset=utf-8", b"{}", "json"),
        ("application/vnd.api+json", b"{}", "json"),
        ("text/plain", PDF, "text"),
        ("text/markdown", b"# hi", "text"),
        ("text/csv", b"a,b", "csv"),
        ("text/tab-separated-values", b"a\tb", "tsv"),
        ("application/rtf", b"", "rtf"),
        ("", b"{\\rtf1\\ansi hello}", "rtf"),
        ("application/octet-stream", PDF, "pdf"),
        ("binary/octet-stream", b"\x00" * 500 + PDF, "pdf"),
        ("application/octet-stream", b"\x00" * 1100 + PDF, "other"),
        ("application/octet-stream", b"<html><body>hi</body></html>", "other"),
        ("", b"junk before " + PDF, "pdf"),
        ("", b"  <!DOCTYPE html><html><body>x</body></html>", "html"),
        ("", b'<?xml version="1.0"?>\n<html xmlns="http://www.w3.org/1999/xhtml"></html>', "html"),
        ("", b"<p>a paragraph</p>", "html"),
        ("", b' {"a": [1, 2]} ', "json"),
        ("", b"[1, 2", "text"),
        ("", b"plain words\nand more", "text"),
        ("", b"", "text"),
        ("", PNG, "image"),
        ("application/octet-stream", b"RIFF\x00\x00\x00\x00WEBPVP8 ", "image"),
        ("", b"II*\x00\x08\x00", "image"),
        ("", b"GIF89a\x01\x00", "image"),
        ("", b"\x1f\x8b\x08\x00\x00\x00\x00\x00", "other"),
        ("image/png", PNG, "image"),
        ("image/svg+xml", b"<svg/>", "other"),
        ("application/xml", b"<a/>", "other"),
        ("text/xml", b"<a/>", "other"),
        ("video/mp4", b"", "other"),
    ],
)
def test_kind_rule_1(content_type: str, body: bytes, expected: str) -> None:
    assert kinds.kind(content_type, body) == expected


@pytest.mark.parametrize("fmt", list(office.MAKERS))
def test_office_files_by_type_and_by_their_manifest(fmt: str) -> None:
    """Declared, an office file is its type; untyped, octet-stream or zip, its manifest
    (ODF's and EPUB's `mimetype`, OOXML's `[Content_Types].xml`) or signature says which."""
    data = office.MAKERS[fmt]()
    assert kinds.kind(office.MEDIA[fmt], data) == fmt
    if fmt not in ("csv", "tsv"):  # plain text: only its type says it is a table
        for ctype in ("", "application/octet-stream", "application/zip"):
            assert kinds.kind(ctype, data) == fmt, ctype


def test_a_zip_without_a_document_manifest_is_other() -> None:
    out = io.BytesIO()
    with zipfile.ZipFile(out, "w") as zf:
        zf.writestr("mimetype", "application/x-unknown")
        zf.writestr("a.txt", "x")
    assert kinds.kind("application/octet-stream", out.getvalue()) == "other"
    assert kinds.kind("application/zip", b"PK\x03\x04 cut short") == "other"


def test_sniff_skips_a_utf8_bom() -> None:
    assert kinds.kind("", b"\xef\xbb\xbf<!doctype html><title>x</title>") == "html"
    assert kinds.kind("", b'\xef\xbb\xbf{"a": 1}') == "json"


@pytest.mark.parametrize(
    ("content_type", "expected"),
    [
        ("text/html; charset=UTF-8", "utf-8"),
        ('text/html; charset="windows-1251"', "cp1251"),
        ("text/html;charset=iso-8859-1", "cp1252"),
        ("text/plain; format=flowed; charset=us-ascii", "cp1252"),
        ("text/html; charset=GB2312", "gb18030"),
        ("text/html; charset=Shift_JIS", "cp932"),
        ("text/html; charset=no-such-charset", None),
        ("text/html", None),
        ("", None),
    ],
)
def test_charset(content_type: str, expected: str | None) -> None:
    assert kinds.charset(content_type) == expected


def test_decode_prefers_the_header_charset() -> None:
    body = '<meta charset="utf-8"><p>Привет</p>'.encode("cp1251")
    assert "Привет" in kinds.decode(body, "text/html; charset=windows-1251")


def test_decode_reads_meta_charset_for_html() -> None:
    body = '<html><head><meta charset="windows-1251"></head><body>Привет</body>'.encode("cp1251")
    assert "Привет" in kinds.decode(body, "text/html")
    old_style = (
        '<meta http-equiv="Content-Type" content="text/html; charset=koi8-r"><p>Привет</p>'
    ).encode("koi8-r")
    assert "Привет" in kinds.decode(old_style, "")


def test_decode_ignores_meta_charset_outside_html() -> None:
    body = '<meta charset="windows-1251"> é'.encode()
    assert kinds.decode(body, "text/plain").endswith("é")


def test_decode_honours_a_bom() -> None:
    assert kinds.decode("\ufeffhé".encode(), "text/html") == "hé"
    assert kinds.decode("\ufeffhé".encode("utf-16-le"), "text/plain") == "hé"
    assert kinds.decode("\ufeffhé".encode(), "text/html; charset=utf-8") == "hé"


def test_decode_never_raises() -> None:
    text = kinds.decode(b"caf\xe9 \xff\xfe", "text/plain; charset=utf-8")
    assert text.startswith("caf\ufffd")
    assert kinds.decode(b"a", "text/plain; charset=bogus") == "a"


def test_latin1_label_reads_as_windows_1252() -> None:
    assert kinds.decode(b"\x93quoted\x94", "text/plain; charset=ISO-8859-1") == "“quoted”"
