"""Long documents as an agent reads them: page markers, the map, page ranges and grep.

A PDF has pages; a long HTML page is split into sections at its headings (`split_sections`)
and gets the same treatment. Text is assembled with `--- page N ---` markers so agents and
digests can cite pages. A document over the output cap answers with its map: title, size,
outline, how to ask for `pages` or `grep`, then the leading pages; the map sits within the
first 10,000 characters (Hermes shows an agent about the first 11k of a long answer).
"""

from __future__ import annotations

import re
from typing import Literal

import msgspec
import re2

from sift.errors import BadRequest
from sift.pdf.wire import OutlineItem

FRAGMENT_URL_MAX = 500  # a longer URL is not repeated in maps and notes
MAP_WINDOW = 10_000  # the map (outline + how to ask) must sit within this many characters
MAX_ANSWER_PAGES = 100
OUTLINE_TITLE_CAP = 120
TITLE_CAP = 200
SECTION_MIN = 1_500  # long HTML: merge sections shorter than this with the next
SECTION_MAX = 8_000  # …and split sections longer than this at paragraphs
GREP_MAX_BYTES = 200
GREP_MAX_HITS = 100
GREP_LINE_CAP = 300  # characters of a matching line shown (around the match)
GREP_CONTEXT_CAP = 160

_UNITS = {"pdf": ("page", "p."), "html": ("section", "s.")}
_ESCAPES = re.compile(r"\\(?:[pP]\{[^}]*\}|.)")  # \S, \W, \p{Lu}: not upper-case letters
_HEADING = re.compile(r"#{1,6}[ \t]+(.*?)[ \t#]*")
_FENCE = re.compile(r"[ ]{0,3}(```|~~~)")
_PAGES_SPEC = re.compile(r"\s*(\d{1,9})\s*(?:([-–—])\s*(\d{1,9})?)?\s*")


class Document(msgspec.Struct, frozen=True, kw_only=True):
    """Pages of text (sections for HTML); `total` pages exist when extraction stopped early.

    `warnings` maps a page number to why its text is unreliable (or failed).
    """

    pages: tuple[str, ...]
    kind: Literal["pdf", "html"] = "pdf"
    title: str = ""
    outline: tuple[OutlineItem, ...] = ()
    warnings: dict[int, str] = {}
    total: int = 0

    @property
    def count(self) -> int:
        return len(self.pages)

    @property
    def size(self) -> int:
        return self.total or len(self.pages)

    @property
    def chars(self) -> int:
        """Characters of text in all (what rendering and grep work through)."""
        return sum(map(len, self.pages))


class Rendered(msgspec.Struct, frozen=True, kw_only=True):
    """What `render` answers: the content and the facts the envelope reports about it."""

    content: str
    truncated: bool = False
    map: bool = False
    returned: tuple[int, int] | None = None
    grep_hits: int = 0
    note: str | None = None


def with_markers(
    pages: list[str] | tuple[str, ...],
    numbers: list[int] | range,
    *,
    warnings: dict[int, str] | None = None,
    unit: str = "page",
) -> str:
    """`<page 1 text>\\n\\n--- page 2 ---\\n\\n<page 2 text>`; every page but page 1 is marked.

    A page with a warning carries it right under its marker, where the reader meets it.
    """
    parts: list[str] = []
    for text, n in zip(pages, numbers, strict=True):
        block = text.strip("\n")
        if warnings and n in warnings:
            block = f"[warning: {warnings[n]}]\n\n{block}"
        parts.append(block if n == 1 and not parts else f"--- {unit} {n} ---\n\n{block}")
    return "\n\n".join(parts)


def page_spec(spec: str) -> tuple[int, int | None]:
    """The syntax of a `pages` value: `a-b`, `a` or `a-` (None = to the end).

    Raises:
        BadRequest: not one of those forms.
    """
    m = _PAGES_SPEC.fullmatch(spec) if isinstance(spec, str) else None
    if not m:
        raise BadRequest(f'invalid `pages`: expected "a-b", "a" or "a-", got {str(spec)[:40]!r}')
    a = int(m.group(1))
    if m.group(2) is None:
        return a, a
    return a, int(m.group(3)) if m.group(3) else None


