"""Runtime: what the pipeline may ask of the running service — the type of its `svc`.

The pipeline runs on the event loop and never blocks it: each call here is answered by an
actor, a CPU thread or a cache on the loop. `Services` (sift.service.services), built by the
server and the CLI, is the one object that has all of it: it composes the small parts each
call belongs to (`HeldWrites`, `Gates`, `PdfPool`, `Cpu`, `Cleaners`, `Roles`). This is an
interface, so the pipeline depends on no part, and `Services`, which runs batch targets
through the pipeline, can stand above it.
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable
from contextlib import AbstractAsyncContextManager
from pathlib import Path
from typing import Any, Protocol, TypeVar

from sift.actors.fetch import FetchResult
from sift.actors.store import StoreHealth
from sift.browser.engine import Engine
from sift.clean.protocol import CleanResult, CleanTask
from sift.core.config import Config
from sift.core.lru import SizedLRU
from sift.documents.ocr.runner import OcrAsk, OcrResult
from sift.documents.pdf.runner import Extraction, Progress
from sift.fetch.guard import Guard
from sift.fetch.headers import Headers
from sift.service.parts.flights import Flights
from sift.service.parts.gates import GateTicket
from sift.service.parts.hotcache import HotCache
from sift.service.parts.pdf_pool import Readings
from sift.service.parts.ready import ReadyAnswers
from sift.service.parts.robots_txt import RobotsTxt
from sift.service.parts.roles import Roles
from sift.store.protocol import Store

__all__ = ["GateTicket", "Runtime"]

T = TypeVar("T")


class Runtime(Protocol):
    cfg: Config
    guard: Guard  # every address a fetch or a render connects to
    browser: Engine  # renders on the loop; its proxy checks every request with the guard
    roles: Roles  # the actors, for the calls no method here makes (digests)
    store_health: StoreHealth
    # Concurrent requests for one document share one fetch; `[gates] flights` at once.
    flights: Flights
    hot: HotCache  # the content cache's hot set
    answers: ReadyAnswers  # encoded answers of hot pages, by request body
    clock: Callable[[], float]  # the wall clock a cached copy's age is read on (tests move it)
    sections: SizedLRU[Any]  # sift.service.answer.render
    renders: SizedLRU[Any]
    progress: Readings  # the PDF extractions running now: a request out of time reads them
    robots: RobotsTxt  # robots.txt per site, for usage, `[fetch] robots`, map and crawl
    ocr_jobs: dict[tuple[str, str], asyncio.Task[Any]]  # background OCR (sift.service.steps.ocr)
    ocr_lock: asyncio.Lock

    async def compute(
        self, fn: Callable[..., T], *args: Any, cost: int | None = None, **kwargs: Any
    ) -> T:
        """`fn(*args, **kwargs)` off the loop (`Cpu.compute`)."""

    async def store(self, fn: Callable[[Store], T]) -> T:
        """`fn(store)` on the store's thread, after the held writes (`HeldWrites`)."""

    async def cache_or(self, default: T, fn: Callable[[Store], T]) -> T:
        """`store(fn)`, or `default` while the store is degraded."""

    def store_later(self, fn: Callable[[Store], T], then: Callable[[T], None]) -> None:
        """A store write held until the answer is out."""

    def store_tell(self, fn: Callable[[Store], object]) -> None:
        """A store write nobody waits for, after the held writes."""

    def after_answer(self, fn: Callable[[], None]) -> None:
        """Work held until the answer is out."""

    async def fetch(
        self,
        url: str,
        etag: str | None = None,
        last_modified: str | None = None,
        headers: Headers = (),
    ) -> FetchResult:
        """One upstream fetch on a FetchActor."""

    async def clean(self, task: CleanTask) -> CleanResult:
        """Clean in a worker process (`Cleaners.clean`)."""

    async def spool(self, body: bytes) -> bytes | Path:
        """`body` as the PDF pool takes it (`PdfPool.spool`)."""

    async def extract(
        self,
        key: tuple[str, str],
        caller: str,
        pdf: bytes | Path,
        progress: Progress | None = None,
        office: str | None = None,
        ocr: bool = False,
    ) -> Extraction:
        """Extract a PDF (or convert an `office` file) under the pool (`PdfPool.extract`)."""

    async def ocr(
        self, key: tuple[str, str], caller: str, source: bytes | Path, ask: OcrAsk
    ) -> OcrResult:
        """OCR pages under the pool (`PdfPool.ocr`)."""

    def gate_ask(self, host: str, caller: str) -> GateTicket:
        """Ask for a fetch slot now, wait for it later (`Gates.gate_ask`)."""

    def gate(
        self, host: str, caller: str, ticket: GateTicket | None = None
    ) -> AbstractAsyncContextManager[None]:
        """Hold a fetch slot for an `async with` (`Gates.gate`)."""
