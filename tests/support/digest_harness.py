"""The slice of `Services` a digest needs — store, digest and embed actors, `ask`, `store`,
`cache_or` — started on its own, so the digest can be tested without fetchers, cleaners or
HTTP."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any

import pykka

from sift.actors.bridge import Reply
from sift.actors.digest import DigestActor
from sift.actors.embed import EmbedActor, EmbedWait
from sift.actors.store import StoreActor, StoreCall
from sift.actors.system import System
from sift.core.answer import Answer
from sift.core.config import Config, from_dict
from sift.service.digest import embed_key
from sift.service.services import Services
from sift.store.protocol import Store


class DigestServices:
    def __init__(self, state: Path, overrides: dict[str, Any] | None = None) -> None:
        self.cfg: Config = from_dict({"state_dir": str(state), **(overrides or {})})
        self.system = System()
        db = state / "sift.db"
        self.system.add("store", lambda: StoreActor.start(db), critical=True)
        self.system.add("digest", DigestActor.start, count=2)
        self.system.add(
            "embed", lambda: EmbedActor.start(self.cfg.embed, self.system.pick("store"))
        )

    def __enter__(self) -> DigestServices:
        self.system.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self.system.stop()

    async def ask(self, ref: pykka.ActorRef[Any], build: Callable[[Answer], Any], timeout: float):
        reply: Reply[Any] = Reply()
        ref.tell(build(reply))
        return await reply.wait(timeout)

    async def store(self, fn: Callable[[Store], Any]) -> Any:
        return await self.ask(self.system.pick("store"), lambda r: StoreCall(fn, r), 30)

    cache_or = Services.cache_or  # the same degrade-to-no-cache rule, on this `store`

    async def embeddings_settled(self, content_hash: str, caller_class: str) -> str:
        """Wait (bounded) until the background embedding of a document has finished."""
        key = (content_hash, caller_class, embed_key(self.cfg.embed))
        return await self.ask(self.system.pick("embed"), lambda r: EmbedWait(key, r), 60)
