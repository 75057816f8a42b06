"""DigestActor: the CPU side of a digest — chunking, BM25, cosine, passage picking — off the loop.

It keeps the indexes of the documents asked about most recently (by content hash and caller
class), so a document is chunked and indexed once however many questions follow. Messages
carry the pages, so an index that was evicted is simply rebuilt. The model call itself is made
on the event loop (`sift.service.answer.digest`), never here.
"""

from __future__ import annotations

from collections import OrderedDict
from collections.abc import Sequence
from dataclasses import dataclass

from sift.actors.base import SiftActor
from sift.core.answer import Answer
from sift.digest import extractive, prompt
from sift.digest.chunks import Chunk
from sift.digest.rank import Index, from_bytes

Key = tuple[str, str]  # (content hash, caller class)

INDEXES_KEPT = 4


@dataclass(frozen=True)
class Prepare:
    """Build (or recall) the index of a document; answered with `IndexInfo`."""

    key: Key
    pages: tuple[str, ...]
    reply: Answer


@dataclass(frozen=True)
class IndexInfo:
    chunks: tuple[Chunk, ...]
    tokens: int
    models: frozenset[str]  # embedding models whose vectors the index already holds


@dataclass(frozen=True)
class Rank:
    """Rank the chunks for a question and make both answers' material; answered with `Ranked`.

    `vectors` (float32 blobs by chunk) are attached to the index for `model` first, when given.
    With `full`, the excerpts are the whole document; else the best chunks within `budget`.
    """

    key: Key
    pages: tuple[str, ...]
    question: str
    budget: int
    full: bool
    out_cap: int
    unit: str | None  # "page" | "section" | None: how parts are marked and cited
    reply: Answer
    model: str = ""
    query_vector: tuple[float, ...] | None = None
    vectors: tuple[bytes, ...] | None = None
    keep: bool = True  # False: the index is dropped once ranked (a private document)


@dataclass(frozen=True)
class Ranked:
    retrieval: str  # full | bm25 | hybrid
    excerpts: str  # the document text for the model, with page markers
    used: int  # chunks in `excerpts`
    extractive: str  # the answer without a model, within the output cap


class Indexes:
    """A small LRU of document indexes: plain, so it can be tested without threads."""

    def __init__(self, keep: int = INDEXES_KEPT) -> None:
        self.keep = keep
        self._items: OrderedDict[Key, Index] = OrderedDict()

    def get(self, key: Key, pages: Sequence[str]) -> Index:
        index = self._items.get(key)
        if index is None:
            index = Index.build(pages)
            self._items[key] = index
            while len(self._items) > self.keep:
                self._items.popitem(last=False)
        self._items.move_to_end(key)
        return index

    def __contains__(self, key: Key) -> bool:
        return key in self._items

    def drop(self, key: Key) -> None:
        self._items.pop(key, None)


def rank(index: Index, msg: Rank) -> Ranked:
    """The work of a `Rank` message, on a plain index."""
    if msg.vectors is not None and msg.model and len(msg.vectors) == len(index.chunks):
        index.vectors[msg.model] = [from_bytes(v) for v in msg.vectors]
    order, retrieval = index.rank(msg.question, msg.query_vector, msg.model)
    if msg.full:
        selected = list(index.chunks)
        retrieval = "full"
    else:
        selected = prompt.select(index.chunks, order, msg.budget)
    excerpts = prompt.render(selected, msg.unit)
    answer = extractive.answer(index, msg.question, order, msg.out_cap, msg.unit)
    return Ranked(retrieval, excerpts, len(selected), answer)


class DigestActor(SiftActor):
    def __init__(self, keep: int = INDEXES_KEPT) -> None:
        super().__init__()
        self.indexes = Indexes(keep)

    def handle_prepare(self, msg: Prepare) -> IndexInfo:
        index = self.indexes.get(msg.key, msg.pages)
        return IndexInfo(tuple(index.chunks), index.tokens, frozenset(index.vectors))

    def handle_rank(self, msg: Rank) -> Ranked:
        ranked = rank(self.indexes.get(msg.key, msg.pages), msg)
        if not msg.keep:
            self.indexes.drop(msg.key)
        return ranked
