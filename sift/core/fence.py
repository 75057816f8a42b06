"""The fence between sift's lines and a document's: sift's line grammar, and the one rule that
keeps a document from writing a line of that grammar (DESIGN §2, README "What the agent sees").

sift writes these lines into an answer's text, and only these:

- the context header `Source: <url> · fetched <time>` (under a `# <title>` line);
- page, section and part markers `--- page 3 ---` (section, slide, sheet, chapter, part), and
  the CLI's `--- target 2: <url> ---` heading each result of `sift batch status --results`;
- notes that stand on a line of their own in brackets: `[sift: …]`, `[warning: …]`,
  `[continue: …]`, `[content_hash: …]`, `[pages 1–20 of 300 extracted]`, `[returned …]` …;
- the map's directions (`This document is longer than one answer. …`, `pages 12 · ~3,000
  tokens`) and grep's (`4 matching lines for grep=…`, `p. 3: <the matching line>`);
- the CLI's `sift: …` lines on standard error.

A line of document text that matches the grammar gets a backslash in front of it (after its
indentation): `\\[warning: …]`, `\\--- page 3 ---`. Markdown shows it as before; no line sift
writes starts with a backslash, so such a line is the document's. Text that sift embeds
inside one of its own lines (a title, an outline entry, a warning) is made one line first.
"""

from __future__ import annotations

import functools
import re

# The patterns but `_NOT_ONE_LINE` are compiled on first use (functools.cache): most texts
# need none of them, and compiling them all at import was 3 ms of every `sift` command's start.


@functools.cache
def _breaks() -> re.Pattern[str]:
    """Line breaks other than "\n" that a reader may split on: made "\n", so the fence sees
    them."""
    return re.compile("\r\n?|[\x0b\x0c\x1c-\x1e\x85\u2028\u2029]")


# What may stand before a line's first visible character without showing: spaces, and the
# invisible characters a document could hide a line's true start behind.
_LEAD = r"(?:[^\S\n]|[\u200b-\u200f\u2060-\u2064\ufeff\u202a-\u202e\u2066-\u2069])*"
_UNIT = r"(?:page|section|slide|sheet|chapter|part)s?"
# Look-alikes an agent reads as sift's "---", "·", "[", "]" and ":": other dashes, box-drawing
# lines, other middle dots and bullets, fullwidth forms.
_DASH = "\u2010-\u2015\u2212\u2500\u2501\u2e3a\u2e3b\ufe58\ufe63\uff0d"
_DOTS = "\u2022\u2219\u22c5\u30fb\uff65"
_DOT = f"[\u00b7{_DOTS}]"
_RULE = rf"[-{_DASH}]{{2,}}"
# one long dash as long as two hyphens: a marker only whole (`— page 8 —`), prose opens so too
_LONG = r"[\u2014\u2015\u2e3a\u2e3b]"
_OPEN, _CLOSE, _COLON = r"[\[\uff3b]", r"[\]\uff3d]", r"[:\uff1a]"
_GRAMMAR = (
    rf"Source:[^\n]*{_DOT} fetched"  # the context header
    rf"|{_RULE}[^\S\n]*(?:{_UNIT}|target)\b"  # a page / section / part marker; the CLI's
    # `--- target 2: <url> ---` heading each result of `sift batch status --results`
    rf"|{_LONG}[^\S\n]*{_UNIT}[^\S\n]+[\d,]+[^\S\n]*[-{_DASH}]+[^\S\n]*(?:\n|\Z)"
    rf"|{_OPEN}(?![^\n]*{_CLOSE}\()[^\n]*{_CLOSE}[^\S\n]*(?:\n|\Z)"  # a note alone (not a link)
    rf"|{_OPEN}[\w \-]{{1,40}}{_COLON}"  # the start of one, even unclosed: [warning: …
    r"|This document is longer than one answer"  # the map's directions
    rf"|{_UNIT}(?: [\d,]+(?:[–-][\d,]+)?)?(?: of [\d,]+)?(?: extracted)? {_DOT} ~"  # map size
    r"|[\d,]+ matching lines? for grep="  # grep's head
    r"|no line matches grep="
    r"|(?:p|s|sl|sh|ch)\. \d+: "  # a grep hit
    r"|sift: "  # the CLI's own lines
)


@functools.cache
def _sift_line() -> re.Pattern[str]:
    return re.compile(rf"{_LEAD}(?:{_GRAMMAR})", re.IGNORECASE)