def parse_pages(spec: str, n: int) -> tuple[int, int]:
    """The 1-based inclusive range `spec` names in a document of `n` pages.

    An end past the last page is clamped to it; anything else outside 1–n is an error.

    Raises:
        BadRequest: malformed (naming the field) or `pages out of range (1–n)`.
    """
    a, b = page_spec(spec)
    if b is None:
        b = n
    if a < 1 or b < a or a > n:
        raise BadRequest(f"pages out of range (1–{n})")
    return a, min(b, n)


def render(
    doc: Document,
    *,
    out_cap: int,
    pages: str | None = None,
    grep: str | None = None,
    url: str = "",
) -> Rendered:
    """The answer for `doc`: whole text, map, a page range, or grep hits; ≤ `out_cap` chars.

    `url` is the document's URL: the map and the notes name the fragment URLs to ask for next
    (`<url>#pages=41-60`), for clients that can only send a URL (Firecrawl, MCP, `/r/`).

    Raises:
        BadRequest: a bad `pages` range or grep pattern.
    """
    rng = parse_pages(pages, doc.count) if pages is not None else None
    if grep is not None:
        return _grep(doc, grep, out_cap, rng)
    if rng is not None:
        return _range(doc, rng, out_cap, url)
    unit, _ = _UNITS[doc.kind]
    whole = with_markers(doc.pages, range(1, doc.count + 1), warnings=doc.warnings, unit=unit)
    if doc.kind == "html" and len(whole) <= out_cap:  # a page that fits reads as it was
        return Rendered(content="\n\n".join(doc.pages), returned=(1, doc.count))
    note = _extracted_note(doc)
    if len(whole) + len(note) <= out_cap:
        returned = (1, doc.count) if doc.count else None
        return Rendered(content=whole + note, returned=returned, note=note.strip() or None)
    return _map(doc, out_cap, len(whole), url)


def _extracted_note(doc: Document) -> str:
    if doc.size > doc.count:
        return f"\n\n[{_UNITS[doc.kind][0]}s 1–{doc.count} of {doc.size} extracted]"
    return ""


def warning_note(doc: Document, numbers: range) -> str | None:
    """One line naming the flagged pages among `numbers`, or None."""
    flagged = [n for n in numbers if n in doc.warnings]
    if not flagged:
        return None
    shown = ", ".join(str(n) for n in flagged[:20]) + (" …" if len(flagged) > 20 else "")
    reasons = sorted({doc.warnings[n] for n in flagged})
    return f"{_UNITS[doc.kind][0]}s {shown}: {'; '.join(reasons)}"


def fragment_url(url: str, name: str, value: str) -> str | None:
    """`url#name=value` for an http(s) URL short enough to repeat in an answer, else None."""
    if len(url) > FRAGMENT_URL_MAX or not url.startswith(("http://", "https://")):
        return None
    return f"{url}#{name}={value}"


