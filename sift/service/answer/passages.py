"""One budget spent across many sources (`POST /v1/read`): pure, so it is tested without a
server.

Each source's text is cut into passages (paragraphs, packed up to PASSAGE_TOKENS, never across
a part); with a question they are ranked together by BM25 (`sift.digest.bm25`) and taken best
first while they fit, a source's head first where no passage scores; without one, every source
gets a fair share of the budget (a short source's leftover shared among the rest) and its head
within it. Each passage keeps its citation (`url`, `part`, `start`, `end`, `content_hash`);
each source cut says where to read on (`offset` into the same text, as `/v1/fetch` takes it)
and which parts were not shown. The answer's text never exceeds the budget in o200k_base
tokens: passages are dropped from the end until it fits; where the sources' own lines would
take more than half of it (many sources, long URLs, a small budget) they are written short,
without the URL, and where even those overflow it, the lines that fit are kept and the rest
left to the answer's `sources`.
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from dataclasses import dataclass, field

from sift.digest import bm25
from sift.documents import tokens
from sift.documents.quotes import Part, part_at
from sift.documents.window import window

PASSAGE_TOKENS = 160  # a passage's size as the estimate counts it (about 640 bytes)
MIN_CUT_TOKENS = 24  # a passage cut to fit keeps at least this much, else it is left out
_PARAGRAPH = re.compile(r"\n[ \t]*\n")


@dataclass
class Source:
    """A source read: its text (what `offset` counts in) and its parts; `error` when it failed."""

    url: str
    text: str = ""
    content_hash: str = ""
    unit: str | None = None
    parts: list[Part] = field(default_factory=list)
    error: dict[str, object] | None = None  # sift's error shape
    # the options of `/v1/fetch` that read the same text (`pages`, a view): a continuation
    # names them beside its `offset`
    options: dict[str, object] = field(default_factory=dict)
    code: int | None = None  # and its HTTP status


@dataclass(frozen=True)
class Passage:
    source: int
    start: int
    end: int
    part: int | None
    score: float = 0.0


@dataclass
class Allotted:
    """What the budget bought: the answer's text, the passages in it, and each source's state."""

    content: str
    tokens: int
    passages: list[Passage]
    states: list[dict[str, object]]


def candidates(index: int, src: Source) -> Iterator[Passage]:
    """`src`'s passages in order: paragraphs packed up to PASSAGE_TOKENS within one part."""
    spans: list[tuple[int, int, int | None]] = [(p.start, p.end, p.number) for p in src.parts]
    spans = spans or [(0, len(src.text), None)]
    limit = PASSAGE_TOKENS * 4
    for lo, hi, number in spans:
        start = end = None
        for a, b in _paragraphs(src.text, lo, hi, limit):
            if start is not None and end is not None and b - start > limit:
                yield Passage(index, start, end, number)
                start = None
            start = a if start is None else start
            end = b
        if start is not None and end is not None:
            yield Passage(index, start, end, number)


