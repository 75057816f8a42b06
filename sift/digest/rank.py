"""A document's retrieval index: its chunks, BM25 over them, and (once built) their embeddings.

Ranking is BM25 alone until every chunk has an embedding for the configured embedding model;
from then on it is hybrid: the BM25 order and the cosine order fused by reciprocal rank (RRF),
which needs no score calibration between the two.
"""

from __future__ import annotations

import math
from array import array
from collections.abc import Sequence
from dataclasses import dataclass, field

from sift.digest import bm25, chunks

RRF_K = 60  # the usual constant: damps the head of each list so neither ranker dominates


def normalize(vector: Sequence[float]) -> array[float]:
    """A unit-length float32 copy (cosine then is a plain dot product)."""
    norm = math.sqrt(math.fsum(x * x for x in vector)) or 1.0
    return array("f", (x / norm for x in vector))


def to_bytes(vector: Sequence[float]) -> bytes:
    return normalize(vector).tobytes()


def from_bytes(blob: bytes) -> array[float]:
    out = array("f")
    out.frombytes(blob)
    return out


def cosine_order(query: Sequence[float], vectors: Sequence[Sequence[float]]) -> list[int]:
    """Chunk numbers by cosine similarity to `query`, best first (vectors are unit length)."""
    q = normalize(query)
    if any(len(v) != len(q) for v in vectors):
        raise ValueError("embedding dimensions differ")
    sims = [sum(map(float.__mul__, q, v)) for v in vectors]
    return sorted(range(len(sims)), key=lambda i: (-sims[i], i))


def fuse(*orders: Sequence[int], k: int = RRF_K) -> list[int]:
    """Reciprocal rank fusion: an item's score is the sum of 1/(k + rank) over the lists."""
    score: dict[int, float] = {}
    for order in orders:
        for rank, item in enumerate(order, start=1):
            score[item] = score.get(item, 0.0) + 1.0 / (k + rank)
    return sorted(score, key=lambda i: (-score[i], i))


@dataclass
class Index:
    """Everything retrieval knows about one document (per content hash and caller class)."""

    chunks: list[chunks.Chunk]
    lexical: bm25.BM25
    vectors: dict[str, list[array[float]]] = field(default_factory=dict)  # by embed model

    @classmethod
    def build(cls, pages: Sequence[str]) -> Index:
        cs = chunks.split(pages)
        return cls(cs, bm25.BM25(bm25.tokenize(c.text) for c in cs))

    @property
    def tokens(self) -> int:
        return sum(c.tokens for c in self.chunks)

    def rank(
        self, question: str, query_vector: Sequence[float] | None = None, model: str = ""
    ) -> tuple[list[int], str]:
        """Chunk numbers, best first, and how they were ranked: `bm25` or `hybrid`.

        Every chunk appears: those BM25 cannot score follow in document order, so a question
        sharing no word with the text still gets the opening of the document.
        """
        lexical = self.lexical.rank(bm25.tokenize(question))
        seen = set(lexical)
        lexical += [i for i in range(len(self.chunks)) if i not in seen]
        vectors = self.vectors.get(model)
        if query_vector is None or not vectors or len(vectors) != len(self.chunks):
            return lexical, "bm25"
        return fuse(lexical, cosine_order(query_vector, vectors)), "hybrid"
