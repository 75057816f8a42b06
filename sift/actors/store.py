"""StoreActor: the SQLite connections. Every statement is a message to this thread.

With PostgreSQL (`[store] url`), `[store] pool` store actors share one connection pool, so
that a slow query does not stall the cache; the database, not a thread, serialises.

A database error (disk full, I/O error, corrupt page, lock held past the busy timeout,
read-only file) is not a bug: the call is answered `StoreUnavailable` (503), the open
transaction is rolled back, the error is counted, and `StoreHealth` says degraded until the
query that failed succeeds again — or the periodic probe does. The actor lives on.
"""

from __future__ import annotations

import contextlib
import logging
import threading
import time
import uuid
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

import pykka

from sift import metrics
from sift.actors.base import SiftActor
from sift.actors.bridge import Answer
from sift.errors import StoreUnavailable
from sift.store.db import CACHE_FILE, JOBS_FILE, REASONS, Store, open_cache, open_jobs

if TYPE_CHECKING:
    from sift.store.postgres import PgStore

log = logging.getLogger("sift.store")

# Queries that only read (the `op` label of the error metric).
READS = frozenset(
    {
        "doc_get", "content_body", "pdf_get", "pdf_pages", "digest_get", "embed_count",
        "embed_vectors", "embed_have", "cache_bytes", "live_bytes", "batch_job",
        "batch_targets", "batch_target", "batch_find", "batch_live_counts", "batch_nbytes",
    }
)  # fmt: skip


@dataclass(frozen=True)
class StoreCall:
    """Run `Store.<method>(*args)` on the store thread and answer its return value."""

    method: str
    args: tuple[Any, ...]
    reply: Answer | None = None


@dataclass(frozen=True)
class Probe:
    """A timer while degraded: try a write, and say ok again if it works."""


class StoreHealth:
    """What /healthz and the pipeline read about the store; written by the store thread."""

    def __init__(self) -> None:
        self.kind: str | None = None  # a key of `REASONS` while degraded
        self.method: str | None = None  # the query that failed

    @property
    def reason(self) -> str | None:
        return REASONS[self.kind] if self.kind else None

    def failed(self, method: str, op: str, kind: str) -> None:
        if self.kind is None:
            log.warning("store degraded: %s (%s)", REASONS[kind], method)
        self.kind, self.method = kind, method
        metrics.store_error(op, kind)
        metrics.STORE_DEGRADED.set(1)

    def succeeded(self, method: str) -> None:
        """Another query's success proves little (a full database still takes a small row;
        reads work under a writer's lock): only the one that failed, or the probe, clears."""
        if self.kind is not None and method in (self.method, "probe"):
            log.warning("store recovered (was %s)", self.reason)
            self.kind = self.method = None
            metrics.STORE_DEGRADED.set(0)


class StoreActor(SiftActor):
    """Args: state: the directory of cache.db and jobs.db (or one file for both, in unit
    tests); health: shared with the web side; busy_timeout, probe_every: seconds."""

    def __init__(
        self,
        state: Path,
        health: StoreHealth | None = None,
        busy_timeout: float = 5.0,
        probe_every: float = 10.0,
        shared: PgStore | None = None,
    ) -> None:
        super().__init__()
        self.state = state
        self.health = health or StoreHealth()
        self.busy_timeout = busy_timeout
        self.probe_every = probe_every
        self.store: Store | PgStore | None = None
        self.shared = shared  # the PostgreSQL store, opened and closed by its owner
        self._timer: threading.Timer | None = None

    def on_start(self) -> None:
        if self.shared is not None:
            self.store = self.shared
            if self.health.kind is not None:  # started degraded: look for it again
                self._arm()
            return
        if self.state.suffix == ".db":  # one file (unit tests, tools)
            self.state.parent.mkdir(parents=True, exist_ok=True)
            self.store = Store(open_cache(self.state, self.busy_timeout))
            return
        self.state.mkdir(parents=True, exist_ok=True)
        cache = open_cache(self.state / CACHE_FILE, self.busy_timeout)
        try:
            jobs = open_jobs(self.state / JOBS_FILE, self.busy_timeout)
        except BaseException:
            cache.close()
            raise
        self.store = Store(cache, jobs)

    def handle_store_call(self, msg: StoreCall) -> Any:
        assert self.store is not None
        if msg.method.startswith("_") or not hasattr(self.store, msg.method):
            raise AttributeError(f"Store has no query {msg.method!r}")
        return self._run(msg.method, msg.args)

    def handle_probe(self, msg: Probe) -> None:
        self._timer = None
        if self.health.kind is not None and self.store is not None:
            with contextlib.suppress(StoreUnavailable):
                self._run("probe", ())

    def _run(self, method: str, args: tuple[Any, ...]) -> Any:
        assert self.store is not None
        op = "probe" if method == "probe" else "read" if method in READS else "write"
        started = time.perf_counter()
        try:
            result = getattr(self.store, method)(*args)
        except self.store.errors as exc:
            self.store.rollback()
            kind = self.store.kind(exc)
            self.health.failed(method, op, kind)
            self._arm()
            raise StoreUnavailable(kind, REASONS[kind]) from None
        finally:
            metrics.STORE_SECONDS.labels(op).observe(time.perf_counter() - started)
            if self.shared is not None:
                metrics.store_pool(self.shared.pool_stats())
        self.health.succeeded(method)
        return result

    def _arm(self) -> None:
        if self._timer is not None:
            return
        self._timer = threading.Timer(self.probe_every, self._probe)
        self._timer.daemon = True
        self._timer.start()

    def _probe(self) -> None:
        with contextlib.suppress(pykka.ActorDeadError):
            self.actor_ref.tell(Probe())

    def release(self) -> None:
        if self._timer is not None:
            self._timer.cancel()
            self._timer = None
        if self.store is not None and self.shared is None:
            self.store.close()
        self.store = None


def open_store(
    url: str, pool: int, timeout: float, state: Path, lease: float = 15.0
) -> PgStore | None:
    """The PostgreSQL store for a `postgresql://` URL (its pool not yet open); None for SQLite.
    psycopg is imported only then. The replica's id is kept in its state directory, so that
    it is the same replica again after a restart."""
    if url.startswith("sqlite:"):
        return None
    from sift.store.postgres import PgStore

    state.mkdir(parents=True, exist_ok=True)
    path = state / "replica"
    if not path.exists():
        path.write_text(uuid.uuid4().hex + "\n")
    replica = path.read_text().strip()
    return PgStore(url, size=pool, connect_timeout=timeout, replica=replica, lease=lease)


def start_pg(pg: PgStore, health: StoreHealth) -> None:
    """Open the pool and check the schema: a newer one stops start-up (`SchemaTooNew`); an
    unreachable database does not — sift starts degraded and the probe finds it later."""
    from sift.store.postgres import redact

    pg.open()
    try:
        pg.probe()
    except pg.errors as exc:
        kind = pg.kind(exc)
        log.warning("store %s: %s; starting degraded", redact(pg.url), REASONS[kind])
        health.failed("probe", "probe", kind)
