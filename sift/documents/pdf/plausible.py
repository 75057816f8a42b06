"""Does a page's extracted text read as text? sift never hands an agent silent garbage.

pypdf (and pdfium) return wrong characters without any error when a font carries no Unicode
map: glyph ids come out as control characters, or as code points scattered over a dozen
scripts. Right-to-left text breaks in its own ways: pypdf hands out Arabic presentation forms
(the shaped glyphs, U+FB50–U+FDFF, U+FE70–U+FEFC) instead of letters, a producer that wrote
logical order left to right comes back reversed, and glyphs drawn one by one come back as
letters separated by spaces. The engines report what they know about fonts; this module
judges the text itself, and `badness` ranks two engines' texts of one page.
"""

from __future__ import annotations

import re
import unicodedata

UNMAPPED_FONT = "text may be garbled (font without Unicode map)"
REPLACEMENT = "text may be garbled (replacement characters)"
PRIVATE_USE = "text may be garbled (private-use glyphs)"
CONTROL = "text may be garbled (control characters)"
SCRIPT_MIX = "text may be garbled (implausible mix of scripts)"
PRESENTATION = "text may be garbled (Arabic presentation forms in place of letters)"
REVERSED = "text may be garbled (right-to-left words reversed)"
ISOLATED = "text may be garbled (letters separated by spaces)"

_CONTROL = re.compile(r"[\x00-\x08\x0b\x0e-\x1f\x7f-\x9f]")
_PRIVATE = re.compile("[\ue000-\uf8ff\U000f0000-\U0010ffff]")
_PRESENTATION = re.compile("[\ufb50-\ufdff\ufe70-\ufefc]")
_RTL_WORD = re.compile("[\u0590-\u08ff\ufb1d-\ufdff\ufe70-\ufefc\u200c]+")
_LETTERS = re.compile(r"[^\W\d_]+")
# What page text never carries: C0/C1 controls but newline and tab, and lone surrogates
# (they cannot be encoded). Carriage returns and form feeds become newlines first.
_STRIP = re.compile("[\x00-\x08\x0b-\x1f\x7f-\x9f\ud800-\udfff]")
_NEWLINE = re.compile("\r\n?|\x0c")
# The characters of most pages: printable ASCII, newline and tab (see `_plain`).
_PLAIN = bytes(range(0x20, 0x7F)) + b"\t\n"
# Such a page's shape: its whitespace a space, every other character an "x".
_SHAPE = bytes.maketrans(b"\t\n" + bytes(range(0x20, 0x7F)), b"   " + b"x" * 94)

# Frequent Arabic and Persian words and affixes whose reversal is rare: seen mostly reversed,
# the page was written left to right in logical order (or read back in visual order).
_RTL_WORDS = frozenset(
    [
        "في",
        "من",
        "على",
        "إلى",
        "عن",
        "التي",
        "الذي",
        "هذا",
        "هذه",
        "كان",
        "أن",
        "ذلك",
        "بين",
        "كل",
        "است",
        "از",
        "به",
        "که",
        "این",
        "برای",
        "آن",
        "یک",
        "شود",
        "کرد",
        "بود",
        "نیز",
        "خود",
    ]
)
_RTL_REVERSED = frozenset(w[::-1] for w in _RTL_WORDS) - _RTL_WORDS
# Text set in presentation forms is nearly all of them; ligatures such as ﷺ are a few.
MIN_SHAPED = 10
SHAPED_SHARE = 0.2
MIN_CUES = 5  # frequent words (either way round) needed before order is judged

