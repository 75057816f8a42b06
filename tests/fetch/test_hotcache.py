"""The loop's hot set: bounded in bytes, least recently used out, uses written back in batches."""

from __future__ import annotations

import time

from sift.core.types import Content
from sift.service.parts import hotcache
from sift.service.parts.hotcache import HotCache
from tests.support.clock import Clock


def _doc(url: str, size: int = 1000) -> Content:
    return Content(
        url=url,
        caller_class="fleet",
        final_url=url,
        kind="html",
        content_type="text/html",
        title="t",
        text="x" * size,
        body=b"<p>raw</p>",
        hint=None,
        fallback=False,
        etag=None,
        last_modified=None,
        content_hash="h",
        fetched_at=time.time(),
    )


def test_lru_within_its_bytes_and_never_the_raw_body():
    hot = HotCache(max_bytes=13_000)
    for i in range(10):
        hot.put((f"u{i}", "fleet"), _doc(f"u{i}"))
    assert hot.get(("u0", "fleet")) is None  # the oldest went first
    kept = hot.get(("u9", "fleet"))
    assert kept is not None and kept.body is None
    assert hot.get(("u9", "restricted")) is None  # classes never share an entry
    hot.drop(("u9", "fleet"))
    assert hot.get(("u9", "fleet")) is None
    hot.put(("huge", "fleet"), _doc("huge", size=10_000))  # over an eighth of the budget
    assert hot.get(("huge", "fleet")) is None


def test_uses_are_written_back_in_batches():
    clock = Clock()
    hot = HotCache(max_bytes=1_000_000, clock=clock)
    hot.put(("a", "fleet"), _doc("a"))
    hot.get(("a", "fleet"))
    assert hot.due() == []  # not yet: less than a second and few uses
    clock.advance(hotcache.FLUSH_EVERY)
    assert hot.due() == [("a", "fleet")]
    assert hot.due() == []
