"""The asking side of the PDF pool (sift.actors.pool): a slot, or a share of the same
document's job; the job led on the slot's ExtractWorker.

The job runs as its own task (its context is not the caller's), so a leader that is cancelled
still tells the pool `Done`. A cancelled leader tells `LeaderGone`: with no follower either,
the pool stops the job (`progress.cancel()` kills its children) and the slot frees at once
instead of at the extraction's deadline.
"""

from __future__ import annotations

import asyncio
import contextlib
import time
from collections.abc import Awaitable, Callable
from functools import partial
from pathlib import Path
from typing import Any

import pykka

from sift.actors.bridge import ask
from sift.actors.extract import ExtractRequest, OcrRequest, Refill
from sift.actors.pool import Admit, Done, Lead, LeaderGone, Leave
from sift.core import metrics
from sift.core.config import PdfConfig
from sift.core.errors import Unavailable
from sift.documents.ocr.runner import OcrAsk, OcrResult
from sift.documents.pdf import spool
from sift.documents.pdf.runner import Extraction, Progress
from sift.service.parts.roles import Roles


class PdfPool:
    """Extractions under the pool, for the requests of one event loop."""

    def __init__(
        self,
        cfg: PdfConfig,
        roles: Roles,
        spool_dir: Path,
        write: Callable[..., Awaitable[Any]],
        after_answer: Callable[[Callable[[], None]], None],
    ) -> None:
        self.cfg = cfg
        self._roles = roles
        self.spool_dir = spool_dir  # PDF bodies waiting for the pool
        self._write = write  # `compute`: the spool file is written on a CPU thread
        self._after_answer = after_answer
        self.jobs: set[asyncio.Task[Any]] = set()  # led jobs nobody may await
        # Background OCR of a document's image-only pages (sift.service.steps.ocr), by (caller
        # class, content hash): one a document, each a few pool jobs at a time.
        self.ocr_jobs: dict[tuple[str, str], asyncio.Task[Any]] = {}
        self.ocr_lock = asyncio.Lock()  # OCR text merged into the page cache one job at a time

    async def spool(self, body: bytes) -> bytes | Path:
        """`body` as the PDF pool takes it: in memory when small, else in a file (written on
        a CPU thread) that the caller removes with `spool.remove` when its job ends."""
        if len(body) <= self.cfg.spool_over:
            return body
        path: Path = await self._write(spool.write, self.spool_dir, body)
        return path

    async def extract(
        self,
        key: tuple[str, str],
        caller: str,
        pdf: bytes | Path,
        progress: Progress | None = None,
        office: str | None = None,
        ocr: bool = False,
    ) -> Extraction:
        """Extract a PDF (or convert an `office` file of that format) under the pool: a slot
        (or a share of the same document's job), then the slot's ExtractWorker. Busy pools
        answer 503/429 (sift.actors.pool). With `ocr`, image-only pages are marked for OCR
        instead of a 422."""
        run = progress or Progress()
        request = partial(ExtractRequest, progress=run, office=office, ocr=ocr)
        result: Extraction = await self._pooled(key, caller, pdf, run, request)
        return result

    async def ocr(
        self, key: tuple[str, str], caller: str, source: bytes | Path, ask: OcrAsk
    ) -> OcrResult:
        """OCR pages under the pool, as `extract` runs (a slot, or a share of the same job)."""
        request = partial(OcrRequest, ask=ask)
        result: OcrResult = await self._pooled(key, caller, source, Progress(), request)
        return result

    async def _pooled(
        self,
        key: tuple[str, str],
        caller: str,
        pdf: bytes | Path,
        progress: Progress,
        request: Callable[[bytes | Path, Any], object],
    ) -> Any:
        """A job under the pool: `request(source, reply)` is the message its worker answers."""
        pool = self._roles.pool()
        sent: list[Admit] = []

        def admit(reply: Any) -> Admit:
            sent.append(Admit(key, caller, reply, stop=progress.cancel))
            return sent[0]

        asked = time.monotonic()
        try:
            answer = await ask(pool, admit, self.cfg.wait + self.cfg.longest * 2 + 10)
        except BaseException:
            with contextlib.suppress(pykka.ActorDeadError):
                pool.tell(Leave(sent[0].token))
            raise
        metrics.PDF_POOL_WAIT.observe(time.monotonic() - asked)
        if not isinstance(answer, Lead):
            return answer  # the shared job's outcome
        try:  # the job's own name for a spooled body: the job may outlive this request
            held = spool.hold(pdf)
        except OSError as exc:
            failed = Unavailable(
                "pdf extraction could not start (its spooled body is gone)",
                hint="retry",
                retry_after=2,
            )
            pool.tell(Done(answer.ticket, error=failed))
            raise failed from exc
        job = asyncio.ensure_future(self._lead(pool, answer, held, request))
        self.jobs.add(job)
        job.add_done_callback(self._job_over)
        try:
            return await asyncio.shield(job)
        except asyncio.CancelledError:
            if not job.done():
                with contextlib.suppress(pykka.ActorDeadError):
                    pool.tell(LeaderGone(answer.ticket))
            raise

    def _job_over(self, job: asyncio.Task[Any]) -> None:
        self.jobs.discard(job)
        if not job.cancelled():
            job.exception()  # retrieved: its leader may have gone

    async def _lead(
        self,
        pool: pykka.ActorRef[Any],
        lead: Lead,
        pdf: bytes | Path,
        request: Callable[[bytes | Path, Any], object],
    ) -> Any:
        """The leader's job: run on the slot's worker, then tell the pool `Done`."""
        worker = self._roles.extractors()[lead.slot % self.cfg.slots]
        try:
            result = await ask(worker, lambda r: request(pdf, r), self.cfg.longest + 15)
        except BaseException as exc:
            with contextlib.suppress(pykka.ActorDeadError):  # the pool stopped first
                pool.tell(Done(lead.ticket, error=exc))
            raise
        finally:
            spool.remove(pdf)
            self._after_answer(lambda: _refill(worker))  # its spares were used
        pool.tell(Done(lead.ticket, value=result))
        return result


def _refill(worker: pykka.ActorRef[Any]) -> None:
    """Tell an ExtractWorker to start its spares again (none at shutdown)."""
    with contextlib.suppress(pykka.ActorDeadError):
        worker.tell(Refill())