@functools.cache
def _document_line() -> re.Pattern[str]:
    """Searched for after a "\n" (a literal first: the engine skips from one to the next, 4×
    faster than trying `^` at every position); the text gets a "\n" in front for its first
    line."""
    return re.compile(rf"\n({_LEAD})(?={_GRAMMAR})", re.IGNORECASE)


_BREAK_CHARS = "\r\x0b\x0c\x1c\x1d\x1e\x85\u2028\u2029"
# Invisible characters a document can hide text or a line's true start with: bidi embeddings,
# overrides and isolates, zero-width characters, word joiners, Unicode tag characters.
_ZW = "\u200b-\u200d\u2060-\u2064\ufeff\u202a-\u202e\u2066-\u2069\U000e0000-\U000e007f"
_KEEPS = r"[\w\u00a9\u00ae\u2190-\u2bff\ufe0f\U0001f000-\U0001faff]"  # letters and emoji


@functools.cache
def _invisible() -> re.Pattern[str]:
    return re.compile(rf"{_KEEPS}[\u200c\u200d](?={_KEEPS})|[{_ZW}]")


@functools.cache
def _any_invisible() -> re.Pattern[str]:
    """One class: the fast first look (30× `_invisible`)."""
    return re.compile(f"[{_ZW}]")


def _may_hide(text: str) -> bool:
    """Whether `text` may hold an invisible character (`_ZW`). Every one lies past U+00FF: a
    text of Latin-1 alone holds none, and encoding it to Latin-1 is a copy (a hundredth of a
    search of 100 KB); else the search starts at its first character past Latin-1."""
    if text.isascii():
        return False
    try:
        text.encode("latin-1")
    except UnicodeEncodeError as exc:
        return _any_invisible().search(text, exc.start) is not None
    return False


@functools.cache
def _joined() -> re.Pattern[str]:
    return re.compile(rf"{_KEEPS}[\u200c\u200d]")


# Characters that betray a line break or control in text sift embeds in one of its lines.
_NOT_ONE_LINE = re.compile("[\x00-\x1f\x7f-\x9f\u2028\u2029]+")
# Any of these in a text and it may hold a line of the grammar (cheap `in` tests first).
_HINTS = ("[", "--", "Source:", "\u00b7", "grep=", ": ", "This document", "sift:", "\uff3b")


@functools.cache
def _look_alikes() -> re.Pattern[str]:
    """The dashes and dots of the grammar's look-alikes: looked for only in a text past ASCII."""
    return re.compile(f"[{_DASH}{_DOTS}]")


def neutralise(text: str) -> str:
    """`text` (a document's) with every line of sift's grammar escaped by a leading `\\`, its
    other line breaks made "\\n" and its invisible characters (`_invisible`) removed.
    Idempotent: an escaped line no longer matches."""
    if _may_hide(text):
        text = strip_invisible(text)[0]
    if any(c in text for c in _BREAK_CHARS):  # `in` is memchr: 20× a regex search
        text = _breaks().sub("\n", text)
    hinted = any(hint in text for hint in _HINTS)
    if not hinted and (text.isascii() or not _look_alikes().search(text)):
        return text
    return _document_line().sub("\n\\1\\\\", "\n" + text)[1:]


def strip_invisible(text: str) -> tuple[str, int]:
    """`text` without its invisible characters, and how many there were. A zero-width joiner or
    non-joiner between letters or emoji (Persian, Indic scripts, 👩‍💻) and a byte-order mark at
    the very start are the text's own and stay (and are not counted)."""
    if not _may_hide(text):
        return text, 0
    count = 0

    def drop(m: re.Match[str]) -> str:
        nonlocal count
        if _joined().fullmatch(m.group(0)):
            return m.group(0)
        count += 1
        return ""

    return _invisible().sub(drop, text.removeprefix("\ufeff")), count


def first_invisible(text: str) -> int:
    """Where the first character `strip_invisible` removes stands in `text`, or -1."""
    for m in _invisible().finditer(text):
        if not _joined().fullmatch(m.group(0)):
            return m.start()
    return -1


def is_sift_line(line: str) -> bool:
    """Whether `line` is of sift's grammar: in a fenced answer, a line sift wrote."""
    return _sift_line().match(line) is not None


def one_line(text: str) -> str:
    """`text` to embed in one of sift's lines: no line break, no control character."""
    return _NOT_ONE_LINE.sub(" ", text) if _NOT_ONE_LINE.search(text) else text
