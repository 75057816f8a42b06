"""Runtime: what one fetch's steps may reach of the running service — the type of their `svc`.

The steps run on the event loop and never block it: each part here answers by an actor, a CPU
thread or a cache on the loop. `Services` (sift.service.services), built by the server and the
CLI, composes these parts and is the one object that has all of them. The steps name it by
this interface, so they import parts, never `services.py`, which runs batch targets through
the pipeline and so stands above it. A call reaches its part (`svc.held.store(…)`,
`svc.upstream.fetch(…)`), so going to its definition lands on the code.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, Protocol

from sift.actors.store import StoreHealth
from sift.browser.engine import Engine
from sift.core.config import Config
from sift.core.lru import SizedLRU
from sift.fetch.guard import Guard
from sift.service.parts.cleaners import Cleaners
from sift.service.parts.cpu import Cpu
from sift.service.parts.flights import Flights
from sift.service.parts.gates import Gates
from sift.service.parts.held import HeldWrites
from sift.service.parts.hotcache import HotCache
from sift.service.parts.pdf_pool import PdfPool
from sift.service.parts.readings import Readings
from sift.service.parts.ready import ReadyAnswers
from sift.service.parts.robots_txt import RobotsTxt
from sift.service.parts.roles import Roles
from sift.service.parts.upstream import Upstream

__all__ = ["Runtime"]


class Runtime(Protocol):
    cfg: Config
    guard: Guard  # every address a fetch or a render connects to
    browser: Engine  # renders on the loop; its proxy checks every request with the guard
    roles: Roles  # the actors, for the calls no part makes (digests)
    store_health: StoreHealth
    # Concurrent requests for one document share one fetch; `[gates] flights` at once.
    flights: Flights
    hot: HotCache  # the content cache's hot set
    answers: ReadyAnswers  # encoded answers of hot pages, by request body
    clock: Callable[[], float]  # the wall clock a cached copy's age is read on (tests move it)
    sections: SizedLRU[Any]  # sift.service.answer.render
    renders: SizedLRU[Any]
    robots: RobotsTxt  # robots.txt per site, for usage, `[fetch] robots`, map and crawl
    # The parts, each with one job.
    cpu: Cpu  # work off the loop
    held: HeldWrites  # the store, and the writes and work held until the answer is out
    gates: Gates  # fetch slots (a render's too)
    upstream: Upstream  # every fetch of a caller's URL: guard, gate, fetch actor
    cleaners: Cleaners  # cleaning in the worker processes
    pdfs: PdfPool  # extraction and OCR under the PDF pool
    readings: Readings  # the PDF extractions running now: a request out of time reads them
