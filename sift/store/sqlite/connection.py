"""The SQLite backend's files: opening them, naming their errors, and what a store call
needs of a connection (health, limits, the end).

Two files in the state directory: `cache.db` (content, PDF pages, digests, embeddings — all
disposable) and `jobs.db` (batch jobs — not). Both carry the one schema of `schema.py`; each
uses its own tables. A corrupt cache is moved aside and rebuilt at start; a corrupt jobs file
stops start-up (`JobsCorrupt`), since starting over would silently drop callers' jobs. A
`sift.db` of an older sift becomes the cache, its batch rows moved into `jobs.db`.
"""

from __future__ import annotations

import contextlib
import logging
import sqlite3
import time
from pathlib import Path

from sift.core.errors import JobsCorrupt
from sift.store.sqlite.schema import CACHE_FILE, JOBS_FILE, LEGACY_FILE, migrate
from sift.store.sqlite.transaction import undo

log = logging.getLogger("sift.store")

# SQLite primary result codes → the kinds a store error is reported as (metrics, /healthz).
_KINDS = {
    5: "locked",  # SQLITE_BUSY: the write lock held past busy_timeout
    6: "locked",  # SQLITE_LOCKED
    8: "read_only",  # SQLITE_READONLY
    10: "io_error",  # SQLITE_IOERR
    11: "corrupt",  # SQLITE_CORRUPT
    13: "disk_full",  # SQLITE_FULL (also max_page_count reached)
    14: "cant_open",  # SQLITE_CANTOPEN
    26: "corrupt",  # SQLITE_NOTADB: "file is not a database"
}


def classify(exc: sqlite3.Error) -> str:
    """The kind of a database error: a key of `REASONS` (never the message: it may name data)."""
    code = getattr(exc, "sqlite_errorcode", None)
    return "other" if code is None else _KINDS.get(code & 0xFF, "other")


def connect(path: Path | str, busy_timeout: float = 5.0) -> sqlite3.Connection:
    """One connection. `check_same_thread=False`: created on start, used by one actor."""
    db = sqlite3.connect(
        str(path), isolation_level=None, check_same_thread=False, timeout=busy_timeout
    )
    try:
        db.execute("PRAGMA journal_mode = WAL")
        db.execute("PRAGMA synchronous = NORMAL")
        db.execute("PRAGMA foreign_keys = ON")
        db.execute(f"PRAGMA busy_timeout = {int(busy_timeout * 1000)}")
        migrate(db)
    except BaseException:
        db.close()
        raise
    return db


def _checked(path: Path, busy_timeout: float) -> sqlite3.Connection:
    """`connect`, then a quick integrity check of every page; corruption raises."""
    db = connect(path, busy_timeout)
    try:
        rows = db.execute("PRAGMA quick_check").fetchall()
    except BaseException:
        db.close()
        raise
    if rows != [("ok",)]:
        db.close()
        raise sqlite3.DatabaseError("integrity check failed")
    return db


def _corrupt(exc: sqlite3.DatabaseError) -> bool:
    return classify(exc) == "corrupt" or str(exc) == "integrity check failed"


def _move(src: Path, dst: Path) -> None:
    for suffix in ("", "-wal", "-shm"):
        side = src.with_name(src.name + suffix)
        if side.exists():
            side.rename(dst.with_name(dst.name + suffix))


def open_cache(path: Path, busy_timeout: float = 5.0) -> sqlite3.Connection:
    """The cache, rebuilt empty if the file is corrupt (the old one kept beside it)."""
    try:
        return _checked(path, busy_timeout)
    except sqlite3.DatabaseError as exc:
        if not _corrupt(exc):
            raise
    stamp = time.strftime("%Y%m%dT%H%M%SZ", time.gmtime())
    aside = path.with_name(f"{path.name}.corrupt-{stamp}")
    _move(path, aside)
    log.warning("cache database %s is corrupt: moved to %s and rebuilt empty", path, aside.name)
    return connect(path, busy_timeout)


def open_jobs(path: Path, busy_timeout: float = 5.0) -> sqlite3.Connection:
    """The jobs database; `JobsCorrupt` if it cannot be read."""
    try:
        return _checked(path, busy_timeout)
    except sqlite3.DatabaseError as exc:
        if _corrupt(exc):
            raise JobsCorrupt(path) from None
        raise


