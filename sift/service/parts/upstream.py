"""Every request sift sends upstream for a caller: the guard on the URL, a slot of the fetch
gates (global, host, caller), then a FetchActor (which guards every hop again).

Pages, their site markdown, robots.txt, llms.txt, sitemaps: each fetch goes through here, and
the FetchActor's message is sent from nowhere else (`tests/test_layers.py` shows a fetch
written around this part fails `lint-imports`), so a fetch without a slot cannot be written
by accident. The one fetch in no slot of its own is named for it: `beside`.
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable
from typing import Any

import pykka

from sift.actors.bridge import ask
from sift.actors.fetch import FetchRequest
from sift.fetch.guard import Guard
from sift.fetch.headers import Headers
from sift.fetch.transfer import FetchResult
from sift.service.parts.gates import Gates, GateTicket

# Beyond the longest a transfer may take (`[fetch] pdf_timeout`), the fetch actor answers late
# only when it is stuck: then the request fails rather than hangs.
ANSWER_GRACE = 10.0


class Upstream:
    def __init__(
        self,
        guard: Guard,
        gates: Gates,
        fetcher: Callable[[], pykka.ActorRef[Any]],
        longest: float,
    ) -> None:
        self._guard = guard
        self._gates = gates
        self._fetcher = fetcher  # a FetchActor, picked per fetch
        self._deadline = longest + ANSWER_GRACE

    async def fetch(
        self,
        caller: str,
        url: str,
        *,
        ticket: GateTicket | None = None,
        etag: str | None = None,
        last_modified: str | None = None,
        headers: Headers = (),
        within: float | None = None,
    ) -> FetchResult:
        """`url` fetched in a slot of the gates for `caller`: the `ticket` asked for ahead
        (while the cache was read), or one asked for now. `etag`/`last_modified` are the
        cached copy's validators (an unchanged page answers 304); `headers` the caller's
        own, checked; `within` holds the fetch alone (not the wait for a slot) to that many
        seconds.

        Raises:
            Blocked, BadRequest: the guard refuses the URL.
            Busy: no slot within the gate wait (429).
            TimeoutError: the fetch took over `within`.
            UpstreamError, UpstreamTimeout, TooLarge: as the fetch actor answers.
        """
        target = self._guard.precheck(url)
        async with self._gates.gate(target.host, caller, ticket):
            sent = self._send(url, etag, last_modified, headers)
            return await (sent if within is None else asyncio.wait_for(sent, within))

    async def beside(self, url: str) -> FetchResult:
        """`url` fetched beside a fetch that holds its slot already (a page's robots.txt): one
        small file a site an hour, which must neither wait behind the page's own slot nor
        turn its caller away as busy. The guard still checks it."""
        self._guard.precheck(url)
        return await self._send(url)

    async def _send(
        self,
        url: str,
        etag: str | None = None,
        last_modified: str | None = None,
        headers: Headers = (),
    ) -> FetchResult:
        result: FetchResult = await ask(
            self._fetcher(),
            lambda r: FetchRequest(url, r, etag, last_modified, headers=headers),
            self._deadline,
        )
        return result
