"""What the batch runner records of its jobs: metrics and log events (never a URL)."""

from __future__ import annotations

import logging
import time
from typing import Any

from sift.batch.scheduler import Attempt, LiveJob, Unreadable
from sift.core import metrics
from sift.core.errors import StoreUnavailable
from sift.core.types import BatchJob, Resumed

log = logging.getLogger("sift.batch")


def event(name: str, **fields: object) -> None:
    log.info(name, extra={"fields": {"event": name, **fields}})


def submitted(job: BatchJob, caller: str, verdict: str) -> None:
    metrics.batch_job(verdict)
    event(
        "batch_job",
        job=job.id,
        caller=caller,
        verdict=verdict,
        targets=job.targets_total,
        status=job.status,
    )


def target(
    job_id: str, idx: int, attempt: Attempt, stored: Any, error: BaseException | None
) -> None:
    """A target's outcome is written (`stored`: the store's answer) or failed to be."""
    if isinstance(error, StoreUnavailable):
        log.warning("batch: a target's result was not stored: %s", error.reason)
    elif error is not None:
        log.error("batch: storing a target failed", exc_info=error)
    else:
        _, evicted = stored
        if evicted:
            event("batch_evicted", jobs=evicted)
    out = attempt.outcome
    metrics.batch_target(attempt.klass)
    metrics.BATCH_RESULT_BYTES.observe(out.nbytes)
    event(
        "batch_target",
        job=job_id,
        idx=idx,
        outcome=attempt.klass,
        code=out.code,
        bytes=out.nbytes,
        ms=round(attempt.seconds * 1000, 1),
    )


def ended(job: LiveJob) -> None:
    if job.status == "cancelled":
        metrics.batch_target("cancel", len(job.targets) - job.next_idx)
    metrics.batch_job(job.status)
    metrics.BATCH_JOB_SECONDS.observe(time.monotonic() - job.started)
    event(
        "batch_job_end",
        job=job.id,
        status=job.status,
        ok=job.ok,
        failed=job.failed,
        targets=len(job.targets),
    )


def found(how: str, found: Resumed) -> None:
    """Jobs this runner took on: at start-up ("restart"), whose lease lapsed ("takeover"),
    waiting at a busier replica ("steal"), or waiting their turn ("start")."""
    metrics.batch_target("restart", found.failed)  # in flight at two stops
    n, ids = len(found.jobs), [j.id for j, _ in found.jobs]
    if how == "restart" and n:
        metrics.batch_job("restart", n)
        log.warning("batch: %d job(s) were running when sift stopped; they go on", n)
    elif how == "takeover":
        metrics.BATCH_TAKEOVERS.inc(n)
        event("batch_takeover", jobs=ids)
    elif how == "steal":
        metrics.BATCH_STEALS.inc(n)
        event("batch_steal", jobs=ids)
    elif how == "start" and n:
        event("batch_waited", jobs=ids)


def unreadable(job_id: str, exc: Unreadable) -> None:
    log.warning("batch: job %s cannot be read back: %s", job_id, exc)
    metrics.batch_job("failed")
