"""Ready answers: the encoded answer (`/v1/fetch`, Firecrawl scrape) of a fresh cached page,
kept by route and request body.

An agent fleet asks for the same pages again and again; for a page in the hot set, parsing
the request, rendering the answer and encoding its JSON are then most of the work, and give
the same bytes each time. This keeps those bytes, keyed by the caller's class and the
request's exact body, for as long as they are still the answer: while the hot set holds the
very document they were made from, and the document is fresh for that request (`max_age`).
A refetch, an eviction or the TTL makes the entry a miss, and the full path answers (and
keeps the new bytes). Only plain answers are kept: no question, no browser, no private
request (`memoizable`). Used on the event loop only: no locks.
"""

from __future__ import annotations

import gzip
from dataclasses import dataclass, field

from sift.core.lru import SizedLRU
from sift.core.request import FetchParams
from sift.core.types import Content
from sift.service.document import Document, Trace
from sift.service.parts.hotcache import HotCache, Key

# gzip as Tornado's `compress_response` writes it, so both paths answer alike
GZIP_LEVEL = 6
GZIP_MIN = 1024


@dataclass
class Ready:
    data: bytes
    source: Content  # the hot set's document these bytes were made from
    hot_key: Key
    expires: float  # on the service clock: the document is no longer fresh for the request
    host: str
    gzipped: bytes | None = field(default=None)

    def gzip(self) -> bytes:
        """The answer gzipped (made on first use), as Tornado's transform would."""
        if self.gzipped is None:
            self.gzipped = gzip.compress(self.data, GZIP_LEVEL)
        return self.gzipped


def memoizable(p: FetchParams, doc: Document, trace: Trace) -> bool:
    """An answer that is a pure function of the request's body and a hot, fresh document."""
    return (
        trace.cache == "hit"
        and doc.cached
        and not doc.stale
        and not doc.rendered
        and doc.pages is None
        and not p.private
        and not p.question
        and not p.must_render
        and p.effective_mode in ("clean", "raw")
    )


class ReadyAnswers:
    def __init__(self, max_bytes: int) -> None:
        self._lru: SizedLRU[Ready] = SizedLRU(max_bytes)

    def put(self, route: str, cls: str, body: bytes, ready: Ready) -> None:
        self._lru.put((route, cls, body), ready, len(ready.data) + len(body) + 256)

    def get(self, route: str, cls: str, body: bytes, hot: HotCache, now: float) -> Ready | None:
        """The ready answer when it still is the answer; a use of the hot set's document."""
        if not len(self._lru):
            return None
        key = (route, cls, body)
        ready = self._lru.get(key)
        if ready is None:
            return None
        if now >= ready.expires or hot.get(ready.hot_key) is not ready.source:
            self._lru.drop(key)
            return None
        return ready

    def __len__(self) -> int:
        return len(self._lru)


def expiry(c: Content, ttl: float, max_age: float | None) -> float:
    """When `c` stops being fresh for a request with `max_age` (as `recall.fresh` decides)."""
    if max_age is not None:
        ttl = min(ttl, max_age)
    return c.fetched_at + ttl
