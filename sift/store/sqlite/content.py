"""SQLite's queries for the content cache: fetched documents per (URL, caller class), with
validators. What a stored document is made of, and which go when the cache is full, is
`store/cache.py`'s."""

from __future__ import annotations

import time
import zlib
from typing import Any

from sift.core.types import Content, Stored
from sift.store.cache import COLUMNS, LIGHT, CacheRules, content_row, content_values, packed
from sift.store.sqlite.connection import SqliteConnection


class SqliteContent(SqliteConnection, CacheRules):
    """The content table, in the cache file."""

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
            "VALUES (?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?)",
            content_values(c, body, now),
        )
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
        return int(
            self.db.execute(
                "SELECT (SELECT COALESCE(SUM(size), 0) FROM content)"
                " + (SELECT COALESCE(SUM(size), 0) FROM pdf_doc)"
            ).fetchone()[0]
        )

    def _by_last_use(self) -> list[tuple[Any, ...]]:
        return self.db.execute(
            "SELECT 'content', url, caller_class, size, used_at FROM content UNION ALL "
            "SELECT 'pdf', url, caller_class, size, used_at FROM pdf_doc ORDER BY used_at ASC"
        ).fetchall()

    def content_delete(self, url: str, caller_class: str) -> None:
        self.db.execute(
            "DELETE FROM content WHERE url = ? AND caller_class = ?", (url, caller_class)
        )
