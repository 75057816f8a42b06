"""The backend that holds sift's state, chosen by `[store] url`.

`sqlite:` (the default): two files in the state directory; each store actor opens its own
connections on its thread (`open_store`), and `prepare` runs before any actor starts.
`postgresql://…`: one database shared by several replicas; one pool (`open_shared`, opened by
`start_shared`) serves every store actor of this replica.
"""

from __future__ import annotations

import logging
import uuid
from pathlib import Path
from typing import TYPE_CHECKING

from sift.store.protocol import REASONS
from sift.store.sqlite.store import open_store, prepare

if TYPE_CHECKING:
    from sift.store.postgres import PgStore

__all__ = ["open_shared", "open_store", "prepare", "start_shared"]

log = logging.getLogger("sift.store")


def open_shared(
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


def start_shared(pg: PgStore) -> str | None:
    """Open the pool and check the schema: a newer one stops start-up (`SchemaTooNew`). An
    unreachable database does not: its kind (a key of `REASONS`) is returned, and sift starts
    degraded until the probe finds it."""
    from sift.store.postgres import redact

    pg.open()
    try:
        pg.probe()
    except Exception as exc:
        kind = pg.fault(exc)
        if kind is None:
            raise
        log.warning("store %s: %s; starting degraded", redact(pg.url), REASONS[kind])
        return kind
    return None
