"""SQLite's queries for the PDF cache: `pdf_doc` per (URL, caller class) with
validators and meta, `pdf_page` per (content hash, caller class, page). Pages are shared by
every URL that served the same bytes to the same class; they go when the last document using
them goes."""

from __future__ import annotations

import time

from sift.core.types import PdfDoc, Stored
from sift.store.cache import PDF_COLUMNS, CacheRules, pdf_row, pdf_values
from sift.store.sqlite.connection import SqliteConnection
from sift.store.sqlite.transaction import transaction


class SqlitePdf(SqliteConnection, CacheRules):
    """The PDF tables, in the cache file."""

    def pdf_get(self, url: str, caller_class: str) -> PdfDoc | None:
        r = self.db.execute(
            f"SELECT {PDF_COLUMNS} FROM pdf_doc WHERE url = ? AND caller_class = ?",
            (url, caller_class),
        ).fetchone()
        if r is None:
            return None
        self.db.execute(
            "UPDATE pdf_doc SET used_at = ? WHERE url = ? AND caller_class = ?",
            (time.time(), url, caller_class),
        )
        return pdf_row(r)

    def pdf_pages(
        self, content_hash: str, caller_class: str, first: int, last: int
    ) -> list[tuple[int, str, str | None]]:
        return self.db.execute(
            "SELECT page, text, warning FROM pdf_page WHERE content_hash = ? AND caller_class = ? "
            "AND page BETWEEN ? AND ? ORDER BY page",
            (content_hash, caller_class, first, last),
        ).fetchall()

    def pdf_put(
        self, doc: PdfDoc, pages: list[tuple[int, str, str | None]], max_bytes: int
    ) -> Stored:
        """Store a document and its pages in one transaction, then evict to the budget."""
        now = time.time()
        with transaction(self.db):
            old = self.db.execute(
                "SELECT content_hash FROM pdf_doc WHERE url = ? AND caller_class = ?",
                (doc.url, doc.caller_class),
            ).fetchone()
            self.db.execute(
                f"INSERT OR REPLACE INTO pdf_doc ({PDF_COLUMNS}, used_at) "
                "VALUES (?,?,?,?,?,?,?,?,?,?,?)",
                pdf_values(doc, pages, now),
            )
            self.db.executemany(
                "INSERT OR REPLACE INTO pdf_page (content_hash, caller_class, page, text, warning)"
                " VALUES (?,?,?,?,?)",
                [(doc.content_hash, doc.caller_class, n, t, w) for n, t, w in pages],
            )
            if old and old[0] != doc.content_hash:
                self._drop_pages_if_unused(old[0], doc.caller_class)
        return self.evict(max_bytes, keep=("pdf", doc.url, doc.caller_class))

    def pdf_refresh(
        self, url: str, caller_class: str, etag: str | None, last_modified: str | None
    ) -> float:
        now = time.time()
        self.db.execute(
            "UPDATE pdf_doc SET fetched_at = ?, used_at = ?, etag = COALESCE(?, etag), "
            "last_modified = COALESCE(?, last_modified) WHERE url = ? AND caller_class = ?",
            (now, now, etag, last_modified, url, caller_class),
        )
        return now

    def pdf_delete(self, url: str, caller_class: str) -> None:
        r = self.db.execute(
            "SELECT content_hash FROM pdf_doc WHERE url = ? AND caller_class = ?",
            (url, caller_class),
        ).fetchone()
        self.db.execute(
            "DELETE FROM pdf_doc WHERE url = ? AND caller_class = ?", (url, caller_class)
        )
        if r:
            self._drop_pages_if_unused(r[0], caller_class)

    def _drop_pages_if_unused(self, content_hash: str, caller_class: str) -> None:
        used = self.db.execute(
            "SELECT 1 FROM pdf_doc WHERE content_hash = ? AND caller_class = ? LIMIT 1",
            (content_hash, caller_class),
        ).fetchone()
        if not used:
            self.db.execute(
                "DELETE FROM pdf_page WHERE content_hash = ? AND caller_class = ?",
                (content_hash, caller_class),
            )
