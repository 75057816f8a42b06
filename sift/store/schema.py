"""The versioned schema: each migration runs once, in order, recorded in `user_version`."""

from __future__ import annotations

import sqlite3

MIGRATIONS: list[str] = [
    # 1: the content cache — one fetched document per (url, caller class).
    """
    CREATE TABLE content (
        url           TEXT NOT NULL,
        caller_class  TEXT NOT NULL,
        final_url     TEXT NOT NULL,
        kind          TEXT NOT NULL,
        content_type  TEXT NOT NULL,
        title         TEXT NOT NULL,
        text          TEXT NOT NULL,
        body          BLOB,
        hint          TEXT,
        fallback      INTEGER NOT NULL DEFAULT 0,
        etag          TEXT,
        last_modified TEXT,
        content_hash  TEXT NOT NULL,
        size          INTEGER NOT NULL,
        fetched_at    REAL NOT NULL,
        used_at       REAL NOT NULL,
        PRIMARY KEY (url, caller_class)
    );
    CREATE INDEX content_used ON content (used_at);
    """,
    # 2: the PDF cache — one document per (url, caller class), its pages by content hash.
    """
    CREATE TABLE pdf_doc (
        url           TEXT NOT NULL,
        caller_class  TEXT NOT NULL,
        final_url     TEXT NOT NULL,
        content_type  TEXT NOT NULL,
        content_hash  TEXT NOT NULL,
        etag          TEXT,
        last_modified TEXT,
        meta_json     BLOB NOT NULL,
        size          INTEGER NOT NULL,
        fetched_at    REAL NOT NULL,
        used_at       REAL NOT NULL,
        PRIMARY KEY (url, caller_class)
    );
    CREATE INDEX pdf_doc_used ON pdf_doc (used_at);
    CREATE TABLE pdf_page (
        content_hash  TEXT NOT NULL,
        caller_class  TEXT NOT NULL,
        page          INTEGER NOT NULL,
        text          TEXT NOT NULL,
        warning       TEXT,
        PRIMARY KEY (content_hash, caller_class, page)
    );
    """,
    # 3: batch jobs (sift/store/batch.py) — filled in by the batch work.
    "",
    # 4: digests and embeddings (sift/store/digest.py) — filled in by the digest work.
    "",
]


def migrate(db: sqlite3.Connection, migrations: list[str] | None = None) -> int:
    """Bring the database to the newest version; returns it. Each step is one transaction."""
    steps = MIGRATIONS if migrations is None else migrations
    version = db.execute("PRAGMA user_version").fetchone()[0]
    if version > len(steps):
        raise RuntimeError(f"database version {version} is newer than this sift ({len(steps)})")
    for number, script in enumerate(steps[version:], start=version + 1):
        db.execute("BEGIN")
        try:
            for statement in script.split(";"):
                if statement.strip():
                    db.execute(statement)
            db.execute(f"PRAGMA user_version = {number}")
            db.execute("COMMIT")
        except BaseException:
            db.execute("ROLLBACK")
            raise
    return len(steps)
