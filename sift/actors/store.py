"""StoreActor: the store's connections. Every call is a message to this thread.

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
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any, Generic, TypeVar, cast

import pykka

from sift.actors.base import SiftActor
from sift.core import metrics
from sift.core.answer import Answer
from sift.core.errors import StoreUnavailable
from sift.store.backend import open_store, start_shared
from sift.store.protocol import READS, REASONS, Store

if TYPE_CHECKING:
    from sift.store.postgres import PgStore

log = logging.getLogger("sift.store")
T = TypeVar("T")


@dataclass(frozen=True)
class StoreCall(Generic[T]):
    """Run `fn(store)` on the store thread and answer its return value, e.g.
    `StoreCall(lambda s: s.content_get(url, cls), reply)`: mypy checks the call."""

    fn: Callable[[Store], T]
    reply: Answer | None = None


class _Seen:
    """The store as one call sees it, noting the query the call runs (for health, metrics)."""

    def __init__(self, store: Store) -> None:
        self._store = store
        self.method = "?"

    def __getattr__(self, name: str) -> Any:
        self.method = name
        return getattr(self._store, name)


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
    tests); health: shared with the web side; busy_timeout, probe_every: seconds; shared: the
    PostgreSQL store (`sift.store.backend.open_shared`) that every store actor uses instead."""

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
        self.store: Store | None = None
        self.shared = shared  # the PostgreSQL store, opened and closed by its owner
        self._timer: threading.Timer | None = None

    def on_start(self) -> None:
        if self.shared is not None:
            self.store = self.shared
            if self.health.kind is not None:  # started degraded: look for it again
                self._arm()
            return
        self.store = open_store(self.state, self.busy_timeout)

    def handle_store_call(self, msg: StoreCall[Any]) -> Any:
        return self._run(msg.fn)

    def handle_probe(self, msg: Probe) -> None:
        self._timer = None
        if self.health.kind is not None and self.store is not None:
            with contextlib.suppress(StoreUnavailable):
                self._run(lambda s: s.probe())

    def _run(self, fn: Callable[[Store], T]) -> T:
        assert self.store is not None
        seen = _Seen(self.store)
        started = time.perf_counter()
        try:
            result = fn(cast(Store, seen))
        except Exception as exc:
            kind = self.store.fault(exc)
            if kind is None:
                raise
            self.store.rollback()
            method = seen.method
            self.health.failed(method, _op(method), kind)
            self._arm()
            raise StoreUnavailable(kind, REASONS[kind]) from None
        finally:
            metrics.STORE_SECONDS.labels(_op(seen.method)).observe(time.perf_counter() - started)
            if self.shared is not None:
                metrics.store_pool(self.shared.pool_stats())
        self.health.succeeded(seen.method)
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


def _op(method: str) -> str:
    """The `op` label of a store call's metrics."""
    return "probe" if method == "probe" else "read" if method in READS else "write"


def start_pg(pg: PgStore, health: StoreHealth) -> None:
    """Open the shared store's pool; an unreachable database leaves sift started degraded."""
    kind = start_shared(pg)
    if kind is not None:
        health.failed("probe", "probe", kind)
