"""A least-recently-used map bounded in bytes (the caller says what an entry weighs).

Used on the event loop only: no locks.
"""

from __future__ import annotations

from collections import OrderedDict
from collections.abc import Hashable
from typing import Generic, TypeVar

V = TypeVar("V")


class SizedLRU(Generic[V]):
    def __init__(self, max_bytes: int) -> None:
        self.max_bytes = max_bytes
        self.bytes = 0
        self._entries: OrderedDict[Hashable, tuple[V, int]] = OrderedDict()

    def __len__(self) -> int:
        return len(self._entries)

    def get(self, key: Hashable) -> V | None:
        found = self._entries.get(key)
        if found is None:
            return None
        self._entries.move_to_end(key)
        return found[0]

    def put(self, key: Hashable, value: V, size: int) -> None:
        """Keep `value`, dropping the least recently used entries over the bound; a value
        over an eighth of the bound is not kept (a few huge ones must not flush the rest)."""
        self.drop(key)
        if size > self.max_bytes // 8:
            return
        self._entries[key] = (value, size)
        self.bytes += size
        while self.bytes > self.max_bytes:
            _, (_, dropped) = self._entries.popitem(last=False)
            self.bytes -= dropped

    def drop(self, key: Hashable) -> None:
        old = self._entries.pop(key, None)
        if old is not None:
            self.bytes -= old[1]
