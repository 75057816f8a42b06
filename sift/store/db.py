"""Opening the database: WAL mode, migrations, and the query classes behind one object."""

from __future__ import annotations

import sqlite3
from pathlib import Path

from sift.store.batch import BatchQueries
from sift.store.content import Content, ContentQueries
from sift.store.digest import DigestQueries
from sift.store.pdf import PdfDoc, PdfQueries
from sift.store.schema import migrate


def connect(path: Path | str) -> sqlite3.Connection:
    """The one connection. `check_same_thread=False`: created on start, used by one actor."""
    db = sqlite3.connect(str(path), isolation_level=None, check_same_thread=False)
    db.execute("PRAGMA journal_mode = WAL")
    db.execute("PRAGMA synchronous = NORMAL")
    db.execute("PRAGMA foreign_keys = ON")
    db.execute("PRAGMA busy_timeout = 5000")
    migrate(db)
    return db


class Store(ContentQueries, PdfQueries, DigestQueries, BatchQueries):
    """Every query sift runs, on one connection; only the StoreActor calls it."""

    def __init__(self, db: sqlite3.Connection) -> None:
        super().__init__(db)

    def doc_get(self, url: str, caller_class: str) -> Content | PdfDoc | None:
        """The cached document for (url, class), web page or PDF, in one store call."""
        return self.content_get(url, caller_class) or self.pdf_get(url, caller_class)

    def close(self) -> None:
        self.db.close()

    def live_bytes(self) -> int:
        """Bytes the database file holds in pages that are in use (excluding free pages)."""
        page_size = self.db.execute("PRAGMA page_size").fetchone()[0]
        pages = self.db.execute("PRAGMA page_count").fetchone()[0]
        free = self.db.execute("PRAGMA freelist_count").fetchone()[0]
        return int((pages - free) * page_size)
