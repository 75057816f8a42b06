"""The slice of `Services` a digest needs — store, digest and embed actors, their `roles`,
the store calls (`held`) — started on its own, so the digest can be tested without fetchers,
cleaners or HTTP."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from sift.actors.bridge import ask
from sift.actors.digest import DigestActor
from sift.actors.embed import EmbedActor, EmbedWait
from sift.actors.store import StoreActor
from sift.actors.system import System
from sift.core.config import Config, from_dict
from sift.service.answer.digest import embed_key
from sift.service.parts.held import HeldWrites
from sift.service.parts.roles import Roles


class DigestServices:
    def __init__(self, state: Path, overrides: dict[str, Any] | None = None) -> None:
        self.cfg: Config = from_dict({"state_dir": str(state), **(overrides or {})})
        self.system = System()
        self.roles = Roles(self.system)
        db = state / "sift.db"
        self.system.add("store", lambda: StoreActor.start(db), critical=True)
        self.system.add("digest", DigestActor.start, count=2)
        self.system.add("embed", lambda: EmbedActor.start(self.cfg.embed, self.roles.store()))
        self.held = HeldWrites(self.roles.store)  # the same store calls as the service's

    def __enter__(self) -> DigestServices:
        self.system.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self.system.stop()

    async def embeddings_settled(self, content_hash: str, caller_class: str) -> str:
        """Wait (bounded) until the background embedding of a document has finished."""
        key = (content_hash, caller_class, embed_key(self.cfg.embed))
        settled: str = await ask(self.roles.embed(), lambda r: EmbedWait(key, r), 60)
        return settled