def _range(doc: Document, rng: tuple[int, int], out_cap: int, url: str = "") -> Rendered:
    """Pages a–b, at most 100 of them and what fits in the cap, with a note when cut."""
    a, b = rng
    unit, _ = _UNITS[doc.kind]
    room = out_cap - 160  # for the note
    last = a - 1
    size = 0
    for n in range(a, min(b, a + MAX_ANSWER_PAGES - 1) + 1):
        piece = len(with_markers([doc.pages[n - 1]], [n], warnings=doc.warnings, unit=unit)) + 2
        if size + piece > room and last >= a:
            break
        last, size = n, size + piece
    content = with_markers(doc.pages[a - 1 : last], range(a, last + 1), warnings=doc.warnings,
                           unit=unit)  # fmt: skip
    cut_page = len(content) > room
    if cut_page:
        content = content[: max(0, room)].rstrip() + " …"
    notes = []
    if last < b or cut_page:
        there = fragment_url(url, "pages", f"{last + 1}-{b}")
        more = f'; ask pages="{last + 1}-{b}" for more' if last < b else ""
        more += f" (or {there})" if more and there else ""
        cut = f" ({unit} {last} cut at the output cap)" if cut_page else ""
        notes.append(f"returned {unit}s {a}–{last} of {a}–{b}{cut}{more}")
    flagged = warning_note(doc, range(a, last + 1))
    if flagged:
        notes.append(flagged)
    note = "; ".join(notes) or None
    if notes and (last < b or cut_page):
        content += f"\n\n[{notes[0]}]"
    return Rendered(content=content[:out_cap], truncated=last < b or cut_page, returned=(a, last),
                    note=note)  # fmt: skip


