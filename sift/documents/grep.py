"""grep over a document's pages: RE2 patterns (linear time: no pattern can hang sift),
matching lines with their page numbers, blocks of adjacent hits, within the output cap."""

from __future__ import annotations

import re
from typing import TYPE_CHECKING

from sift.core.errors import BadRequest
from sift.core.fence import neutralise, one_line
from sift.documents.pages import UNITS, PagedText, Rendered, warning_note

if TYPE_CHECKING:
    import re2

GREP_MAX_BYTES = 200
GREP_MAX_HITS = 100
GREP_LINE_CAP = 300  # characters of a matching line shown (around the match)
GREP_CONTEXT_CAP = 160
_ESCAPES = r"\\(?:[pP]\{[^}]*\}|.)"  # \S, \W, \p{Lu}: not upper-case letters (`re` keeps it)


def compile_grep(pattern: str) -> re2._Regexp:
    """An RE2 regex (linear time) for `grep`: smart case, at most 200 bytes.

    Raises:
        BadRequest: empty, over 200 bytes, or not a valid RE2 pattern.
    """
    if not isinstance(pattern, str) or not pattern:
        raise BadRequest("invalid `grep`: expected a non-empty RE2 pattern")
    if len(pattern.encode()) > GREP_MAX_BYTES:
        raise BadRequest(f"grep pattern over {GREP_MAX_BYTES} bytes")
    import re2  # late: a page range reads no pattern

    opts = re2.Options()
    opts.log_errors = False
    opts.case_sensitive = any(ch.isupper() for ch in re.sub(_ESCAPES, "", pattern))
    try:
        return re2.compile(pattern, opts)
    except re2.error as exc:
        reason = exc.args[0] if exc.args else ""
        reason = reason.decode(errors="replace") if isinstance(reason, bytes) else str(reason)
        raise BadRequest(f"invalid grep pattern: {reason[:120]}") from None


def grep_pages(doc: PagedText, pattern: str, out_cap: int, rng: tuple[int, int] | None) -> Rendered:
    """Matching lines as `p. N: <line>`, one line of context each side, the first 100."""
    regex = compile_grep(pattern)
    # Whole pages are searched first, in multi-line mode (so ^ and $ still match at line
    # ends): every page with a matching line matches, and only those are split into lines.
    page_regex = compile_grep("(?m)" + pattern) if len(pattern.encode()) <= 196 else None
    a, b = rng or (1, doc.count)
    unit, abbrev = UNITS[doc.kind]
    hits = 0
    picked: list[tuple[int, int]] = []  # (page, line index)
    for n in range(a, b + 1):
        page = doc.pages[n - 1]
        if page_regex is not None and not page_regex.search(page):
            continue
        for i, line in enumerate(neutralise(page).split("\n")):  # fenced, as it is shown
            if regex.search(line):
                hits += 1
                if len(picked) < GREP_MAX_HITS:
                    picked.append((n, i))
    where = f" in {unit}s {a}–{b}" if rng else ""
    pattern = one_line(pattern)
    if not hits:
        return Rendered(content=f'no line matches grep="{pattern}"{where}', returned=(a, b))
    hit_pages = sorted({n for n, _ in picked})
    shown = ", ".join(map(str, hit_pages[:20])) + (" …" if len(hit_pages) > 20 else "")
    lines_word = "lines" if hits != 1 else "line"
    head = [f'{hits} matching {lines_word} for grep="{pattern}"{where}; {unit}s {shown}']
    flagged = warning_note(doc, range(a, b + 1))
    if flagged and any(n in doc.warnings for n in hit_pages):
        head.append(f"[warning: {flagged}]")
    blocks, used = _grep_blocks(doc, regex, picked, abbrev, out_cap - 400 - len(head[0]))
    notes = []
    if used < hits:
        notes.append(
            f'showing {used} of {hits} matching lines; narrow the pattern or add pages="a-b"'
        )
    content = "\n".join(head) + "\n\n" + "\n\n".join(blocks)
    # cut by the cap (not by the 100 hits): the rest goes on where the next block starts in
    # the hits uncut (`render.full_text`)
    nxt: dict[str, int | str] | None = {"offset": len(content) + 2} if used < len(picked) else None
    body = len(content)
    if notes:
        content += f"\n\n[{notes[0]}]"
    note = "; ".join([*notes, *([flagged] if flagged else [])]) or None
    return Rendered(
        content=content[:out_cap],
        truncated=used < hits,
        returned=(a, b),
        grep_hits=hits,
        note=note,
        next=nxt,
        body=body,
    )


def _grep_blocks(
    doc: PagedText, regex: re2._Regexp, picked: list[tuple[int, int]], abbrev: str, room: int
) -> tuple[list[str], int]:
    """Blocks of adjacent hits with their context, within `room` characters; and hits shown."""
    blocks: list[str] = []
    used = size = 0
    i = 0
    while i < len(picked):
        n, first = picked[i]
        j = i
        while j + 1 < len(picked) and _adjacent(picked[j], picked[j + 1]):
            j += 1
        lines = neutralise(doc.pages[n - 1]).split("\n")
        matches = {k for _, k in picked[i : j + 1]}
        prefix = f"{abbrev} {n}: "
        out = []
        for k in range(max(0, first - 1), min(len(lines), picked[j][1] + 2)):
            if k in matches:
                out.append(prefix + _clip(lines[k], regex))
            elif lines[k].strip():
                out.append(" " * len(prefix) + lines[k].strip()[:GREP_CONTEXT_CAP])
        block = "\n".join(out)
        if size + len(block) + 2 > room and blocks:
            break
        blocks.append(block[: max(0, room)])
        size += len(block) + 2
        used += j - i + 1
        i = j + 1
    return blocks, used


def _adjacent(hit: tuple[int, int], nxt: tuple[int, int]) -> bool:
    """Two hits whose context lines touch share one block."""
    return hit[0] == nxt[0] and nxt[1] <= hit[1] + 2


def _clip(line: str, regex: re2._Regexp) -> str:
    """A matching line, cut to a window around its first match when long."""
    line = line.strip()
    if len(line) <= GREP_LINE_CAP:
        return line
    m = regex.search(line)
    start = max(0, (m.start() if m else 0) - GREP_LINE_CAP // 3)
    piece = line[start : start + GREP_LINE_CAP]
    return ("… " if start else "") + piece + (" …" if start + GREP_LINE_CAP < len(line) else "")
