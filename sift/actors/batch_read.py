"""How the batch runner reads a stored job back, and the store calls it binds in a loop."""

from __future__ import annotations

import time
from collections.abc import Callable

from sift.batch.scheduler import LiveJob, Unreadable, decode_targets
from sift.core.callers import Caller
from sift.core.types import BatchJob, BatchTarget
from sift.fetch.scope import Crawl, seen_keys
from sift.store.protocol import Store


def read_job(job: BatchJob, rows: list[BatchTarget]) -> LiveJob:
    """A stored job as the runner holds it: its targets read as its kind writes them, and a
    crawl's bounds and what it has seen, so that it grows on within them."""
    params = decode_targets(job.kind, [t.options for t in rows])
    try:  # a crawl stored before its bounds were (no spec) runs the targets it has
        crawl = Crawl.decode(job.spec) if job.spec is not None else None
        seen = seen_keys(crawl, params)
    except ValueError as exc:  # its bounds, or a URL no longer read as one
        raise Unreadable(str(exc)) from None
    caller = Caller(job.caller, job.caller_class)
    return LiveJob(job.id, caller, params, time.monotonic(), crawl=crawl, seen=seen)


def running(job_id: str, idx: int) -> Callable[[Store], str]:
    """The store call that marks a target running, its arguments bound now (in a loop)."""
    return lambda s: s.batch_target_running(job_id, idx)


def failed(job_id: str, reason: str) -> Callable[[Store], str]:
    """The store call that ends a job as failed with `reason`, bound now (in a loop)."""
    return lambda s: s.batch_finish_job(job_id, "failed", reason)
