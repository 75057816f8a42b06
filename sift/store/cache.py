"""The document cache as every backend keeps it: what a stored `Content` or `PdfDoc` is made
of and read back as, and which documents go when the cache is over its byte budget. Each
backend (`sqlite/`, `postgres/`) runs only its SQL.

Web pages and PDFs share one byte budget; eviction removes whole documents, least recently
used first, and never the one just stored.
"""

from __future__ import annotations

import zlib
from abc import ABC, abstractmethod
from collections.abc import Sequence
from contextlib import AbstractContextManager
from typing import Any

import msgspec

from sift.core.types import Content, PageFacts, PdfDoc, Stored

COLUMNS = (
    "url, caller_class, final_url, kind, content_type, title, text, body, hint, fallback, "
    "etag, last_modified, content_hash, fetched_at, size, coverage, page, served, "
    "hidden_removed, warning, facts"
)
# The same without the raw body, which only raw mode, jq and Firecrawl's html need.
LIGHT = COLUMNS.replace(" body,", " NULL,")
PDF_COLUMNS = (
    "url, caller_class, final_url, content_type, content_hash, etag, last_modified, meta_json, "
    "fetched_at, size"
)

Row = Sequence[Any]


def content_row(r: Row) -> Content:
    body = zlib.decompress(r[7]) if r[7] is not None else None
    return Content(
        url=r[0],
        caller_class=r[1],
        final_url=r[2],
        kind=r[3],
        content_type=r[4],
        title=r[5],
        text=r[6],
        body=body,
        hint=r[8],
        fallback=bool(r[9]),
        etag=r[10],
        last_modified=r[11],
        content_hash=r[12],
        fetched_at=r[13],
        size=r[14],
        coverage=r[15],
        page=r[16],
        served=r[17],
        hidden_removed=r[18],
        warning=r[19],
        facts=msgspec.json.decode(r[20], type=PageFacts) if r[20] else PageFacts(),
    )


def packed(c: Content) -> tuple[Content, bytes | None]:
    """`c` with the size the cache's byte budget counts, and its raw body compressed."""
    body = zlib.compress(c.body, 1) if c.body is not None else None
    size = len(c.text.encode()) + len(c.title.encode()) + len(body or b"") + 256
    return msgspec.structs.replace(c, size=size), body


def content_values(c: Content, body: bytes | None, used_at: float) -> tuple[Any, ...]:
    """The row of `COLUMNS, used_at` for a `packed` document."""
    return (
        c.url,
        c.caller_class,
        c.final_url,
        c.kind,
        c.content_type,
        c.title,
        c.text,
        body,
        c.hint,
        c.fallback,
        c.etag,
        c.last_modified,
        c.content_hash,
        c.fetched_at,
        c.size,
        c.coverage,
        c.page,
        c.served,
        c.hidden_removed,
        c.warning,
        msgspec.json.encode(c.facts) if c.facts != PageFacts() else None,
        used_at,
    )


def pdf_row(r: Row) -> PdfDoc:
    return PdfDoc(
        url=r[0],
        caller_class=r[1],
        final_url=r[2],
        content_type=r[3],
        content_hash=r[4],
        etag=r[5],
        last_modified=r[6],
        meta=msgspec.json.decode(r[7]),
        fetched_at=r[8],
        size=r[9],
    )


def pdf_values(
    doc: PdfDoc, pages: list[tuple[int, str, str | None]], used_at: float
) -> tuple[Any, ...]:
    """The row of `PDF_COLUMNS, used_at`; its size (what the byte budget counts) is its pages'."""
    size = sum(len(t.encode()) + 64 for _, t, _ in pages) + 512
    return (
        doc.url,
        doc.caller_class,
        doc.final_url,
        doc.content_type,
        doc.content_hash,
        doc.etag,
        doc.last_modified,
        msgspec.json.encode(doc.meta),
        doc.fetched_at,
        size,
        used_at,
    )


class CacheRules(ABC):
    """What every backend's cache decides the same way, from the queries each runs."""

    def doc_get(self, url: str, caller_class: str) -> Content | PdfDoc | None:
        """The cached document for (url, class), web page or PDF, in one store call."""
        with self._transaction():
            return self.content_get(url, caller_class) or self.pdf_get(url, caller_class)

    def evict(self, max_bytes: int, keep: tuple[str, str, str]) -> Stored:
        """Remove whole documents, least recently used first, until the total fits; never
        `keep` (table, url, caller class) — the one just stored."""
        with self._transaction():
            total = self.cache_bytes()
            evicted: list[tuple[str, str, str, int]] = []
            if total <= max_bytes:
                return Stored(evicted, total)
            for table, url, cls, size, _ in self._by_last_use():
                if total <= max_bytes:
                    break
                if (table, url, cls) == keep:
                    continue
                if table == "pdf":
                    self.pdf_delete(url, cls)
                else:
                    self.content_delete(url, cls)
                total -= size
                evicted.append((table, url, cls, size))
            return Stored(evicted, total)

    # -- what each backend runs

    @abstractmethod
    def _transaction(self, exclusive: bool = False) -> AbstractContextManager[Any]:
        """The calls inside as one transaction where the backend needs it; `exclusive`: one at
        a time across every process that shares the database."""

    @abstractmethod
    def content_get(self, url: str, caller_class: str) -> Content | None: ...

    @abstractmethod
    def pdf_get(self, url: str, caller_class: str) -> PdfDoc | None: ...

    @abstractmethod
    def cache_bytes(self) -> int:
        """Bytes the whole document cache holds: web documents and PDFs."""

    @abstractmethod
    def _by_last_use(self) -> list[tuple[Any, ...]]:
        """Every document as (table: content | pdf, url, caller class, size, last use), least
        recently used first."""

    @abstractmethod
    def content_delete(self, url: str, caller_class: str) -> None: ...

    @abstractmethod
    def pdf_delete(self, url: str, caller_class: str) -> None:
        """The document, and its pages unless another document of the class uses them."""
