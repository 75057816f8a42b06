"""Queries for the content cache: fetched documents per (URL, caller class), with validators.

The cache has one byte budget; eviction removes whole documents, least recently used first,
and never the one just stored.
"""

from __future__ import annotations

import sqlite3
import time
import zlib
from dataclasses import replace

from sift.core.types import Content, Stored

COLUMNS = (
    "url, caller_class, final_url, kind, content_type, title, text, body, hint, fallback, "
    "etag, last_modified, content_hash, fetched_at, size, coverage, page, served, "
    "hidden_removed, warning"
)
# The same without the raw body, which only raw mode, jq and Firecrawl's html need.
LIGHT = COLUMNS.replace(" body,", " NULL,")


def content_row(r: sqlite3.Row | tuple) -> Content:  # type: ignore[type-arg]
    body = zlib.decompress(r[7]) if r[7] is not None else None
    return Content(
        url=r[0], caller_class=r[1], final_url=r[2], kind=r[3], content_type=r[4], title=r[5],
        text=r[6], body=body, hint=r[8], fallback=bool(r[9]), etag=r[10], last_modified=r[11],
        content_hash=r[12], fetched_at=r[13], size=r[14], coverage=r[15], page=r[16],
        served=r[17], hidden_removed=r[18], warning=r[19],
    )  # fmt: skip


def packed(c: Content) -> tuple[Content, bytes | None]:
    """`c` with the size the cache's byte budget counts, and its raw body compressed: the one
    rule of every backend."""
    body = zlib.compress(c.body, 1) if c.body is not None else None
    size = len(c.text.encode()) + len(c.title.encode()) + len(body or b"") + 256
    return replace(c, size=size), body


class ContentQueries:
    """The content table; every method runs on the StoreActor's thread."""

    def __init__(self, db: sqlite3.Connection) -> None:
        self.db = db

    def content_get(self, url: str, caller_class: str) -> Content | None:
        """The cached document without its raw body (see `content_body`); marks it used."""
        r = self.db.execute(
            f"SELECT {LIGHT} FROM content WHERE url = ? AND caller_class = ?",
            (url, caller_class),
        ).fetchone()
        if r is None:
            return None
        self.db.execute(
            "UPDATE content SET used_at = ? WHERE url = ? AND caller_class = ?",
            (time.time(), url, caller_class),
        )
        return content_row(r)

    def content_body(self, url: str, caller_class: str) -> bytes | None:
        r = self.db.execute(
            "SELECT body FROM content WHERE url = ? AND caller_class = ?", (url, caller_class)
        ).fetchone()
        return zlib.decompress(r[0]) if r and r[0] is not None else None

    def content_touch(self, keys: list[tuple[str, str]], when: float) -> None:
        """Mark documents used (answers served from the loop's memory), in one transaction."""
        self.db.executemany(
            "UPDATE content SET used_at = MAX(used_at, ?) WHERE url = ? AND caller_class = ?",
            [(when, url, cls) for url, cls in keys],
        )

    def content_put(self, c: Content, max_bytes: int) -> Stored:
        """Store (or replace) a document, then evict down to the budget."""
        now = time.time()
        c, body = packed(c)
        self.db.execute(
            f"INSERT OR REPLACE INTO content ({COLUMNS}, used_at) "
            "VALUES (?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?)",
            (
                c.url, c.caller_class, c.final_url, c.kind, c.content_type, c.title, c.text,
                body, c.hint, int(c.fallback), c.etag, c.last_modified, c.content_hash,
                c.fetched_at, c.size, c.coverage, c.page, c.served, c.hidden_removed, c.warning,
                now,
            ),
        )  # fmt: skip
        return self.evict(max_bytes, keep=("content", c.url, c.caller_class))

    def content_refresh(
        self, url: str, caller_class: str, etag: str | None, last_modified: str | None
    ) -> float:
        """A 304 said the copy is current: restart its TTL (validators may be renewed)."""
        now = time.time()
        self.db.execute(
            "UPDATE content SET fetched_at = ?, used_at = ?, etag = COALESCE(?, etag), "
            "last_modified = COALESCE(?, last_modified) WHERE url = ? AND caller_class = ?",
            (now, now, etag, last_modified, url, caller_class),
        )
        return now

    def cache_bytes(self) -> int:
        """Bytes the whole document cache holds: web documents and PDFs share one budget."""
        return int(
            self.db.execute(
                "SELECT (SELECT COALESCE(SUM(size), 0) FROM content)"
                " + (SELECT COALESCE(SUM(size), 0) FROM pdf_doc)"
            ).fetchone()[0]
        )

    def evict(self, max_bytes: int, keep: tuple[str, str, str]) -> Stored:
        """Remove whole documents, least recently used first, until the total fits; never
        `keep` (table, url, caller class) — the one just stored."""
        total = self.cache_bytes()
        evicted: list[tuple[str, str, str, int]] = []
        if total <= max_bytes:
            return Stored(evicted, total)
        rows = self.db.execute(
            "SELECT 'content', url, caller_class, size, used_at FROM content UNION ALL "
            "SELECT 'pdf', url, caller_class, size, used_at FROM pdf_doc ORDER BY used_at ASC"
        ).fetchall()
        for table, url, cls, size, _ in rows:
            if total <= max_bytes:
                break
            if (table, url, cls) == keep:
                continue
            if table == "pdf":
                self.pdf_delete(url, cls)  # type: ignore[attr-defined]
            else:
                self.db.execute(
                    "DELETE FROM content WHERE url = ? AND caller_class = ?", (url, cls)
                )
            total -= size
            evicted.append((table, url, cls, size))
        return Stored(evicted, total)
