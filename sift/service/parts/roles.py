"""The actor roles of the running service, and a typed way to reach each.

A role is one or more actors of one kind, supervised by the `System`; callers ask `Roles` for
"the store" or "the PDF pool" by method, never by a role's name, so a renamed or missing role
is a type error, not a `KeyError` at the first request.
"""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING, Any

import pykka

from sift.actors.clean import CleanActor
from sift.actors.digest import DigestActor
from sift.actors.embed import EmbedActor
from sift.actors.extract import ExtractWorker
from sift.actors.fetch import FetchActor
from sift.actors.pool import PoolActor
from sift.actors.store import StoreActor, StoreHealth
from sift.actors.system import System
from sift.core import metrics
from sift.core.config import Config
from sift.fetch.guard import Guard
from sift.fetch.identity import Signer

if TYPE_CHECKING:
    from sift.store.postgres import PgStore

Ref = pykka.ActorRef[Any]


class Roles:
    """The actors of each role: one picked round robin, or the role's live list (a list the
    supervisor updates in place when it restarts one)."""

    def __init__(self, system: System) -> None:
        self.system = system

    def store(self) -> Ref:
        return self.system.pick("store")

    def fetcher(self) -> Ref:
        return self.system.pick("fetch")

    def pool(self) -> Ref:
        return self.system.pick("pool")

    def embed(self) -> Ref:
        return self.system.pick("embed")

    def batch(self) -> Ref:
        return self.system.pick("batch")

    def cleaners(self) -> list[Ref]:
        return self.system.refs("clean")

    def extractors(self) -> list[Ref]:
        """One ExtractWorker per PDF pool slot, in slot order."""
        return self.system.refs("extract")

    def digesters(self) -> list[Ref]:
        return self.system.refs("digest")

    def batch_workers(self) -> list[Ref]:
        return self.system.refs("batch_worker")


def add_roles(
    roles: Roles,
    cfg: Config,
    guard: Guard,
    health: StoreHealth,
    pg: PgStore | None,
    signer: Signer | None = None,
) -> None:
    """Add the roles a request's work runs on, in the order they start (and stop reversed).

    The store answers database errors as 503s and says so in `health`; only a bug kills it,
    and then it is restarted like any other role (a restart opens the files anew), so one
    fault never becomes a crash loop of the whole process."""
    system, st, state = roles.system, cfg.store, Path(cfg.state_path)
    system.add(
        "store",
        lambda: StoreActor.start(state, health, st.busy_timeout, st.probe_every, shared=pg),
        count=st.pool if pg else 1,
    )
    system.add("fetch", lambda: FetchActor.start(cfg.fetch, guard, signer), count=cfg.fetch.actors)
    system.add(
        "clean",
        lambda: CleanActor.start(cfg.clean, on_restart=metrics.clean_restart),
        count=cfg.clean.workers,
    )
    pdf = cfg.pdf
    system.add(
        "pool",
        lambda: PoolActor.start(pdf.slots, pdf.queue, pdf.wait, pdf.longest * 3),
        critical=True,
    )
    system.add("extract", lambda: ExtractWorker.start(pdf), count=pdf.slots)
    # Digests (sift/digest): indexing and ranking; chunk embeddings in the background.
    system.add("digest", DigestActor.start, count=2)
    system.add("embed", lambda: EmbedActor.start(cfg.embed, roles.store()))
