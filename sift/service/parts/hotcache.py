"""The hot set of the content cache, in memory on the event loop.

A cached answer otherwise costs a round trip to the StoreActor's thread; for the pages a fleet
asks for again and again, that hop is most of the request. This keeps recently used documents
(their clean text, never the raw body) in an LRU bounded in bytes. SQLite stays the truth: every
put and refresh goes there too (a put right after the answer, before any later store call),
evictions there drop entries here, and uses seen here are
written back in batches so the store's least-recently-used order stays right.
Used on the event loop only: no locks.
"""

from __future__ import annotations

import time
from collections.abc import Callable

import msgspec

from sift.core.lru import SizedLRU
from sift.core.types import Content

Key = tuple[str, str]  # (url, caller class): classes never share an entry
FLUSH_EVERY = 1.0  # seconds between write-backs of uses
FLUSH_AT = 256  # …or this many uses, whichever comes first


class HotCache:
    def __init__(self, max_bytes: int, clock: Callable[[], float] = time.monotonic) -> None:
        self._lru: SizedLRU[Content] = SizedLRU(max_bytes)
        self._used: set[Key] = set()
        self._clock = clock
        self._flushed = clock()

    def get(self, key: Key) -> Content | None:
        found = self._lru.get(key)
        if found is not None:
            self._used.add(key)
        return found

    def put(self, key: Key, content: Content) -> None:
        """Remember a document as the store now holds it (without its raw body)."""
        if content.body is not None:
            content = msgspec.structs.replace(content, body=None)
        self._lru.put(key, content, len(content.text) + len(content.title) + 512)

    def drop(self, key: Key) -> None:
        self._lru.drop(key)

    def due(self) -> list[Key]:
        """The uses to write back now (and forget), or [] when it is not yet time."""
        now = self._clock()
        if not self._used or (len(self._used) < FLUSH_AT and now - self._flushed < FLUSH_EVERY):
            return []
        self._flushed = now
        used, self._used = list(self._used), set()
        return used