# Scripts that one language legitimately writes together count as one.
_GROUP = {
    "HIRAGANA": "CJK",
    "KATAKANA": "CJK",
    "HANGUL": "CJK",
    "BOPOMOFO": "CJK",
    "IDEOGRAPHIC": "CJK",
    "KANGXI": "CJK",
    "COPTIC": "GREEK",
}
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
    if _plain(text):  # no replacement or control character, one script: only the spacing
        return _check_plain(text)
    words = text.split()
    lengths = list(map(len, words))
    n = sum(lengths)
    if n == 0:
        return None
    if too_many(text.count("\ufffd"), n):
        return REPLACEMENT
    if too_many(len(_CONTROL.findall(text)), n):
        return CONTROL
    if lengths.count(1) >= MIN_LETTERS and _isolated(words):  # the count settles most pages
        return ISOLATED
    if text.isascii():
        return None
    if too_many(len(_PRIVATE.findall(text)), n):
        return PRIVATE_USE
    if _script_count(text) >= MAX_SCRIPTS:
        return SCRIPT_MIX
    rtl = _RTL_WORD.findall(text)
    if rtl:
        shaped = sum(len(_PRESENTATION.findall(w)) for w in rtl)
        if shaped >= MIN_SHAPED and shaped > SHAPED_SHARE * sum(map(len, rtl)):
            return PRESENTATION
        if _reversed(rtl):
            return REVERSED
    return None


def badness(text: str, warning: str | None = None) -> float:
    """How garbled `text` looks, to choose between two engines' texts of a page (lower wins).

    A page that passes `check` (and has no `warning` from its engine) scores below one; one
    that fails scores one plus the share of its characters that are odd (replacement,
    control, private-use, presentation forms).
    """
    n = sum(map(len, text.split()))
    if n == 0:
        return 1.0 if warning else 0.0
    odd = (
        text.count("\ufffd")
        + len(_CONTROL.findall(text))
        + len(_PRIVATE.findall(text))
        + len(_PRESENTATION.findall(text))
    )
    return min(odd / n, 1.0) + (1.0 if warning or check(text) else 0.0)


def clean(text: str, garbled: bool = False) -> str:
    """Page text as sift hands it out: newlines for CR and FF, no other control characters.

    On a `garbled` page (one with a warning) they become U+FFFD instead of vanishing: glyph ids
    read as control codes stay visible as unreadable text, not a blank page ("scanned?").
    """
    if _plain(text):
        return text  # nothing to replace: spares the two scans below
    return _STRIP.sub("\ufffd" if garbled else "", _NEWLINE.sub("\n", text))


def _check_plain(text: str) -> str | None:
    """`check` of a `_plain` page, where only letters one by one can be wrong. Counting
    " x " in its shape (C speed) misses at most every other single character of a run, so
    twice the count bounds them: a page with few needs no split into words."""
    shape = b" " + text.encode("ascii").translate(_SHAPE) + b" "
    if 2 * shape.count(b" x ") < MIN_LETTERS:
        return None
    words = text.split()
    return ISOLATED if list(map(len, words)).count(1) >= MIN_LETTERS and _isolated(words) else None


def _plain(text: str) -> bool:
    """Is `text` printable ASCII, newlines and tabs only? A C-speed test (~2 µs a page, where
    one regular expression takes ~15 µs) that settles most pages' checks and cleaning."""
    return text.isascii() and not text.encode("ascii").translate(None, _PLAIN)


def _isolated(words: list[str]) -> bool:
    """Letters one by one between spaces ("ب ر ا ب ر"): glyphs drawn singly, joins lost.

    Only scripts that write words with several letters count (a CJK character is a word).
    """
    words = [w for w in words if _LETTERS.fullmatch(w) and not _cjk(w[0])]
    single = sum(1 for w in words if len(w) == 1)
    return single >= MIN_LETTERS and single > 0.5 * len(words)


def _cjk(ch: str) -> bool:
    return ch >= "\u2e80" and _script(ch) == "CJK"


def _reversed(words: list[str]) -> bool:
    """Are frequent right-to-left words mostly seen back to front?"""
    forward = backward = 0
    for w in words:
        w = w.strip("\u200c")
        if w in _RTL_WORDS:
            forward += 1
        elif w in _RTL_REVERSED:
            backward += 1
    return forward + backward >= MIN_CUES and backward > 2 * forward


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