def _paragraphs(text: str, lo: int, hi: int, limit: int) -> Iterator[tuple[int, int]]:
    """Spans of the non-blank paragraphs of text[lo:hi]; a long one sliced at spaces."""
    at = lo
    for gap in [*_PARAGRAPH.finditer(text, lo, hi), None]:
        stop = gap.start() if gap is not None else hi
        while at < stop and text[at].isspace():
            at += 1
        while stop - at > limit:
            cut = text.rfind(" ", at + limit // 2, at + limit)
            cut = cut if cut > at else at + limit
            yield at, cut
            at = cut
            while at < stop and text[at].isspace():
                at += 1
        if stop > at:
            yield at, stop
        at = gap.end() if gap is not None else hi


def allot(sources: list[Source], question: str | None, budget: int) -> Allotted:
    """Spend `budget` tokens across `sources`: the rule in the module's docstring."""
    pools = [list(candidates(i, s)) if s.error is None else [] for i, s in enumerate(sources)]
    unread = _states(sources, pools, [])
    short = tokens.count(_states_text(unread)) > budget // 2
    room = max(0, budget - tokens.count(_states_text(unread, short)) - 16)
    if question and question.strip():
        chosen = _by_relevance(sources, pools, question, room)
    else:
        chosen = _fairly(sources, pools, room)
    while True:
        states = _states(sources, pools, chosen)
        content = _content(sources, chosen, states, short)
        used = tokens.count(content)
        if used <= budget:
            return Allotted(content, used, chosen, states)
        if not chosen:
            content = _fitted(_states_text(states, short).split("\n"), budget)
            return Allotted(content, tokens.count(content), chosen, states)
        chosen = chosen[:-1]


def _by_relevance(
    sources: list[Source], pools: list[list[Passage]], question: str, room: int
) -> list[Passage]:
    """Every passage scored against the question together; the best taken while they fit,
    unscored ones after in head-first, source-by-source turns."""
    flat = [p for pool in pools for p in pool]
    index = bm25.BM25(bm25.tokenize(sources[p.source].text[p.start : p.end]) for p in flat)
    scores = index.scores(bm25.tokenize(question))
    turn = {id(p): k for pool in pools for k, p in enumerate(pool)}
    order = sorted(
        range(len(flat)),
        key=lambda i: (-scores.get(i, 0.0), turn[id(flat[i])], flat[i].source),
    )
    ranked = [_scored(flat[i], scores.get(i, 0.0)) for i in order]
    return _taken(sources, ranked, room)


def _scored(p: Passage, score: float) -> Passage:
    return Passage(p.source, p.start, p.end, p.part, round(score, 3))


def _fairly(sources: list[Source], pools: list[list[Passage]], room: int) -> list[Passage]:
    """Each source's head within an equal share; what a short source leaves goes to the rest."""
    need = [sum(_cost(sources, p) for p in pool) for pool in pools]
    waiting = sorted((i for i, pool in enumerate(pools) if pool), key=lambda i: need[i])
    chosen: list[Passage] = []
    left = room
    for done, i in enumerate(waiting):
        share = left // (len(waiting) - done)
        taken = _taken(sources, pools[i], share, head=True)
        left -= sum(_cost(sources, p) for p in taken)
        chosen.extend(taken)
    return chosen


def _taken(
    sources: list[Source], ranked: list[Passage], room: int, *, head: bool = False
) -> list[Passage]:
    """Passages in `ranked` order while they fit in `room` tokens; a head (`head`) stops at
    the first that does not, cut between blocks to fill what is left."""
    chosen: list[Passage] = []
    for p in ranked:
        cost = _cost(sources, p)
        if cost <= room:
            chosen.append(p)
            room -= cost
            continue
        overhead = _cost(sources, Passage(p.source, p.start, p.start, p.part))
        if head and room - overhead >= MIN_CUT_TOKENS:
            text = sources[p.source].text
            end = window(text, p.start, p.end - p.start, room - overhead)
            chosen.append(Passage(p.source, p.start, end, p.part, p.score))
        if head:
            break
    return chosen


def _cost(sources: list[Source], p: Passage) -> int:
    return tokens.count(_block(sources, p)) + 1


def _block(sources: list[Source], p: Passage) -> str:
    """A passage as the answer shows it: its citation line, then its text."""
    src = sources[p.source]
    where = f" · {src.unit} {p.part}" if src.unit and p.part is not None else ""
    cite = f"[sift: source {p.source + 1}{where} · chars {p.start}–{p.end} · {src.url}]"
    return f"{cite}\n{src.text[p.start : p.end]}"


def _states(
    sources: list[Source], pools: list[list[Passage]], chosen: list[Passage]
) -> list[dict[str, object]]:
    """Each source's status: `ok` (all of it shown), `cut` (with where to read on and the parts
    not shown), or its error."""
    states: list[dict[str, object]] = []
    for i, src in enumerate(sources):
        if src.error is not None:
            states.append({"url": src.url, "status": "error", "code": src.code, "error": src.error})
            continue
        shown = sorted((p.start, p.end) for p in chosen if p.source == i)
        rest = _read_on(pools[i], shown)
        state: dict[str, object] = {"url": src.url, "status": "ok" if rest is None else "cut"}
        state["content_hash"] = src.content_hash
        state["chars"] = len(src.text)
        state["passages"] = len(shown)
        if rest is not None:
            state["next"] = {"url": src.url, **src.options, "offset": rest}
            state["not_shown"] = _unshown(src, shown)
        states.append(state)
    return states


def _read_on(pool: list[Passage], shown: list[tuple[int, int]]) -> int | None:
    """Where the source's text stops being shown from its start: the first passage not shown
    whole (the end of one cut short); None when every passage was shown."""
    ends = dict(shown)
    for p in pool:
        end = ends.get(p.start)
        if end != p.end:
            return p.start if end is None else end
    return None


def _unshown(src: Source, shown: list[tuple[int, int]]) -> str:
    """The parts of which nothing was shown, as runs (`p. 2–7, 9`), or the characters left."""
    if not src.parts:
        covered = sum(e - s for s, e in shown)
        return f"{max(0, len(src.text) - covered):,} characters"
    seen = {part_at(src.parts, s, e) for s, e in shown}
    left = [p.number for p in src.parts if p.number not in seen]
    runs: list[str] = []
    for n in left:
        if runs and runs[-1].split("–")[-1] == str(n - 1):
            runs[-1] = f"{runs[-1].split('–')[0]}–{n}"
        else:
            runs.append(str(n))
    return f"{src.unit} {', '.join(runs)}" if runs else "parts of the parts shown"


def _content(
    sources: list[Source],
    chosen: list[Passage],
    states: list[dict[str, object]],
    short: bool = False,
) -> str:
    blocks = [_block(sources, p) for p in chosen]
    return "\n\n".join([*blocks, _states_text(states, short)])


def _states_text(states: list[dict[str, object]], short: bool = False) -> str:
    """One line a source: its status, what was not shown and where to read on, or its error;
    `short`: without its URL and what was not shown, the error cut to 80 characters."""
    lines = []
    for i, state in enumerate(states):
        url = "" if short else f" · {state['url']}"
        head = f"[sift: source {i + 1}{url} · {state['status']}"
        if state["status"] == "error":
            err = state["error"]
            assert isinstance(err, dict)
            said = str(err.get("error"))[: 80 if short else 200]
            lines.append(f"{head} · {state['code']} {said}]")
        elif state["status"] == "cut":
            nxt = state["next"]
            assert isinstance(nxt, dict)
            rest = "" if short else f"not shown: {state['not_shown']} · "
            pages = f" in pages {nxt['pages']}" if nxt.get("pages") else ""  # where it counts
            lines.append(f"{head} · {rest}read on at offset {nxt['offset']}{pages}]")
        else:
            lines.append(f"{head}]")
    return "\n".join(lines)


def _fitted(lines: list[str], budget: int) -> str:
    """The sources' lines that fit in `budget` tokens, and one saying the rest are not listed."""
    for kept in range(len(lines), -1, -1):
        rest = (
            []
            if kept == len(lines)
            else [f"[sift: sources {kept + 1}–{len(lines)}: see `sources`]"]
        )
        text = "\n".join([*lines[:kept], *rest])
        if tokens.count(text) <= budget:
            return text
    return ""
