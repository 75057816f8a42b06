"""PostgreSQL's queries for the PDF cache, as SQLite's (`sqlite/pdf.py`): `pdf_doc` per (URL,
caller class), `pdf_page` per (content hash, caller class, page), pages shared by every
document of the class with the same bytes."""

from __future__ import annotations

import time

from sift.core.types import PdfDoc, Stored
from sift.store.cache import PDF_COLUMNS, CacheRules, pdf_row, pdf_values
from sift.store.postgres.connection import PgConnection


class PgPdf(PgConnection, CacheRules):
    """The PDF tables."""

    def pdf_get(self, url: str, caller_class: str) -> PdfDoc | None:
        r = self._one(
            "UPDATE pdf_doc SET used_at = %s WHERE url = %s AND caller_class = %s "
            f"RETURNING {PDF_COLUMNS}",
            (time.time(), url, caller_class),
        )
        return pdf_row(r) if r else None

    def pdf_pages(
        self, content_hash: str, caller_class: str, first: int, last: int
    ) -> list[tuple[int, str, str | None]]:
        rows = self._all(
            "SELECT page, text, warning FROM pdf_page WHERE content_hash = %s "
            "AND caller_class = %s AND page BETWEEN %s AND %s ORDER BY page",
            (content_hash, caller_class, first, last),
        )
        return [(r[0], r[1], r[2]) for r in rows]

    def pdf_put(
        self, doc: PdfDoc, pages: list[tuple[int, str, str | None]], max_bytes: int
    ) -> Stored:
        now = time.time()
        cols = PDF_COLUMNS.split(", ")
        update = ", ".join(f"{k} = EXCLUDED.{k}" for k in [*cols[2:], "used_at"])
        with self._tx() as c:
            old = self._one(
                "SELECT content_hash FROM pdf_doc WHERE url = %s AND caller_class = %s FOR UPDATE",
                (doc.url, doc.caller_class),
            )
            self._run(
                f"INSERT INTO pdf_doc ({PDF_COLUMNS}, used_at) VALUES ({', '.join(['%s'] * 11)}) "
                f"ON CONFLICT (url, caller_class) DO UPDATE SET {update}",
                pdf_values(doc, pages, now),
            )
            with c.cursor() as cur:
                cur.executemany(
                    "INSERT INTO pdf_page (content_hash, caller_class, page, text, warning) "
                    "VALUES (%s,%s,%s,%s,%s) ON CONFLICT (content_hash, caller_class, page) "
                    "DO UPDATE SET text = EXCLUDED.text, warning = EXCLUDED.warning",
                    [(doc.content_hash, doc.caller_class, n, t, w) for n, t, w in pages],
                )
            if old and old[0] != doc.content_hash:
                self._drop_pages_if_unused(old[0], doc.caller_class)
            return self.evict(max_bytes, keep=("pdf", doc.url, doc.caller_class))

    def pdf_refresh(
        self, url: str, caller_class: str, etag: str | None, last_modified: str | None
    ) -> float:
        now = time.time()
        self._run(
            "UPDATE pdf_doc SET fetched_at = %s, used_at = %s, etag = COALESCE(%s, etag), "
            "last_modified = COALESCE(%s, last_modified) WHERE url = %s AND caller_class = %s",
            (now, now, etag, last_modified, url, caller_class),
        )
        return now

    def pdf_delete(self, url: str, caller_class: str) -> None:
        with self._tx():
            r = self._one(
                "DELETE FROM pdf_doc WHERE url = %s AND caller_class = %s RETURNING content_hash",
                (url, caller_class),
            )
            if r:
                self._drop_pages_if_unused(r[0], caller_class)

    def _drop_pages_if_unused(self, content_hash: str, caller_class: str) -> None:
        self._run(
            "DELETE FROM pdf_page WHERE content_hash = %s AND caller_class = %s AND NOT EXISTS "
            "(SELECT 1 FROM pdf_doc WHERE content_hash = %s AND caller_class = %s)",
            (content_hash, caller_class, content_hash, caller_class),
        )
