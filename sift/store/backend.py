"""The backend that holds sift's state: the one place where a second one (PostgreSQL) is
chosen. `open_store` runs on the StoreActor's thread; `prepare` before any actor starts."""

from __future__ import annotations

from sift.store.sqlite import open_store, prepare

__all__ = ["open_store", "prepare"]