def check_jobs(state: Path, busy_timeout: float = 5.0) -> None:
    """Before any actor starts: `JobsCorrupt` if the jobs database cannot be read."""
    state.mkdir(parents=True, exist_ok=True)
    open_jobs(state / JOBS_FILE, busy_timeout).close()


def adopt_legacy(state: Path) -> None:
    """An older sift kept everything in `sift.db`: it becomes the cache, its batch rows move
    to `jobs.db`. A legacy file that cannot be read becomes the cache as it is (and is then
    moved aside by `open_cache`); its jobs stay in it."""
    legacy, cache, jobs = state / LEGACY_FILE, state / CACHE_FILE, state / JOBS_FILE
    if not legacy.exists() or cache.exists():
        return
    with contextlib.suppress(sqlite3.DatabaseError):
        if not jobs.exists():
            connect(jobs).close()
            db = connect(legacy)
            try:
                db.execute("ATTACH DATABASE ? AS jobs", (str(jobs),))
                db.execute("BEGIN")
                db.execute("INSERT INTO jobs.batch_job SELECT * FROM main.batch_job")
                db.execute("INSERT INTO jobs.batch_target SELECT * FROM main.batch_target")
                db.execute("DELETE FROM main.batch_target")
                db.execute("DELETE FROM main.batch_job")
                db.execute("COMMIT")
                db.execute("DETACH DATABASE jobs")
                db.execute("PRAGMA wal_checkpoint(TRUNCATE)")
            finally:
                db.close()
    _move(legacy, cache)
    log.info("moved %s to %s and its batch jobs to %s", LEGACY_FILE, CACHE_FILE, JOBS_FILE)


class SqliteConnection:
    """The cache's connection (`db`) and the jobs' (`jobs`: the same one when only one is
    given, as in unit tests), which every query module runs on. Only the StoreActor calls it,
    on its one thread."""

    def __init__(self, db: sqlite3.Connection, jobs: sqlite3.Connection | None = None) -> None:
        self.db = db
        self.jobs = jobs if jobs is not None else db

    def _transaction(self, exclusive: bool = False) -> contextlib.nullcontext[None]:
        """Nothing to do: one thread runs every call, one at a time (and the one process that
        owns the files runs every job)."""
        return contextlib.nullcontext()

    def fault(self, exc: BaseException) -> str | None:
        return classify(exc) if isinstance(exc, sqlite3.Error) else None

    def connections(self) -> tuple[sqlite3.Connection, ...]:
        return (self.db,) if self.jobs is self.db else (self.db, self.jobs)

    def rollback(self) -> None:
        """After an error: end any open transaction, so the next call starts clean."""
        for db in self.connections():
            undo(db)

    def probe(self) -> bool:
        """Can each file take a write? Takes the write lock, allocates new pages (rolled back:
        a full database says so without growing) and commits a one-row rewrite."""
        for db in self.connections():
            db.execute("BEGIN IMMEDIATE")
            try:
                db.execute("INSERT INTO probe (id, at) VALUES (2, zeroblob(65536))")
            finally:
                undo(db)
            db.execute("INSERT OR REPLACE INTO probe (id, at) VALUES (1, ?)", (time.time(),))
        return True

    def page_limit(self, pages: int) -> int:
        """`PRAGMA max_page_count` on both files (0: no limit). Operators can cap the files;
        tests make a database "full" with it. Returns the cache's limit now in force."""
        limit = 0
        for db in self.connections():
            limit = db.execute(f"PRAGMA max_page_count = {int(pages) or 4294967294}").fetchone()[0]
        return int(limit)

    def close(self) -> None:
        for db in self.connections():
            db.close()

    def live_bytes(self) -> int:
        """Bytes the cache file holds in pages that are in use (excluding free pages)."""
        page_size = self.db.execute("PRAGMA page_size").fetchone()[0]
        pages = self.db.execute("PRAGMA page_count").fetchone()[0]
        free = self.db.execute("PRAGMA freelist_count").fetchone()[0]
        return int((pages - free) * page_size)
