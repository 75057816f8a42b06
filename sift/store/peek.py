"""A cached PDF read straight from `cache.db`, for a process that starts no store actor (the
cached `sift extract`): never creates, migrates or repairs the file; anything it cannot answer
is None, and the caller takes the full path, which does all of that."""

from __future__ import annotations

import contextlib
import sqlite3
import time
from pathlib import Path
from typing import Any

import msgspec

from sift.store.schema import MIGRATIONS
from sift.store.sqlite import CACHE_FILE

Rows = list[tuple[int, str, str | None]]


def cached_pdf(
    state: Path, url: str, caller_class: str, content_hash: str
) -> tuple[dict[str, Any], Rows] | None:
    """(meta, every cached page) of the PDF kept under (`url`, `caller_class`) with these
    bytes; None when the file is missing, of another schema version, unreadable, or has no
    such document. Its `used_at` is touched, as `pdf_get` does, unless a writer holds it."""
    try:
        db = sqlite3.connect(
            f"file:{state / CACHE_FILE}?mode=rw", uri=True, isolation_level=None, timeout=0
        )
    except sqlite3.Error:
        return None
    try:
        if db.execute("PRAGMA user_version").fetchone()[0] != len(MIGRATIONS):
            return None
        found = db.execute(
            "SELECT content_hash, meta_json FROM pdf_doc WHERE url = ? AND caller_class = ?",
            (url, caller_class),
        ).fetchone()
        if found is None or found[0] != content_hash:
            return None
        rows = db.execute(
            "SELECT page, text, warning FROM pdf_page WHERE content_hash = ? AND caller_class = ?"
            " ORDER BY page",
            (found[0], caller_class),
        ).fetchall()
        with contextlib.suppress(sqlite3.OperationalError):  # busy: the LRU mark can wait
            db.execute("PRAGMA synchronous = NORMAL")
            db.execute(
                "UPDATE pdf_doc SET used_at = ? WHERE url = ? AND caller_class = ?",
                (time.time(), url, caller_class),
            )
        return msgspec.json.decode(found[1]), rows
    except (sqlite3.Error, msgspec.DecodeError):
        return None
    finally:
        db.close()
