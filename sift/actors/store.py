"""StoreActor: the one SQLite connection. Every statement is a message to this thread."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Any

from sift.actors.base import SiftActor
from sift.actors.bridge import Answer
from sift.store.db import Store, connect


@dataclass(frozen=True)
class StoreCall:
    """Run `Store.<method>(*args)` on the store thread and answer its return value."""

    method: str
    args: tuple[Any, ...]
    reply: Answer | None = None


class StoreActor(SiftActor):
    def __init__(self, path: Path) -> None:
        super().__init__()
        self.path = path
        self.store: Store | None = None

    def on_start(self) -> None:
        self.path.parent.mkdir(parents=True, exist_ok=True)
        self.store = Store(connect(self.path))

    def handle_store_call(self, msg: StoreCall) -> Any:
        assert self.store is not None
        if msg.method.startswith("_") or not hasattr(self.store, msg.method):
            raise AttributeError(f"Store has no query {msg.method!r}")
        return getattr(self.store, msg.method)(*msg.args)

    def release(self) -> None:
        if self.store is not None:
            self.store.close()
            self.store = None
