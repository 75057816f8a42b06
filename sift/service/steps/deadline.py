"""A request held to its own deadline: it waits for its work until then, and out of time
answers what is ready (the pages extracted so far of a PDF in extraction) or `OutOfTime`.
`pipeline.within` holds a fetch to it, `local_run.parse_within` an upload."""

from __future__ import annotations

import asyncio
import time
from typing import Any

import msgspec

from sift.clean.data import jq_out_of_time_waiting, jq_over_time
from sift.core.errors import BadRequest, ClientGone, OutOfTime
from sift.core.request import FetchParams
from sift.documents.pages import PagedText
from sift.documents.pdf.runner import Extraction, Progress
from sift.service.answer.render import render
from sift.service.document import Document, Result, Trace
from sift.service.parts.asker import Asker
from sift.service.parts.flights import Waiter
from sift.service.parts.runtime import Runtime


async def held(
    work: asyncio.Future[Any],
    waiter: Waiter,
    budget: float,
    gone: asyncio.Future[None] | None,
    trace: Trace,
    asker: Asker | None = None,
) -> bool:
    """Wait `budget` seconds for `work`: True when it is done; False out of time (shared work
    goes on when `waiter` keeps it, and the request answers what is ready).

    Raises:
        ClientGone: the client went away first.
        Unprocessable: the request's jq program was still running, or waiting for a worker,
            at the deadline.
    """
    waits: list[asyncio.Future[Any]] = [work] if gone is None else [work, gone]
    try:
        done, _ = await asyncio.wait(waits, timeout=budget, return_when=asyncio.FIRST_COMPLETED)
    except asyncio.CancelledError:
        work.cancel()  # this request is being cancelled (shutdown); shared work is kept
        raise
    # The bound of the jq program running at the deadline; whether one waits for a worker.
    jq, jq_waiting = (asker.jq, asker.jq_waiting) if asker is not None else (None, False)
    if work not in done:
        waiter.gone = gone is not None and gone.done()
        work.cancel()
        await asyncio.wait([work])
    if not work.cancelled():
        return True
    if waiter.gone:
        trace.outcome = "gone"
        raise ClientGone()
    if jq is not None:  # its worker stops it now too: the answer is the worker's own 422
        raise jq_over_time(jq)
    if jq_waiting:  # it never ran: a retry would wait as long again
        raise jq_out_of_time_waiting()
    trace.outcome = "pending"
    return False


def _snapshot(progress: Progress) -> tuple[Extraction, PagedText] | None:
    """The pages a running extraction has so far, as a document (a CPU thread's work)."""
    ex = progress.snapshot()
    return (ex, ex.document()) if ex is not None else None


async def so_far(
    svc: Runtime, key: tuple[str, str], p: FetchParams, budget: float, goes_on: bool
) -> Result:
    """The answer of a request out of time: the pages extracted so far of the document in
    extraction under `key` (`svc.readings`), else `OutOfTime` (saying whether the work goes
    on)."""
    late = OutOfTime(budget, goes_on)
    reading = svc.readings.get(key)
    snap = await svc.cpu.compute(_snapshot, reading.progress) if reading else None
    if reading is None or snap is None:
        raise late
    ex, pages = snap
    face = msgspec.structs.replace(
        reading.face,
        title=ex.meta.title,
        fetched_at=time.time(),
        content_hash=f"partial:{ex.extracted}:{p.url}",
    )
    note = f"pages 1–{ex.extracted} of {ex.meta.pages} are ready; {late.message}"
    doc = Document(face, warning=note, pages=pages)
    if p.effective_mode == "digest":  # no model call past the deadline: the map instead
        p = msgspec.structs.replace(p, mode="clean", question=None)
    try:
        return Result(doc, await render(svc, p, doc))
    except BadRequest:  # the pages asked for are not extracted yet
        raise late from None
