"""The PostgreSQL backend's connections: a `psycopg_pool` pool shared by the store actors, one
transaction per store call, the errors named, and what a store call needs of the database
(health, the end).

Every public method of the store is one transaction on a connection from the pool (a call
inside another on the same thread joins it). What SQLite gets from one serialising thread,
PostgreSQL gets from row locks and advisory locks. Connections lost are replaced by the pool
on their own; the password comes from the URL, `$PGPASSWORD` or `~/.pgpass` (libpq) and is
never logged.
"""

from __future__ import annotations

import contextlib
import threading
import time
from collections.abc import Iterator
from typing import Any

import psycopg
import psycopg_pool
from psycopg import errors as pgerr
from psycopg.conninfo import conninfo_to_dict, make_conninfo

from sift.store.postgres.schema import migrate

# The advisory lock an exclusive transaction holds to its end: a batch submit's, while it
# checks the caps, so that they hold across replicas.
_EXCLUSIVE = 0x51F7_BA7C


def redact(url: str) -> str:
    """The URL without its password, for log lines and errors."""
    with contextlib.suppress(psycopg.ProgrammingError):
        info = conninfo_to_dict(url)
        if "password" in info:
            info["password"] = "***"
        return make_conninfo(**{k: str(v) for k, v in info.items() if v is not None})
    return "postgresql://(unparsable URL)"


def classify(exc: BaseException) -> str:
    """The kind of a database error: a key of `protocol.REASONS` (never the message)."""
    if isinstance(exc, psycopg_pool.PoolTimeout | psycopg.OperationalError) and not isinstance(
        exc, pgerr.DiskFull | pgerr.LockNotAvailable | pgerr.QueryCanceled
    ):
        return "unreachable"
    if isinstance(exc, pgerr.DiskFull | pgerr.OutOfMemory):
        return "disk_full"
    if isinstance(exc, pgerr.LockNotAvailable | pgerr.DeadlockDetected | pgerr.QueryCanceled):
        return "locked"
    if isinstance(exc, pgerr.SerializationFailure):
        return "locked"
    if isinstance(exc, pgerr.ReadOnlySqlTransaction | pgerr.InsufficientPrivilege):
        return "read_only"
    if isinstance(exc, pgerr.DataCorrupted | pgerr.IndexCorrupted):
        return "corrupt"
    return "other"


class PgConnection:
    """The pool, and the transaction every query module runs in. Thread-safe: each store
    actor's call takes a connection for one transaction."""

    errors: tuple[type[BaseException], ...] = (psycopg.Error, psycopg_pool.PoolTimeout)

    def __init__(
        self,
        url: str,
        size: int = 4,
        connect_timeout: float = 5.0,
        replica: str = "",
        lease: float = 15.0,
    ) -> None:
        self.url = url
        self.replica = replica  # this replica's id: the runner of the jobs it creates
        self.lease = lease  # how long a runner holds a job without renewing
        self._local = threading.local()
        self._migrated = False
        self.down = False  # the last connection failed: calls fail fast until a probe works
        self._lock = threading.Lock()
        self.pool = psycopg_pool.ConnectionPool(
            url,
            min_size=1,
            max_size=size,
            open=False,
            timeout=connect_timeout,
            kwargs={"connect_timeout": max(1, int(connect_timeout))},
            check=psycopg_pool.ConnectionPool.check_connection,
            name="sift-store",
        )

    def fault(self, exc: BaseException) -> str | None:
        """The kind of a database error, or None when `exc` is not one (a bug)."""
        return classify(exc) if isinstance(exc, self.errors) else None

    def open(self, wait: float | None = None) -> None:
        """Open the pool; with `wait`, check the schema now (a newer one raises
        `SchemaTooNew`; an unreachable database raises a psycopg error)."""
        self.pool.open(wait=False)
        if wait is not None:
            with self._tx():
                pass

    @contextlib.contextmanager
    def _transaction(self, exclusive: bool = False) -> Iterator[None]:
        """What the rules every backend shares run in (`store/cache.py`, `store/batch.py`):
        one transaction; `exclusive`: also one at a time across every replica."""
        with self._tx() as c:
            if exclusive:
                c.execute("SELECT pg_advisory_xact_lock(%s)", (_EXCLUSIVE,))
            yield

    @contextlib.contextmanager
    def _tx(self) -> Iterator[psycopg.Connection[Any]]:
        """A connection in a transaction: this thread's, when a call is inside another."""
        conn: psycopg.Connection[Any] | None = getattr(self._local, "conn", None)
        if conn is not None:
            yield conn
            return
        if self.down and not getattr(self._local, "probing", False):
            # Fail fast while it is away: calls answer at once; the probe finds it again.
            raise psycopg.OperationalError("database unreachable")
        try:
            with self.pool.connection() as conn:
                if not self._migrated:
                    with self._lock:
                        if not self._migrated:
                            migrate(conn)
                            self._migrated = True
                self._local.conn = conn
                try:
                    with conn.transaction():
                        yield conn
                finally:
                    self._local.conn = None
        except (psycopg_pool.PoolTimeout, psycopg.OperationalError) as exc:
            if classify(exc) == "unreachable":
                self.down = True
            raise
        self.down = False

    def _one(self, sql: str, args: tuple[Any, ...] = ()) -> tuple[Any, ...] | None:
        with self._tx() as c:
            row: tuple[Any, ...] | None = c.execute(sql, args).fetchone()
            return row

    def _all(self, sql: str, args: tuple[Any, ...] = ()) -> list[tuple[Any, ...]]:
        with self._tx() as c:
            return c.execute(sql, args).fetchall()

    def _run(self, sql: str, args: tuple[Any, ...] = ()) -> int:
        with self._tx() as c:
            return c.execute(sql, args).rowcount

    def rollback(self) -> None:
        """Nothing to do: each call's transaction ends with the call (rolled back on error)."""

    def probe(self) -> bool:
        """Can the database take a write? One row rewritten (the only call that tries while
        the database is away)."""
        self._local.probing = True
        try:
            self._run(
                "INSERT INTO probe (id, at) VALUES (1, %s) ON CONFLICT (id) DO UPDATE SET at = "
                "EXCLUDED.at",
                (time.time(),),
            )
        finally:
            self._local.probing = False
        return True

    def live_bytes(self) -> int:
        r = self._one(
            "SELECT COALESCE(SUM(pg_total_relation_size(c.oid)), 0) FROM pg_class c "
            "WHERE c.relname IN ('content', 'pdf_doc', 'pdf_page') AND c.relkind = 'r'"
        )
        return int(r[0]) if r else 0

    def page_limit(self, pages: int) -> int:
        """SQLite's file cap; PostgreSQL's size is the operator's (0: no limit here)."""
        return 0

    def pool_stats(self) -> dict[str, int]:
        return self.pool.get_stats()

    def close(self) -> None:
        self.pool.close()
