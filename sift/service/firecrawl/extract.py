"""A Firecrawl extract job's one target: its URLs fetched side by side through the pipeline
(guard, gates, cache), their clean texts joined with a line naming each source, and the model
asked once (`sift.digest.structured`: schema-checked). It runs on the batch workers, so the job
is stored like any other: it goes on after a restart, and any replica answers its status."""

from __future__ import annotations

import asyncio
import time
from dataclasses import replace

import msgspec

from sift.batch.scheduler import Attempt, from_error
from sift.core.callers import Caller
from sift.core.errors import BadRequest, SiftError
from sift.core.request import ExtractTarget, FetchParams
from sift.core.types import TargetOutcome
from sift.digest import structured
from sift.service.document import Trace
from sift.service.params import check
from sift.service.parts.runtime import Runtime
from sift.service.steps import pipeline


async def execute(svc: Runtime, caller: Caller, p: ExtractTarget) -> Attempt:
    """The job's outcome: `{"data", "sources"}` once the model answered; failed with the
    reason otherwise (its `sources` kept beside the error: what was read, what was not)."""
    started = time.monotonic()
    sources: dict[str, list[str]] = {}
    deadline = svc.cfg.request_deadline
    caller = replace(caller, batch=True)

    async def one(url: str) -> str:
        try:
            q = check(FetchParams(url=url, context=False))
            result = await pipeline.within(svc, caller, q, Trace(), deadline, strict=False)
        except SiftError as exc:
            sources.setdefault("failed", []).append(f"{url}: {exc.message}")
            return ""
        sources.setdefault("used", []).append(url)
        return f"=== source: {url} ===\n{result.envelope.content}"

    try:
        texts = [t for t in await asyncio.gather(*(one(u) for u in p.urls)) if t]
        if not texts:
            raise BadRequest("none of the URLs could be read: " + "; ".join(sources["failed"]))
        data = await structured.extract(svc.cfg.digest, "\n\n".join(texts), p.prompt, p.schema)
    except SiftError as exc:
        failed = from_error(exc, time.monotonic() - started)
        kept = msgspec.structs.replace(
            failed.outcome, result=msgspec.json.encode({"sources": sources})
        )
        return replace(failed, outcome=kept)
    body = msgspec.json.encode({"data": data, "sources": sources})
    return Attempt(TargetOutcome("done", result=body, code=200), "ok", time.monotonic() - started)
