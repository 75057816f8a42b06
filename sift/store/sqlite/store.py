"""The SQLite store: every query module's methods on one object, and how a state directory's
files are opened (`open_store`) and checked before any actor starts (`prepare`)."""

from __future__ import annotations

from pathlib import Path

from sift.store.sqlite.batch import SqliteBatch
from sift.store.sqlite.connection import adopt_legacy, check_jobs, open_cache, open_jobs
from sift.store.sqlite.content import SqliteContent
from sift.store.sqlite.digest import SqliteDigest
from sift.store.sqlite.pdf import SqlitePdf
from sift.store.sqlite.schema import CACHE_FILE, JOBS_FILE


class SqliteStore(SqliteContent, SqlitePdf, SqliteDigest, SqliteBatch):
    """Every query sift runs (`sift.store.protocol.Store`): the cache's on `db`, batch jobs' on
    `jobs`. Only the StoreActor calls it."""


def open_store(state: Path, busy_timeout: float = 5.0) -> SqliteStore:
    """The store of a state directory: `cache.db` and `jobs.db` in it; or one file for both
    when `state` names a `.db` file (unit tests, tools)."""
    if state.suffix == ".db":
        state.parent.mkdir(parents=True, exist_ok=True)
        return SqliteStore(open_cache(state, busy_timeout))
    state.mkdir(parents=True, exist_ok=True)
    cache = open_cache(state / CACHE_FILE, busy_timeout)
    try:
        jobs = open_jobs(state / JOBS_FILE, busy_timeout)
    except BaseException:
        cache.close()
        raise
    return SqliteStore(cache, jobs)


def prepare(state: Path, busy_timeout: float = 5.0) -> None:
    """Before any actor starts: an older sift's file adopted, `JobsCorrupt` if the jobs
    database cannot be read."""
    adopt_legacy(state)
    check_jobs(state, busy_timeout)
