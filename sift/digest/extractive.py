"""The extractive digest: with no model, the passages of the document that best answer the
question, each followed by the page it is on.

Candidates are the sentences of the best-ranked chunks; each is scored by BM25 term weights
(the document's own IDF, so rare words count most) with a mild length normalisation, plus a
small bonus for the chunk's rank so that ties go to the chunk retrieval preferred. The answer
never exceeds the output cap and never cuts a passage in the middle.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass

from sift.digest import bm25
from sift.digest.chunks import UNITS
from sift.digest.rank import Index

MAX_PASSAGES = 5
FROM_CHUNKS = 8
MAX_PASSAGE_CHARS = 600
NO_TEXT = "The document has no text to answer from."

_SENTENCE = re.compile(r"(?<=[.!?。！？])\s+|\n\s*\n|\n(?=\s*[-*#|>]|\s*\d+[.)]\s)")
_SPACE = re.compile(r"\s+")


@dataclass(frozen=True)
class Passage:
    page: int
    text: str
    score: float


def sentences(text: str) -> list[str]:
    """`text` cut into sentences (and list items, headings, paragraphs), whitespace folded."""
    out = []
    for piece in _SENTENCE.split(text):
        piece = _SPACE.sub(" ", piece).strip()
        if len(piece) >= 3:
            out.append(piece)
    return out


def _clip(text: str) -> str:
    if len(text) <= MAX_PASSAGE_CHARS:
        return text
    cut = text.rfind(" ", 0, MAX_PASSAGE_CHARS - 1)
    return text[: cut if cut > 0 else MAX_PASSAGE_CHARS - 1] + "…"


def passages(index: Index, question: str, order: Sequence[int]) -> list[Passage]:
    """The best passages for `question` from the chunks first in `order`, best first."""
    query = set(bm25.tokenize(question))
    weights = {t: index.lexical.idf(t) for t in query}
    found: list[Passage] = []
    seen: set[str] = set()
    for rank, number in enumerate(order[:FROM_CHUNKS]):
        bonus = 0.5 / (rank + 1)
        for page, text in index.chunks[number].parts:
            for sentence in sentences(text):
                if sentence in seen:
                    continue
                seen.add(sentence)
                terms = bm25.tokenize(sentence)
                hits = query.intersection(terms)
                if not hits:
                    continue
                score = sum(weights[t] for t in hits) / (1 + len(terms) / 40) + bonus
                found.append(Passage(page, _clip(sentence), score))
    found.sort(key=lambda p: -p.score)
    return found[:MAX_PASSAGES]


def answer(
    index: Index, question: str, order: Sequence[int], cap: int, unit: str | None = "page"
) -> str:
    """The extractive answer: passages, best first, each followed by `(p. N)` (or `(s. N)`
    for sections; nothing when `unit` is None), within `cap`."""
    chosen = passages(index, question, order)
    if not chosen:
        # Nothing matched a word of the question: the opening of the best chunk is the
        # most honest thing to hand back.
        first = index.chunks[order[0]] if order else None
        if first is None:
            return NO_TEXT
        page, text = first.parts[0]
        chosen = [Passage(page, _clip(_SPACE.sub(" ", text).strip()), 0.0)]
    out: list[str] = []
    size = 0
    for p in chosen:
        line = f"{p.text} ({UNITS[unit]} {p.page})" if unit else p.text
        if out and size + len(line) + 2 > cap:
            break
        out.append(line)
        size += len(line) + 2
    text = "\n\n".join(out)
    return text if len(text) <= cap else text[: max(0, cap - 1)] + "…"
