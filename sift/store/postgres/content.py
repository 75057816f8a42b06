"""PostgreSQL's queries for the content cache, as SQLite's (`sqlite/content.py`). What a stored
document is made of, and which go when the cache is full, is `store/cache.py`'s."""

from __future__ import annotations

import time
import zlib
from typing import Any

from sift.core.types import Content, Stored
from sift.store.cache import COLUMNS, LIGHT, CacheRules, content_row, content_values, packed
from sift.store.postgres.connection import PgConnection


class PgContent(PgConnection, CacheRules):
    """The content table."""

    def content_get(self, url: str, caller_class: str) -> Content | None:
        r = self._one(
            f"UPDATE content SET used_at = %s WHERE url = %s AND caller_class = %s "
            f"RETURNING {LIGHT}",
            (time.time(), url, caller_class),
        )
        return content_row(r) if r else None

    def content_body(self, url: str, caller_class: str) -> bytes | None:
        r = self._one(
            "SELECT body FROM content WHERE url = %s AND caller_class = %s", (url, caller_class)
        )
        return zlib.decompress(r[0]) if r and r[0] is not None else None

    def content_touch(self, keys: list[tuple[str, str]], when: float) -> None:
        with self._tx() as c, c.cursor() as cur:
            cur.executemany(
                "UPDATE content SET used_at = GREATEST(used_at, %s) "
                "WHERE url = %s AND caller_class = %s",
                [(when, url, cls) for url, cls in keys],
            )

    def content_put(self, c: Content, max_bytes: int) -> Stored:
        now = time.time()
        c, body = packed(c)
        cols = COLUMNS.split(", ")
        update = ", ".join(f"{k} = EXCLUDED.{k}" for k in [*cols[2:], "used_at"])
        with self._tx():
            self._run(
                f"INSERT INTO content ({COLUMNS}, used_at) VALUES ({', '.join(['%s'] * 22)}) "
                f"ON CONFLICT (url, caller_class) DO UPDATE SET {update}",
                content_values(c, body, now),
            )
            return self.evict(max_bytes, keep=("content", c.url, c.caller_class))

    def content_refresh(
        self, url: str, caller_class: str, etag: str | None, last_modified: str | None
    ) -> float:
        now = time.time()
        self._run(
            "UPDATE content SET fetched_at = %s, used_at = %s, etag = COALESCE(%s, etag), "
            "last_modified = COALESCE(%s, last_modified) WHERE url = %s AND caller_class = %s",
            (now, now, etag, last_modified, url, caller_class),
        )
        return now

    def cache_bytes(self) -> int:
        r = self._one(
            "SELECT (SELECT COALESCE(SUM(size), 0) FROM content)"
            " + (SELECT COALESCE(SUM(size), 0) FROM pdf_doc)"
        )
        return int(r[0]) if r else 0

    def _by_last_use(self) -> list[tuple[Any, ...]]:
        return self._all(
            "SELECT 'content', url, caller_class, size, used_at FROM content UNION ALL "
            "SELECT 'pdf', url, caller_class, size, used_at FROM pdf_doc ORDER BY used_at ASC"
        )

    def content_delete(self, url: str, caller_class: str) -> None:
        self._run("DELETE FROM content WHERE url = %s AND caller_class = %s", (url, caller_class))
