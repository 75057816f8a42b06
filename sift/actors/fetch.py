"""FetchActor: owns one Fetcher (a CurlMulti and its handles) and pumps it between messages.

The actor cannot wait on curl's sockets and its inbox at once, so while transfers are active
it tells itself `Pump`: each one waits at most `PUMP_WAIT` for curl or the DNS pool, does what
is ready and tells the next. Other messages queue behind one pump step, so a Ping or a new
fetch mid-flight is answered within milliseconds.
"""

from __future__ import annotations

from dataclasses import dataclass

from sift.actors.base import DEFERRED, SiftActor
from sift.core.answer import Answer
from sift.core.config import FetchConfig
from sift.core.errors import Unavailable
from sift.fetch.fetcher import Fetcher
from sift.fetch.guard import Guard
from sift.fetch.headers import Headers
from sift.fetch.identity import Signer
from sift.fetch.transfer import FetchResult

__all__ = ["FetchActor", "FetchRequest", "FetchResult", "FetchStats", "Pump"]

PUMP_WAIT = 0.02


@dataclass(frozen=True)
class FetchRequest:
    """Fetch `url`; `reply` gets a FetchResult (any upstream status) or fails with a SiftError.

    `etag`/`last_modified` are sent as If-None-Match / If-Modified-Since (a 304 is a result).
    `timeout` (seconds) only lowers the configured deadlines. `headers` are the caller's own
    (checked by `sift.fetch.headers`), sent on the first hop and as its redirect rule allows.
    """

    url: str
    reply: Answer
    etag: str | None = None
    last_modified: str | None = None
    timeout: float | None = None
    headers: Headers = ()

    def __repr__(self) -> str:  # a message in a log or a traceback never shows the headers
        return f"FetchRequest(url={self.url!r}, headers={len(self.headers)})"


@dataclass(frozen=True)
class FetchStats:
    """Answered with {"active": n, "queued": n, "resolving": n}."""

    reply: Answer


@dataclass(frozen=True)
class Pump:
    """Internal: one step of the curl pump (the actor tells it to itself)."""


class FetchActor(SiftActor):
    def __init__(self, cfg: FetchConfig, guard: Guard, signer: Signer | None = None) -> None:
        super().__init__()
        self.cfg = cfg
        self.guard = guard
        self.signer = signer  # sift's identity: every hop signed (fetch/identity.py)
        self.fetcher: Fetcher | None = None
        self._pumping = False

    def on_start(self) -> None:
        self.fetcher = Fetcher(self.cfg, self.guard, signer=self.signer)

    def handle_fetch_request(self, msg: FetchRequest) -> object:
        assert self.fetcher is not None
        self.fetcher.submit(
            msg.url,
            msg.reply,
            etag=msg.etag,
            last_modified=msg.last_modified,
            timeout=msg.timeout,
            headers=msg.headers,
        )
        self._pump_soon()
        return DEFERRED

    def handle_fetch_stats(self, msg: FetchStats) -> dict[str, int]:
        assert self.fetcher is not None
        return self.fetcher.stats()

    def handle_pump(self, msg: Pump) -> None:
        self._pumping = False
        if self.fetcher is None:  # released: a pump left in the inbox
            return
        self.fetcher.step(PUMP_WAIT)
        if self.fetcher.busy:
            self._pump_soon()

    def _pump_soon(self) -> None:
        if not self._pumping and self.fetcher is not None and self.fetcher.busy:
            self._pumping = True
            self.actor_ref.tell(Pump())

    def release(self) -> None:
        if self.fetcher is not None:
            self.fetcher.close(Unavailable("fetcher stopped", hint="retry"))
            self.fetcher = None
