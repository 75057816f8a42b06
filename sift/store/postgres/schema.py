"""The PostgreSQL schema, versioned like SQLite's (`sqlite/schema.py`): each migration runs
once, in order, in one transaction, recorded in `schema_version`. Replicas starting together
take an advisory lock, so exactly one of them upgrades; a database newer than this sift is
refused."""

from __future__ import annotations

from typing import Any

from sift.core.errors import SchemaTooNew

MIGRATIONS: list[str] = [
    # 1: every table at once (SQLite's steps 1-7 as PostgreSQL has them today).
    """
    CREATE TABLE content (
        url           TEXT NOT NULL,
        caller_class  TEXT NOT NULL,
        final_url     TEXT NOT NULL,
        kind          TEXT NOT NULL,
        content_type  TEXT NOT NULL,
        title         TEXT NOT NULL,
        text          TEXT NOT NULL,
        body          BYTEA,
        hint          TEXT,
        fallback      BOOLEAN NOT NULL DEFAULT FALSE,
        etag          TEXT,
        last_modified TEXT,
        content_hash  TEXT NOT NULL,
        size          BIGINT NOT NULL,
        fetched_at    DOUBLE PRECISION NOT NULL,
        used_at       DOUBLE PRECISION NOT NULL,
        coverage      DOUBLE PRECISION,
        PRIMARY KEY (url, caller_class)
    );
    CREATE INDEX content_used_size ON content (used_at, size);
    CREATE TABLE pdf_doc (
        url           TEXT NOT NULL,
        caller_class  TEXT NOT NULL,
        final_url     TEXT NOT NULL,
        content_type  TEXT NOT NULL,
        content_hash  TEXT NOT NULL,
        etag          TEXT,
        last_modified TEXT,
        meta_json     BYTEA NOT NULL,
        size          BIGINT NOT NULL,
        fetched_at    DOUBLE PRECISION NOT NULL,
        used_at       DOUBLE PRECISION NOT NULL,
        PRIMARY KEY (url, caller_class)
    );
    CREATE INDEX pdf_doc_used_size ON pdf_doc (used_at, size);
    CREATE TABLE pdf_page (
        content_hash  TEXT NOT NULL,
        caller_class  TEXT NOT NULL,
        page          INTEGER NOT NULL,
        text          TEXT NOT NULL,
        warning       TEXT,
        PRIMARY KEY (content_hash, caller_class, page)
    );
    CREATE TABLE batch_job (
        id            TEXT PRIMARY KEY,
        caller        TEXT NOT NULL,
        caller_class  TEXT NOT NULL,
        idem_key      TEXT NOT NULL,
        status        TEXT NOT NULL,
        error         TEXT,
        targets_total INTEGER NOT NULL,
        targets_done  INTEGER NOT NULL DEFAULT 0,
        created_at    DOUBLE PRECISION NOT NULL,
        lease         DOUBLE PRECISION NOT NULL,
        nbytes        BIGINT NOT NULL DEFAULT 0
    );
    CREATE INDEX batch_job_status ON batch_job (status);
    CREATE TABLE batch_target (
        job_id          TEXT NOT NULL REFERENCES batch_job (id) ON DELETE CASCADE,
        idx             INTEGER NOT NULL,
        url             TEXT NOT NULL,
        options         BYTEA NOT NULL,
        status          TEXT NOT NULL,
        result          BYTEA,
        error           TEXT,
        hint            TEXT,
        code            INTEGER,
        upstream_status INTEGER,
        PRIMARY KEY (job_id, idx)
    );
    CREATE TABLE digest (
        content_hash  TEXT NOT NULL,
        caller_class  TEXT NOT NULL,
        question_key  TEXT NOT NULL,
        model         TEXT NOT NULL,
        answer_json   BYTEA NOT NULL,
        created_at    DOUBLE PRECISION NOT NULL,
        used_at       DOUBLE PRECISION NOT NULL,
        PRIMARY KEY (content_hash, caller_class, question_key, model)
    );
    CREATE INDEX digest_used ON digest (used_at);
    CREATE TABLE embedding (
        content_hash  TEXT NOT NULL,
        caller_class  TEXT NOT NULL,
        model         TEXT NOT NULL,
        chunk         INTEGER NOT NULL,
        vector        BYTEA NOT NULL,
        used_at       DOUBLE PRECISION NOT NULL,
        PRIMARY KEY (content_hash, caller_class, model, chunk)
    );
    CREATE TABLE probe (id INTEGER PRIMARY KEY, at DOUBLE PRECISION NOT NULL);
    """,
    # 2: which replica runs a live job (its state directory's `replica` id), so that a
    #    replica starting again fails only the jobs it was running, not its peers'.
    """
    ALTER TABLE batch_job ADD COLUMN runner TEXT;
    """,
    # 3: how many restarts a batch target was in flight at (`PgStore.batch_resume`).
    """
    ALTER TABLE batch_target ADD COLUMN restarts INTEGER NOT NULL DEFAULT 0;
    """,
    # 4: until when the runner holds the job (`PgStore.batch_claim`, `batch_heartbeat`).
    """
    ALTER TABLE batch_job ADD COLUMN runner_until DOUBLE PRECISION NOT NULL DEFAULT 0;
    """,
    # 5: what a cached page is (honest content), as SQLite's step 8.
    """
    ALTER TABLE content ADD COLUMN page TEXT NOT NULL DEFAULT 'content';
    ALTER TABLE content ADD COLUMN served TEXT;
    ALTER TABLE content ADD COLUMN hidden_removed INTEGER NOT NULL DEFAULT 0;
    ALTER TABLE content ADD COLUMN warning TEXT;
    """,
    # 6: Firecrawl jobs on the batch tables, as SQLite's step 9: a job's kind, and the URLs a
    #    crawl found but robots.txt kept it from.
    """
    ALTER TABLE batch_job ADD COLUMN kind TEXT NOT NULL DEFAULT 'batch';
    CREATE TABLE batch_skip (
        job_id  TEXT NOT NULL REFERENCES batch_job (id) ON DELETE CASCADE,
        url     TEXT NOT NULL,
        PRIMARY KEY (job_id, url)
    );
    """,
    # 7: each replica's batch capacity, written by its heartbeat, so that a replica with room
    #    takes waiting jobs from one holding more than it has workers (`PgStore.batch_steal`).
    """
    CREATE TABLE batch_replica (
        replica  TEXT PRIMARY KEY,
        workers  INTEGER NOT NULL,
        until    DOUBLE PRECISION NOT NULL
    );
    """,
    # 8: what a job needs besides its targets to go on, as SQLite's step 11 (a crawl's bounds).
    """
    ALTER TABLE batch_job ADD COLUMN spec BYTEA;
    """,
    # 9: what a fetch learned beside a page's text, as SQLite's step 12.
    """
    ALTER TABLE content ADD COLUMN facts BYTEA;
    """,
]

# Any constant: the advisory lock replicas take while they check and upgrade the schema.
_LOCK = 0x51F7_5C4E


def migrate(conn: Any, migrations: list[str] | None = None) -> int:
    """Bring the database to the newest version (`conn`: a psycopg connection, not in a
    transaction); returns it. One transaction under the lock: all steps or none."""
    steps = MIGRATIONS if migrations is None else migrations
    with conn.transaction():
        conn.execute("SELECT pg_advisory_xact_lock(%s)", (_LOCK,))
        conn.execute("CREATE TABLE IF NOT EXISTS schema_version (version INTEGER NOT NULL)")
        row = conn.execute("SELECT MAX(version) FROM schema_version").fetchone()
        version = int(row[0] or 0)
        if version > len(steps):
            raise SchemaTooNew(version, len(steps))
        for number, script in enumerate(steps[version:], start=version + 1):
            for statement in script.split(";"):
                if statement.strip():
                    conn.execute(statement)
            conn.execute("INSERT INTO schema_version (version) VALUES (%s)", (number,))
    return len(steps)
