"""Does a page's extracted text read as text? sift never hands an agent silent garbage.

pypdf (and pdfium) return wrong characters without any error when a font carries no Unicode
map: glyph ids come out as control characters, or as code points scattered over a dozen
scripts. The engines report what they know about fonts; this module judges the text itself:
replacement characters, private-use glyphs, control characters, an implausible mix of scripts.
"""

from __future__ import annotations

import re
import unicodedata

UNMAPPED_FONT = "text may be garbled (font without Unicode map)"
REPLACEMENT = "text may be garbled (replacement characters)"
PRIVATE_USE = "text may be garbled (private-use glyphs)"
CONTROL = "text may be garbled (control characters)"
SCRIPT_MIX = "text may be garbled (implausible mix of scripts)"

_CONTROL = re.compile(r"[\x00-\x08\x0b\x0e-\x1f\x7f-\x9f]")
_SPACE = re.compile(r"\s+")
_PRIVATE = re.compile("[\ue000-\uf8ff\U000f0000-\U0010ffff]")

# Scripts that one language legitimately writes together count as one.
_GROUP = {
    "HIRAGANA": "CJK", "KATAKANA": "CJK", "HANGUL": "CJK", "BOPOMOFO": "CJK",
    "IDEOGRAPHIC": "CJK", "KANGXI": "CJK", "COPTIC": "GREEK",
}  # fmt: skip
_SKIP = ("MODIFIER", "MATHEMATICAL", "COMBINING", "DOUBLE-STRUCK", "SCRIPT", "BLACK-LETTER")
_scripts: dict[str, str] = {}

MIN_LETTERS = 20  # fewer letters than this say nothing about the script mix
MAJOR_SHARE = 0.02  # a script with at least this share of the letters is present
MAX_SCRIPTS = 4  # this many scripts on one page is the mark of code points read as glyph ids


def too_many(bad: int, n: int) -> bool:
    """A few odd characters in a long page are normal; a share of them is not."""
    return bad > 0 and (bad >= 0.1 * n or (bad >= 3 and bad >= 0.02 * n))


def check(text: str) -> str | None:
    """A warning when `text` looks garbled, else None. Blank text is not garbled."""
    n = len(_SPACE.sub("", text))
    if n == 0:
        return None
    if too_many(text.count("\ufffd"), n):
        return REPLACEMENT
    if too_many(len(_CONTROL.findall(text)), n):
        return CONTROL
    if text.isascii():
        return None
    if too_many(len(_PRIVATE.findall(text)), n):
        return PRIVATE_USE
    if _script_count(text) >= MAX_SCRIPTS:
        return SCRIPT_MIX
    return None


def _script(ch: str) -> str:
    s = _scripts.get(ch)
    if s is None:
        name = unicodedata.name(ch, "")
        word = name.split(" ", 1)[0] if name else ""
        for prefix in ("FULLWIDTH", "HALFWIDTH", "SMALL"):
            if word == prefix:
                word = name.split(" ", 2)[1] if name.count(" ") else ""
        s = "" if not word or word in _SKIP else _GROUP.get(word, word)
        if len(_scripts) < 50_000:
            _scripts[ch] = s
    return s


def _script_count(text: str) -> int:
    """How many scripts hold a real share of the page's letters."""
    counts: dict[str, int] = {}
    letters = 0
    for ch in text:
        if ch.isascii():
            if ch.isalpha():
                counts["LATIN"] = counts.get("LATIN", 0) + 1
                letters += 1
            continue
        if not ch.isalpha():
            continue
        s = _script(ch)
        if s:
            counts[s] = counts.get(s, 0) + 1
            letters += 1
    if letters < MIN_LETTERS:
        return 0
    return sum(1 for c in counts.values() if c >= MAJOR_SHARE * letters)
