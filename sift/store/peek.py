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

from sift.store.sqlite.schema import CACHE_FILE, MIGRATIONS

Rows = list[tuple[int, str, str | None]]
TOUCH_AFTER = 60.0  # seconds: `used_at` (the LRU mark) is rewritten at most this often


def cached_pdf(
    state: Path,
    url: str,
    caller_class: str,
    content_hash: str,
    window: tuple[int, int | None] | None = None,
) -> tuple[dict[str, Any], Rows, int | None] | None:
    """(meta, pages, count) of the PDF kept under (`url`, `caller_class`) with these bytes:
    every page and count None; or, asked for a `window` (first, last or None = to the end) of
    a document whose pages are 1–count, only those pages and the count. None when the file is
    missing, of another schema version, unreadable, or has no such document.

    `used_at` is touched as `pdf_get` does, but only when older than TOUCH_AFTER: a write (and
    the checkpoint at close) costs more than the whole read."""
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
            "SELECT content_hash, meta_json, used_at FROM pdf_doc WHERE url = ? AND "
            "caller_class = ?",
            (url, caller_class),
        ).fetchone()
        if found is None or found[0] != content_hash:
            return None
        key = "FROM pdf_page WHERE content_hash = ? AND caller_class = ?"
        count = None
        if window is not None:
            count, low, high = db.execute(
                f"SELECT count(*), min(page), max(page) {key}", (content_hash, caller_class)
            ).fetchone()
            if low != 1 or high != count:
                count = None  # not pages 1–count: every page, as the store answers them
        first, last = window if count is not None and window is not None else (1, None)
        rows = db.execute(
            f"SELECT page, text, warning {key} AND page BETWEEN ? AND ? ORDER BY page",
            (content_hash, caller_class, first, last if last is not None else 1 << 30),
        ).fetchall()
        now = time.time()
        if now - found[2] > TOUCH_AFTER:
            with contextlib.suppress(sqlite3.OperationalError):  # busy: the mark can wait
                db.execute("PRAGMA synchronous = NORMAL")
                db.execute(
                    "UPDATE pdf_doc SET used_at = ? WHERE url = ? AND caller_class = ?",
                    (now, url, caller_class),
                )
        return msgspec.json.decode(found[1]), rows, count
    except (sqlite3.Error, ValueError, msgspec.DecodeError):
        return None
    finally:
        db.close()
