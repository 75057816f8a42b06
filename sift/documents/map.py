"""The map of a document over the output cap: title, size, outline, how to ask for `pages`
or `grep`, then the leading pages; the map sits within the first 10,000 characters (Hermes
shows an agent about the first 11k of a long answer)."""

from __future__ import annotations

from sift.core.fence import neutralise, one_line
from sift.core.types import OutlineItem
from sift.documents.pages import (
    OUTLINE_TITLE_CAP,
    TITLE_CAP,
    UNITS,
    PagedText,
    Rendered,
    fragment_url,
    warning_note,
    with_markers,
)

MAP_WINDOW = 10_000  # the map (outline + how to ask) must sit within this many characters
LEAD_MIN = 300  # less room than this after the map: no leading page (a few words help nobody)


def doc_map(
    doc: PagedText, out_cap: int, tokens: int, url: str = "", fenced: tuple[str, ...] = ()
) -> Rendered:
    """The map: what the document is (its size in `tokens`), its outline, how to ask for
    parts, the leading pages (`fenced`: the pages fenced already, else fenced here)."""
    fenced = fenced or tuple(map(neutralise, doc.pages))
    unit, abbrev = UNITS[doc.kind]
    title = " ".join(one_line(doc.title).split())[:TITLE_CAP] or "Untitled document"
    size = (
        f"{unit}s {doc.count}"
        if doc.size == doc.count
        else (f"{unit}s 1–{doc.count} of {doc.size} extracted")
    )
    head = [f"# {title}", f"{size} · ~{tokens:,} tokens"]
    flagged = warning_note(doc, range(1, doc.count + 1))
    if flagged:
        head.append(f"[warning: {flagged}]")
    window = min(MAP_WINDOW, out_cap)
    # the parts first: the whole directions when they leave the outline half the room, else
    # the outline takes what it needs and the directions what is left (their short form at
    # least)
    room = window - sum(len(h) + 1 for h in head) - 8
    full = len(_directions(unit, url, room))
    outline = outline_lines(doc.outline, room - full, abbrev) if full <= room // 2 else []
    outline = outline or outline_lines(doc.outline, room - len(_SHORT), abbrev)
    lines = [*head, "", *outline] if outline else head
    room = window - sum(len(x) + 1 for x in lines) - 1
    top = "\n".join([*lines, "", _directions(unit, url, room)])[:window]
    room = out_cap - len(top) - 4
    leading, returned = _leading(doc, fenced, min(out_cap // 4, room), unit)
    if not returned:  # no part fits in a quarter: the first alone, whole, in half the cap
        leading, returned = _leading(doc, fenced, min(out_cap // 2, room), unit, most=1)
    content = f"{top}\n\n{leading}" if leading else top
    after = returned[1] + 1 if returned else 1
    return Rendered(
        content=content[:out_cap],
        truncated=True,
        map=True,
        returned=returned,
        note=flagged,
        next={"pages": f"{after}-{doc.count}"} if after <= doc.count else None,
    )


_SHORT = 'Ask for part of it: pages="a-b" or grep="<regex>".'


def _directions(unit: str, url: str, room: int) -> str:
    """How to ask for part of the document: as many of its sentences as fit in `room`, else
    the short form."""
    said = [
        f'This document is longer than one answer. Ask for part of it: pages="a-b" (e.g. '
        f'pages="1-20", {unit} numbers as in the outline) or grep="<regex>" (RE2; '
        f"case-insensitive unless the pattern has upper case)."
    ]
    there = fragment_url(url, "pages", "1-20")
    if there:
        said.append(
            f"A client that can only send a URL asks for {there} or {url}#grep=<regex, "
            f"percent-encoded>, or {url}#q=<question> for an answer from the document."
        )
    while said and len(" ".join(said)) > room:
        said.pop()
    return " ".join(said) or _SHORT


def outline_lines(outline: tuple[OutlineItem, ...], budget: int, abbrev: str = "p.") -> list[str]:
    """Outline lines `- 2 Background (p. 14)` within `budget` characters.

    A long outline first loses its deeper levels, then its tail, and says so.
    """

    def lines(items: list[OutlineItem]) -> list[str]:
        return [
            f"{'  ' * (i.level - 1)}- {one_line(i.title[:OUTLINE_TITLE_CAP])} ({abbrev} {i.page})"
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


def _leading(
    doc: PagedText, fenced: tuple[str, ...], budget: int, unit: str, most: int | None = None
) -> tuple[str, tuple[int, int] | None]:
    """As many leading pages (`fenced`: the document's pages fenced) as fit whole in `budget`
    (at most `most`): a page cut here would be read twice, once here and once from its range's
    start."""
    if budget < LEAD_MIN or not doc.pages:
        return "", None

    def marked(a: int, b: int) -> str:
        return with_markers(
            fenced[a - 1 : b], range(a, b + 1), warnings=doc.warnings, unit=unit, fenced=True
        )

    last, size = 0, -2
    for n in range(1, min(doc.count, most or doc.count) + 1):
        size += 2 + len(marked(n, n))
        if size > budget:
            break
        last = n
    if not last:
        return "", None
    return marked(1, last), (1, last)
