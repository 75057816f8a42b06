"""robots.txt per site, as fetches, map and crawl read it: fetched through the guard, the
gates and the fetch actor like any URL, kept in memory per site (scheme, host, port) for an
hour, one fetch shared by every concurrent reader. Not a document: never in the content
cache. A robots.txt that is missing (4xx) allows everything; one that cannot be read (a 5xx,
a failure, busy gates, slower than `WAIT`) is unknown: None, and asked again next time."""

from __future__ import annotations

import asyncio
import time
import urllib.parse
from collections import OrderedDict
from collections.abc import Awaitable, Callable

from sift.core.errors import SiftError
from sift.fetch.robots import Robots
from sift.fetch.transfer import FetchResult

Read = Callable[[str], Awaitable[FetchResult]]  # a guarded, gated fetch of one URL

TTL = 3600.0
SITES = 4096  # sites remembered; the least recently used go first
WAIT = 5.0  # seconds a fetch waits for a site's robots.txt (the read goes on, for the next)


def site_of(url: str) -> str:
    parts = urllib.parse.urlsplit(url)
    return f"{parts.scheme}://{parts.netloc}"


class RobotsTxt:
    def __init__(self, clock: Callable[[], float] = time.monotonic) -> None:
        self._clock = clock
        self._known: OrderedDict[str, tuple[Robots, float]] = OrderedDict()
        self._reading: dict[str, asyncio.Task[Robots | None]] = {}

    async def rules(self, url: str, read: Read) -> Robots | None:
        """The rules of `url`'s site, or None when its robots.txt cannot be read now; `read`
        fetches it when it is not known."""
        site = site_of(url)
        known = self._known.get(site)
        if known is not None and self._clock() < known[1]:
            self._known.move_to_end(site)
            return known[0]
        task = self._reading.get(site)
        if task is None:
            task = asyncio.get_running_loop().create_task(self._read(read, site))
            self._reading[site] = task
            task.add_done_callback(lambda _: self._reading.pop(site, None))
        try:
            return await asyncio.wait_for(asyncio.shield(task), WAIT)
        except TimeoutError:
            return None

    async def _read(self, read: Read, site: str) -> Robots | None:
        try:
            res = await read(f"{site}/robots.txt")
        except SiftError:
            return None
        if res.status >= 500 or res.status < 200:
            return None
        found = Robots(res.body.decode("utf-8", "replace") if res.status < 300 else "")
        self._known[site] = (found, self._clock() + TTL)
        while len(self._known) > SITES:
            self._known.popitem(last=False)
        return found

    async def cancel_all(self) -> None:
        """At shutdown: stop the reads in flight (nobody will use them)."""
        reading = list(self._reading.values())
        for task in reading:
            task.cancel()
        await asyncio.gather(*reading, return_exceptions=True)
