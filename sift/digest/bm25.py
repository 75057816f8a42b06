"""BM25 over a document's chunks: lexical ranking that is ready the moment the text is.

Own code rather than a library: the corpora are one document's chunks (tens to a few thousand),
the index is built once per content hash on a digest actor's thread, and a query touches only
the postings of its own terms. Words are lower-cased, folded to a crude stem (plurals and the
commonest suffixes) and stripped of stop words; runs of CJK characters become bigrams, since
those scripts put no spaces between words.
"""

from __future__ import annotations

import math
import re
from collections import Counter
from collections.abc import Iterable, Sequence

K1 = 1.2
B = 0.75

_WORD = re.compile(r"[^\W_]+", re.UNICODE)
_CJK = re.compile(r"[\u3040-\u30ff\u3400-\u4dbf\u4e00-\u9fff\uac00-\ud7af\uf900-\ufaff]+")

_STOP_WORDS = """
    a about above after again all also am an and any are as at be because been before being
    below between both but by can could did do does doing down during each few for from further
    had has have having he her here hers him his how i if in into is it its itself just me more
    most my no nor not now of off on once only or other our ours out over own same she should so
    some such than that the their theirs them then there these they this those through to too
    under until up very was we were what when where which while who whom why will with would
    you your yours"""
STOP = frozenset(_STOP_WORDS.split())


def stem(word: str) -> str:
    """A light, language-blind suffix fold: enough that "pages" finds "page"."""
    if len(word) <= 3 or not word.isascii():
        return word
    if word.endswith("ies") and len(word) > 4:
        return word[:-3] + "y"
    if word.endswith("es") and word[:-2].endswith(("s", "x", "z", "ch", "sh")):
        return word[:-2]
    if word.endswith("s") and not word.endswith(("ss", "us", "is")):
        return word[:-1]
    for suffix in ("ing", "ed"):
        if word.endswith(suffix) and len(word) - len(suffix) >= 3:
            return word[: -len(suffix)]
    return word


def tokenize(text: str) -> list[str]:
    """Index terms of `text`: stemmed words without stop words, CJK as character bigrams."""
    terms: list[str] = []
    for match in _WORD.finditer(text.lower()):
        word = match.group()
        if _CJK.search(word):
            for run in _CJK.split(word):
                if run and run not in STOP:
                    terms.append(stem(run))
            for run in _CJK.findall(word):
                terms.extend(run[i : i + 2] for i in range(max(1, len(run) - 1)))
        elif word not in STOP:
            terms.append(stem(word))
    return terms


class BM25:
    """An inverted index over documents (here: chunks) and Okapi BM25 scoring."""

    def __init__(self, docs: Iterable[Sequence[str]]) -> None:
        self.postings: dict[str, list[tuple[int, int]]] = {}
        self.lengths: list[int] = []
        for number, terms in enumerate(docs):
            self.lengths.append(len(terms))
            for term, tf in Counter(terms).items():
                self.postings.setdefault(term, []).append((number, tf))
        self.n = len(self.lengths)
        self.avgdl = (sum(self.lengths) / self.n) if self.n else 0.0

    def idf(self, term: str) -> float:
        df = len(self.postings.get(term, ()))
        return math.log(1 + (self.n - df + 0.5) / (df + 0.5))

    def scores(self, query: Sequence[str]) -> dict[int, float]:
        """BM25 score of every document that holds a query term (the rest score zero)."""
        out: dict[int, float] = {}
        avgdl = self.avgdl or 1.0
        for term in set(query):
            postings = self.postings.get(term)
            if not postings:
                continue
            idf = self.idf(term)
            for doc, tf in postings:
                norm = tf + K1 * (1 - B + B * self.lengths[doc] / avgdl)
                out[doc] = out.get(doc, 0.0) + idf * tf * (K1 + 1) / norm
        return out

    def rank(self, query: Sequence[str], limit: int | None = None) -> list[int]:
        """Documents with any query term, best first (ties in document order)."""
        scored = self.scores(query)
        order = sorted(scored, key=lambda d: (-scored[d], d))
        return order if limit is None else order[:limit]
