"""Which encoding a fetched body is in, resolved the way browsers resolve it (WHATWG Encoding).

Order: a byte-order mark, then the Content-Type's charset, then an HTML `<meta charset>` or
`<meta http-equiv="Content-Type">` in the first bytes, then detection. Labels mean what
browsers make of them: "iso-8859-1", "latin1" and "us-ascii" are windows-1252, "gb2312" is GBK
(read as its superset GB18030), "shift_jis" is windows-31J, "euc-kr" is windows-949, "big5" is
Big5-HKSCS. A page with no declaration is UTF-8 when it decodes as such; otherwise
`charset-normalizer` tells the multi-byte CJK encodings and the non-Latin single-byte ones
apart, and anything else is windows-1252, the web's default for undeclared Latin pages
(detectors often name a wrong Latin code page, e.g. cp775 for French).
"""

from __future__ import annotations

import codecs
import re

# compiled on first use (`re` keeps them): a cached `sift extract` decodes no body
_CHARSET_PARAM = r"""charset\s*=\s*["']?([^"';\s]+)"""
_META_CHARSET = rb"""<meta[^>]+charset\s*=\s*["']?\s*([\w.:-]+)"""
_PRESCAN = 4096  # browsers look at the first 1024 bytes; pages with long heads exist
_DETECT = 64 * 1024  # detection reads a sample: enough for any page, bounded in time
_LABELS = {
    **dict.fromkeys(
        (
            "iso-8859-1",
            "iso8859-1",
            "iso_8859-1",
            "latin1",
            "latin-1",
            "l1",
            "us-ascii",
            "ascii",
            "cp819",
            "ibm819",
            "windows-1252",
            "x-cp1252",
            "cp1252",
        ),
        "cp1252",
    ),
    **dict.fromkeys(
        (
            "gb2312",
            "gb_2312-80",
            "gb_2312",
            "gbk",
            "x-gbk",
            "cp936",
            "gb18030",
            "chinese",
            "csgb2312",
            "iso-ir-58",
        ),
        "gb18030",
    ),
    **dict.fromkeys(
        (
            "shift_jis",
            "shift-jis",
            "sjis",
            "x-sjis",
            "ms_kanji",
            "ms932",
            "windows-31j",
            "csshiftjis",
            "cp932",
        ),
        "cp932",
    ),
    **dict.fromkeys(
        (
            "euc-kr",
            "ks_c_5601-1987",
            "ks_c_5601-1989",
            "ksc5601",
            "windows-949",
            "cseuckr",
            "korean",
            "cp949",
        ),
        "cp949",
    ),
    **dict.fromkeys(("big5", "big5-hkscs", "cn-big5", "csbig5", "x-x-big5"), "big5hkscs"),
    **dict.fromkeys(("iso-8859-9", "latin5", "windows-1254"), "cp1254"),
    **dict.fromkeys(("tis-620", "iso-8859-11", "windows-874"), "cp874"),
}
# What detection may name besides UTF-8: the multi-byte CJK encodings and the single-byte
# code pages of non-Latin scripts. Any other guess is read as windows-1252.
_DETECTABLE = {
    "gb18030": "gb18030",
    "gbk": "gb18030",
    "gb2312": "gb18030",
    "hz": "hz",
    "big5": "big5hkscs",
    "big5hkscs": "big5hkscs",
    "cp950": "big5hkscs",
    "cp932": "cp932",
    "shift_jis": "cp932",
    "euc_jp": "euc_jp",
    "iso2022_jp": "iso2022_jp",
    "cp949": "cp949",
    "euc_kr": "cp949",
    "johab": "johab",
    "cp1251": "cp1251",
    "koi8_r": "koi8_r",
    "koi8_u": "koi8_u",
    "iso8859_5": "iso8859_5",
    "mac_cyrillic": "cp1251",
    "cp866": "cp866",
    "cp1253": "cp1253",
    "iso8859_7": "iso8859_7",
    "cp1255": "cp1255",
    "iso8859_8": "cp1255",
    "cp1256": "cp1256",
    "iso8859_6": "iso8859_6",
    "cp874": "cp874",
    "tis_620": "cp874",
}


def codec(label: str) -> str | None:
    """The Python codec a charset label stands for in a browser, or None if unknown."""
    label = label.strip().strip("\"'").lower()
    if label in _LABELS:
        return _LABELS[label]
    try:
        return codecs.lookup(label).name
    except LookupError:
        return None


def header_charset(content_type: str) -> str | None:
    """The codec of a Content-Type's charset parameter (quoted, any case, among others)."""
    m = re.search(_CHARSET_PARAM, content_type.partition(";")[2], re.IGNORECASE)
    return codec(m.group(1)) if m else None


def bom(body: bytes) -> str | None:
    if body.startswith(codecs.BOM_UTF8):
        return "utf-8-sig"
    if body.startswith(codecs.BOM_UTF16_LE) or body.startswith(codecs.BOM_UTF16_BE):
        return "utf-16"
    return None


def meta_charset(body: bytes) -> str | None:
    """The codec a `<meta>` near the top declares; a UTF-16 one means UTF-8 (WHATWG)."""
    m = re.search(_META_CHARSET, body[:_PRESCAN], re.IGNORECASE)
    if not m:
        return None
    name = codec(m.group(1).decode("ascii", "replace"))
    return "utf-8" if name and name.startswith("utf-16") else name


def detect(body: bytes) -> str:
    """The encoding of an undeclared body: UTF-8 if it is valid UTF-8, a detected CJK or
    non-Latin code page, else windows-1252."""
    sample = body[:_DETECT]
    try:
        sample.decode("utf-8")
        return "utf-8"
    except UnicodeDecodeError as exc:
        if exc.start >= len(sample) - 3 and len(body) > _DETECT:
            return "utf-8"  # only the sample's cut split a character
    import charset_normalizer  # late: rarely needed, and `sift extract` starts without it

    best = charset_normalizer.from_bytes(sample).best()
    found = best.encoding if best is not None else ""
    if found in ("utf_8", "ascii"):
        return "utf-8"
    return _DETECTABLE.get(found, "cp1252")


def resolve(body: bytes, content_type: str, html: bool = True) -> str:
    """The codec to read `body` with: BOM, header, (HTML) meta, detection."""
    return (
        bom(body)
        or header_charset(content_type)
        or (meta_charset(body) if html else None)
        or detect(body)
    )


def decode(body: bytes, content_type: str, html: bool = True) -> str:
    """The body as text; never raises (undecodable bytes become U+FFFD)."""
    text = body.decode(resolve(body, content_type, html), errors="replace")
    return text[1:] if text.startswith("\ufeff") else text