def _map(doc: Document, out_cap: int, whole_chars: int, url: str = "") -> Rendered:
    """The map: what the document is, its outline, how to ask for parts, the leading pages."""
    unit, abbrev = _UNITS[doc.kind]
    tokens = whole_chars // 4
    title = " ".join(doc.title.split())[:TITLE_CAP] or "Untitled document"
    size = f"{unit}s {doc.count}" if doc.size == doc.count else (
        f"{unit}s 1–{doc.count} of {doc.size} extracted")  # fmt: skip
    head = [f"# {title}", f"{size} · ~{tokens:,} tokens"]
    flagged = warning_note(doc, range(1, doc.count + 1))
    if flagged:
        head.append(f"[warning: {flagged}]")
    howto = (
        f'This document is longer than one answer. Ask for part of it: pages="a-b" (e.g. '
        f'pages="1-20", {unit} numbers as in the outline) or grep="<regex>" (RE2; '
        f"case-insensitive unless the pattern has upper case)."
    )
    there = fragment_url(url, "pages", "1-20")
    if there:
        howto += (
            f" A client that can only send a URL asks for {there} or {url}#grep=<regex, "
            f"percent-encoded>, or {url}#q=<question> for an answer from the document."
        )
    window = min(MAP_WINDOW, out_cap)
    budget = window - sum(len(h) + 1 for h in head) - len(howto) - 8
    outline = outline_lines(doc.outline, budget, abbrev)
    top = "\n".join([*head, "", *outline, "", howto]) if outline else "\n".join([*head, "", howto])
    top = top[:window]
    lead_budget = min(out_cap // 4, out_cap - len(top) - 4)
    leading, returned = _leading(doc, lead_budget, unit)
    content = f"{top}\n\n{leading}" if leading else top
    return Rendered(content=content[:out_cap], truncated=True, map=True, returned=returned,
                    note=flagged)  # fmt: skip


def outline_lines(outline: tuple[OutlineItem, ...], budget: int, abbrev: str = "p.") -> list[str]:
    """Outline lines `- 2 Background (p. 14)` within `budget` characters.

    A long outline first loses its deeper levels, then its tail, and says so.
    """

    def lines(items: list[OutlineItem]) -> list[str]:
        return [
            f"{'  ' * (i.level - 1)}- {i.title[:OUTLINE_TITLE_CAP]} ({abbrev} {i.page})"
            for i in items
        ]

    def size(ls: list[str]) -> int:
        return sum(len(x) + 1 for x in ls)

    items = [i for i in outline if i.level <= 6]
    deepest = max((i.level for i in items), default=0)
    for depth in range(deepest, 0, -1):
        chosen = [i for i in items if i.level <= depth]
        out = lines(chosen)
        hidden = len(items) - len(chosen)
        note = [f"- … {hidden} entries below level {depth} omitted (use grep)"] if hidden else []
        if size(out) + size(note) <= budget:
            return out + note
    out = lines([i for i in items if i.level == 1])
    kept: list[str] = []
    for line in out:
        if size(kept) + len(line) + 1 > budget - 70:
            break
        kept.append(line)
    if len(kept) < len(out):
        deeper = "; deeper levels omitted" if deepest > 1 else ""
        kept.append(f"- … {len(out) - len(kept)} more top-level entries{deeper} (use grep)")
    return kept if size(kept) <= budget else []


def outline_entries(
    outline: tuple[OutlineItem, ...], budget: int
) -> tuple[tuple[OutlineItem, ...], int]:
    """The outline entries an envelope carries within `budget` characters of JSON, and how
    many were left out: the deepest levels go first, then the tail of the top level."""
    if sum(_entry_size(i) for i in outline) <= budget:
        return outline, 0
    for depth in range(max(i.level for i in outline) - 1, 0, -1):
        chosen = tuple(i for i in outline if i.level <= depth)
        if sum(_entry_size(i) for i in chosen) <= budget:
            return chosen, len(outline) - len(chosen)
    kept: list[OutlineItem] = []
    used = 0
    for item in outline:
        if item.level == 1:
            used += _entry_size(item)
            if used > budget:
                break
            kept.append(item)
    return tuple(kept), len(outline) - len(kept)


def _entry_size(item: OutlineItem) -> int:
    """About the JSON length of `{"title": …, "page": n, "level": n}, ` (titles are capped)."""
    return len(item.title) + 40


def _leading(doc: Document, budget: int, unit: str) -> tuple[str, tuple[int, int] | None]:
    """As many leading pages as fit in `budget`; a cut first page when none fits whole."""
    if budget <= 0 or not doc.pages:
        return "", None
    last, size = 0, -2
    for n in range(1, doc.count + 1):
        size += 2 + len(with_markers([doc.pages[n - 1]], [n], warnings=doc.warnings, unit=unit))
        if size > budget:
            break
        last = n
    if last:
        text = with_markers(doc.pages[:last], range(1, last + 1), warnings=doc.warnings, unit=unit)
        return text, (1, last)
    first = with_markers(doc.pages[:1], [1], warnings=doc.warnings, unit=unit)
    tail = f' … [{unit} 1 continues: pages="1"]'
    return first[: max(0, budget - len(tail))].rstrip() + tail, (1, 1)


def compile_grep(pattern: str) -> re2._Regexp:
    """An RE2 regex (linear time) for `grep`: smart case, at most 200 bytes.

    Raises:
        BadRequest: empty, over 200 bytes, or not a valid RE2 pattern.
    """
    if not isinstance(pattern, str) or not pattern:
        raise BadRequest("invalid `grep`: expected a non-empty RE2 pattern")
    if len(pattern.encode()) > GREP_MAX_BYTES:
        raise BadRequest(f"grep pattern over {GREP_MAX_BYTES} bytes")
    opts = re2.Options()
    opts.log_errors = False
    opts.case_sensitive = any(ch.isupper() for ch in _ESCAPES.sub("", pattern))
    try:
        return re2.compile(pattern, opts)
    except re2.error as exc:
        reason = exc.args[0] if exc.args else ""
        reason = reason.decode(errors="replace") if isinstance(reason, bytes) else str(reason)
        raise BadRequest(f"invalid grep pattern: {reason[:120]}") from None


def _grep(doc: Document, pattern: str, out_cap: int, rng: tuple[int, int] | None) -> Rendered:
    """Matching lines as `p. N: <line>`, one line of context each side, the first 100."""
    regex = compile_grep(pattern)
    # Whole pages are searched first, in multi-line mode (so ^ and $ still match at line
    # ends): every page with a matching line matches, and only those are split into lines.
    page_regex = compile_grep("(?m)" + pattern) if len(pattern.encode()) <= 196 else None
    a, b = rng or (1, doc.count)
    unit, abbrev = _UNITS[doc.kind]
    hits = 0
    picked: list[tuple[int, int]] = []  # (page, line index)
    for n in range(a, b + 1):
        page = doc.pages[n - 1]
        if page_regex is not None and not page_regex.search(page):
            continue
        for i, line in enumerate(page.split("\n")):
            if regex.search(line):
                hits += 1
                if len(picked) < GREP_MAX_HITS:
                    picked.append((n, i))
    where = f" in {unit}s {a}–{b}" if rng else ""
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
        notes.append(f"showing {used} of {hits} matching lines; narrow the pattern or add "
                     f'pages="a-b"')  # fmt: skip
    content = "\n".join(head) + "\n\n" + "\n\n".join(blocks)
    if notes:
        content += f"\n\n[{notes[0]}]"
    note = "; ".join([*notes, *([flagged] if flagged else [])]) or None
    return Rendered(content=content[:out_cap], truncated=used < hits, returned=(a, b),
                    grep_hits=hits, note=note)  # fmt: skip


def _grep_blocks(
    doc: Document, regex: re2._Regexp, picked: list[tuple[int, int]], abbrev: str, room: int
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
        lines = doc.pages[n - 1].split("\n")
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


def html_document(markdown: str, *, title: str = "") -> Document:
    """A long HTML page's markdown as a Document of sections, its headings as the outline."""
    sections, headings = _sections(markdown)
    top = min((level for _, level, _ in headings), default=1)
    outline = tuple(
        OutlineItem(title=" ".join(t.split())[:OUTLINE_TITLE_CAP], page=n, level=level - top + 1)
        for t, level, n in headings
        if t.strip()
    )
    return Document(kind="html", title=title, pages=tuple(sections), outline=outline)


def split_sections(markdown: str) -> list[str]:
    """Sections of reasonable size, split at headings (never inside a code fence)."""
    return _sections(markdown)[0]


def _sections(markdown: str) -> tuple[list[str], list[tuple[str, int, int]]]:
    """The sections, and each heading as (title, level, section number)."""
    chunks: list[tuple[list[tuple[str, int]], list[str]]] = [([], [])]
    fence = None
    for line in markdown.split("\n"):
        m = _FENCE.match(line)
        if m:
            fence = None if fence == m.group(1) else (fence or m.group(1))
        h = _HEADING.fullmatch(line) if fence is None else None
        if h and (chunks[-1][1] or chunks[-1][0]):
            chunks.append(([], []))
        if h:
            chunks[-1][0].append((h.group(1), len(line) - len(line.lstrip("#"))))
        chunks[-1][1].append(line)
    sections: list[str] = []
    headings: list[tuple[str, int, int]] = []
    current: list[str] = []
    for heads, lines in chunks:
        for i, piece in enumerate(_pieces("\n".join(lines).strip("\n"))):
            joined = "\n\n".join(current)
            if current and (len(joined) >= SECTION_MIN or len(joined) + len(piece) > SECTION_MAX):
                sections.append(joined)
                current = []
            current.append(piece)
            if i == 0:
                headings += [(t, level, len(sections) + 1) for t, level in heads]
    if current:
        sections.append("\n\n".join(current))
    return [s for s in sections if s.strip()] or [""], headings


def _pieces(text: str) -> list[str]:
    """`text` in pieces of at most SECTION_MAX characters, cut at paragraphs, else lines."""
    if len(text) <= SECTION_MAX:
        return [text] if text.strip() else []
    pieces: list[str] = []
    current = ""
    for para in text.split("\n\n"):
        while len(para) > SECTION_MAX:  # one huge paragraph: cut at a line, else anywhere
            cut = para.rfind("\n", 0, SECTION_MAX)
            cut = cut if cut > SECTION_MAX // 2 else SECTION_MAX
            pieces += [current, para[:cut]]
            current, para = "", para[cut:].lstrip("\n")
        if current and len(current) + 2 + len(para) > SECTION_MAX:
            pieces.append(current)
            current = para
        else:
            current = f"{current}\n\n{para}" if current else para
    pieces.append(current)
    return [p for p in pieces if p.strip()]
