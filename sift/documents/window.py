"""One window of a text within a budget (characters, and tokens when the caller names them),
cut where a reader expects a break, and where the next window starts: the continuation
(`offset`) of every answer cut by a cap.

A cut falls after a blank line outside code fences (between blocks) when the window has one in
its second half; else between lines outside a fence there (a table splits between rows, never
inside one); else at a space there outside links and table rows (a long paragraph is cut inside,
not before it); else between lines outside a fence anywhere; else between lines of a fence
longer than the whole window; else at a space outside any link; a hard cut only for a single
word longer than the window. Windows laid end to end give the text exactly once: no gap, no
overlap.
"""

from __future__ import annotations

import bisect
import functools
import re
from collections.abc import Iterable

from sift.core.errors import BadRequest
from sift.documents import tokens

_FENCE = r" {0,3}(`{3,}|~{3,})"  # at a line's start
# A link's text holds no `[`: each match scans to the next bracket at most (linear time)
_LINK = r'!?\[[^\[\]\n]*\]\([^()\s]*(?:\s+"[^"\n]*")?\)'
_BLANK = r"\n[ \t]*\n(?:[ \t]*\n)*"


@functools.cache  # compiled at the first cut: an answer within its budget is never cut
def _regex(pattern: str) -> re.Pattern[str]:
    return re.compile(pattern)


def window(text: str, start: int, chars: int, max_tokens: int | None = None) -> int:
    """The end of the window of `text` from `start`: at most `chars` characters and
    `max_tokens` tokens, cut by the rule above; `len(text)` when the rest fits.

    Raises:
        BadRequest: `start` past the end of the text.
    """
    if start > len(text):
        raise BadRequest(f"`offset` {start} is past the end of the text ({len(text):,} characters)")
    hi = min(len(text), start + max(1, chars))
    if max_tokens is not None and tokens.within(text[start:hi], max_tokens):
        max_tokens = None  # the window is bytes enough under the budget: no token cut
    if max_tokens is not None:
        hi = start + max(1, tokens.prefix_chars(text[start:hi], max_tokens))
    if hi >= len(text):
        return len(text)
    end = _boundary(text, start, hi)
    while max_tokens is not None and end > start + 1 and tokens.count(text[start:end]) > max_tokens:
        end = _boundary(text, start, end - 1)  # a BPE prefix can count one token more
    return end


def _boundary(text: str, start: int, hi: int) -> int:
    """The best cut in (start, hi]: the rule in the module's docstring. A link never holds a
    line break here, so only a cut at a space can fall inside one."""
    fences = _spans(_fence_spans(text, hi))
    outside_links = _LinkCheck(text)
    # a break between blocks that would keep less than half the window (a table or a part
    # larger than it) gives way to a break between lines
    half = start + (hi - start) // 2
    blanks = [m.end() for m in _regex(_BLANK).finditer(text, half, hi)]
    # so does a break between lines, to a space in the second half of a line of prose (a
    # paragraph after its heading is cut inside, not before it)
    prose = (p for p in _after(text, " ", half, hi) if not _in_row(text, p))
    for candidates, in_fence, at_space in (
        ((b for b in reversed(blanks) if not _after_heading(text, b)), False, False),
        (reversed(blanks), False, False),
        (_after(text, "\n", half, hi), False, False),
        (prose, False, True),
        (_after(text, "\n", start, hi), False, False),
        (_after(text, "\n", start, hi), True, False),
        (_after(text, " ", start, hi), False, True),
        (_after(text, " ", start, hi), True, True),
    ):
        for pos in candidates:
            if (in_fence or not _inside(pos, *fences)) and (not at_space or outside_links(pos)):
                return pos
    return hi


class _LinkCheck:
    """Whether a cut inside a line falls outside every link of that line (each line's links
    found once)."""

    def __init__(self, text: str) -> None:
        self.text = text
        self.lines: dict[int, tuple[list[int], list[int]]] = {}

    def __call__(self, pos: int) -> bool:
        first = self.text.rfind("\n", 0, pos) + 1
        if first not in self.lines:
            last = self.text.find("\n", pos)
            found = _regex(_LINK).finditer(self.text, first, len(self.text) if last < 0 else last)
            self.lines[first] = _spans(m.span() for m in found)
        return not _inside(pos, *self.lines[first])


def _in_row(text: str, pos: int) -> bool:
    """Whether `pos` falls on a table row (a line that starts with `|`)."""
    return text.startswith("|", text.rfind("\n", 0, pos) + 1)


def _after_heading(text: str, pos: int) -> bool:
    """Whether the block before a cut at `pos` is a heading (it belongs with what follows)."""
    end = pos
    while end > 0 and text[end - 1] in "\n\t ":
        end -= 1
    return text.startswith("#", text.rfind("\n", 0, end) + 1)


def _after(text: str, sep: str, start: int, hi: int) -> Iterable[int]:
    """Positions just after each `sep` in text[start:hi], last first (never `start`)."""
    i = text.rfind(sep, start, hi)
    while i >= 0:
        yield i + 1
        i = text.rfind(sep, start, i)


def _fence_spans(text: str, hi: int) -> list[tuple[int, int]]:
    """(start, end) of each fenced code block that begins before `hi`; an unclosed one runs
    to the end of the text."""
    spans = []
    opened: tuple[int, str] | None = None
    for at, mark in _fence_lines(text):
        if opened is None:
            if at >= hi:
                break
            opened = (at, mark)
        elif mark[0] == opened[1][0] and len(mark) >= len(opened[1]):
            line_end = text.find("\n", at)
            spans.append((opened[0], len(text) if line_end < 0 else line_end + 1))
            opened = None
    if opened is not None:
        spans.append((opened[0], len(text)))
    return spans


def _fence_lines(text: str) -> list[tuple[int, str]]:
    """(line start, mark) of each line that opens or closes a fence, in order: found with
    `str.find` (a regex tried at every line start is several times slower)."""
    found = {}
    for tick in ("```", "~~~"):
        i = text.find(tick)
        while i >= 0:
            line = text.rfind("\n", 0, i) + 1
            m = _regex(_FENCE).match(text, line)
            if m is not None:
                found[line] = m.group(1)
            i = text.find("\n", i)
            i = text.find(tick, i) if i >= 0 else -1
    return sorted(found.items())


def _spans(pairs: Iterable[tuple[int, int]]) -> tuple[list[int], list[int]]:
    starts, ends = [], []
    for a, b in pairs:
        starts.append(a)
        ends.append(b)
    return starts, ends


def _inside(pos: int, starts: list[int], ends: list[int]) -> bool:
    """Whether a cut at `pos` falls strictly inside one of the spans (sorted, disjoint)."""
    i = bisect.bisect_right(starts, pos - 1) - 1
    return i >= 0 and starts[i] < pos < ends[i]
