"""SQLite's versioned schema: each migration runs once, in order, recorded in `user_version`;
and the files in the state directory that carry it."""

from __future__ import annotations

import sqlite3

from sift.store.sqlite.transaction import transaction

CACHE_FILE = "cache.db"
JOBS_FILE = "jobs.db"
LEGACY_FILE = "sift.db"

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
    # 3: batch jobs (sift/store/batch.py) — a job per submit, its targets in index order.
    #    At most 8 live jobs and what the lease keeps: small tables, no secondary indexes.
    """
    CREATE TABLE batch_job (
        id            TEXT PRIMARY KEY,
        caller        TEXT NOT NULL,
        caller_class  TEXT NOT NULL,
        idem_key      TEXT NOT NULL,
        status        TEXT NOT NULL,
        error         TEXT,
        targets_total INTEGER NOT NULL,
        targets_done  INTEGER NOT NULL DEFAULT 0,
        created_at    REAL NOT NULL,
        lease         REAL NOT NULL,
        nbytes        INTEGER NOT NULL DEFAULT 0
    ) WITHOUT ROWID;
    CREATE TABLE batch_target (
        job_id          TEXT NOT NULL REFERENCES batch_job (id) ON DELETE CASCADE,
        idx             INTEGER NOT NULL,
        url             TEXT NOT NULL,
        options         BLOB NOT NULL,
        status          TEXT NOT NULL,
        result          BLOB,
        error           TEXT,
        hint            TEXT,
        code            INTEGER,
        upstream_status INTEGER,
        PRIMARY KEY (job_id, idx)
    );
    """,
    # 4: digests and embeddings (store/sqlite/digest.py): answers by (content hash, caller class,
    #    question hash, model); chunk vectors by (content hash, caller class, model key, chunk).
    """
    CREATE TABLE digest (
        content_hash  TEXT NOT NULL,
        caller_class  TEXT NOT NULL,
        question_key  TEXT NOT NULL,
        model         TEXT NOT NULL,
        answer_json   BLOB NOT NULL,
        created_at    REAL NOT NULL,
        used_at       REAL NOT NULL,
        PRIMARY KEY (content_hash, caller_class, question_key, model)
    );
    CREATE INDEX digest_used ON digest (used_at);
    CREATE TABLE embedding (
        content_hash  TEXT NOT NULL,
        caller_class  TEXT NOT NULL,
        model         TEXT NOT NULL,
        chunk         INTEGER NOT NULL,
        vector        BLOB NOT NULL,
        used_at       REAL NOT NULL,
        PRIMARY KEY (content_hash, caller_class, model, chunk)
    );
    """,
    # 5: the cache's byte total and eviction order read from small indexes, not from rows
    # that carry whole documents (SUM(size) read every cached page on every insert).
    """
    DROP INDEX content_used;
    DROP INDEX pdf_doc_used;
    CREATE INDEX content_used_size ON content (used_at, size);
    CREATE INDEX pdf_doc_used_size ON pdf_doc (used_at, size);
    """,
    # 6: one row the store's health probe rewrites (`SqliteConnection.probe`).
    """
    CREATE TABLE probe (id INTEGER PRIMARY KEY, at REAL NOT NULL);
    """,
    # 7: how much of a page's article text its main content kept, when well under half.
    """
    ALTER TABLE content ADD COLUMN coverage REAL;
    """,
    # 8: what a cached page is (honest content): its classification, what the site served,
    # the hidden text removed, and the cleaner's warning.
    """
    ALTER TABLE content ADD COLUMN page TEXT NOT NULL DEFAULT 'content';
    ALTER TABLE content ADD COLUMN served TEXT;
    ALTER TABLE content ADD COLUMN hidden_removed INTEGER NOT NULL DEFAULT 0;
    ALTER TABLE content ADD COLUMN warning TEXT;
    """,
    # 9: Firecrawl jobs on the batch tables: a job's kind (batch | scrape | crawl), and the
    #    URLs a crawl found but robots.txt kept it from (its `robotsBlocked`).
    """
    ALTER TABLE batch_job ADD COLUMN kind TEXT NOT NULL DEFAULT 'batch';
    CREATE TABLE batch_skip (
        job_id  TEXT NOT NULL REFERENCES batch_job (id) ON DELETE CASCADE,
        url     TEXT NOT NULL,
        PRIMARY KEY (job_id, url)
    ) WITHOUT ROWID;
    """,
    # 10: how many restarts a batch target was in flight at (`SqliteBatch.batch_resume`).
    """
    ALTER TABLE batch_target ADD COLUMN restarts INTEGER NOT NULL DEFAULT 0;
    """,
    # 11: what a job needs besides its targets to go on after a restart (a crawl's bounds).
    """
    ALTER TABLE batch_job ADD COLUMN spec BLOB;
    """,
    # 12: what a fetch learned beside a page's text (`PageFacts`, JSON): its source (the
    #     site's own markdown) and what the site says about automated use of it.
    """
    ALTER TABLE content ADD COLUMN facts BLOB;
    """,
]


def migrate(db: sqlite3.Connection, migrations: list[str] | None = None) -> int:
    """Bring the database to the newest version; returns it. Each step is one transaction."""
    steps = MIGRATIONS if migrations is None else migrations
    version = db.execute("PRAGMA user_version").fetchone()[0]
    if version > len(steps):
        raise RuntimeError(f"database version {version} is newer than this sift ({len(steps)})")
    for number, script in enumerate(steps[version:], start=version + 1):
        with transaction(db):
            for statement in script.split(";"):
                if statement.strip():
                    db.execute(statement)
            db.execute(f"PRAGMA user_version = {number}")
    return len(steps)
