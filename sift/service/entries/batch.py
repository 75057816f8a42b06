"""Batch on the façade's side: one target (a /v1/fetch body, or a Firecrawl scrape or extract
target) run through the one pipeline, under the caller's batch name and a target's deadline.
The typed batch operations the web side calls are `Services.batch_*`."""

from __future__ import annotations

import time
from dataclasses import replace

import msgspec

from sift.batch.scheduler import Attempt, from_error
from sift.core.callers import Caller
from sift.core.config import Config
from sift.core.errors import SiftError
from sift.core.request import ExtractTarget, FetchParams, ScrapeTarget
from sift.core.types import TargetOutcome
from sift.service.document import Trace
from sift.service.firecrawl import extract, scrape
from sift.service.parts.runtime import Runtime
from sift.service.steps import pipeline


def target_deadline(cfg: Config) -> float:
    """A target's budget in `pipeline.within` (as `request_deadline` is a request's): a PDF's
    fetch, its extraction, a margin (210 s with the defaults). Out of time, a long PDF's
    target is done with the pages extracted so far and a `warning`; else failed with 504."""
    return cfg.fetch.pdf_timeout + cfg.pdf.deadline + 30


async def execute(svc: Runtime, caller: Caller, p: FetchParams) -> Attempt:
    """One target through the one pipeline, under the caller, as /v1/fetch runs it."""
    if isinstance(p, ScrapeTarget):
        return await scrape.execute(svc, caller, p, target_deadline(svc.cfg))
    if isinstance(p, ExtractTarget):
        return await extract.execute(svc, caller, p)
    started = time.monotonic()
    try:
        result = await pipeline.within(
            svc, replace(caller, batch=True), p, Trace(), target_deadline(svc.cfg)
        )
    except SiftError as exc:
        return from_error(exc, time.monotonic() - started)
    body = msgspec.json.encode(result.envelope)
    return Attempt(TargetOutcome("done", result=body, code=200), "ok", time.monotonic() - started)
