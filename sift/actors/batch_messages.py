"""The batch runner's messages: the requests it takes and the tags of the answers it asks for."""

from __future__ import annotations

from dataclasses import dataclass

from sift.actors.batch_worker import RunTarget
from sift.batch.scheduler import Attempt, Frontier
from sift.batch.webhook import Hook
from sift.core.answer import Answer
from sift.core.callers import Caller
from sift.core.request import FetchParams


@dataclass(frozen=True)
class Submit:
    """Answered with (BatchJob, reused)."""

    caller: Caller
    targets: tuple[FetchParams, ...]
    reply: Answer
    cap: int | None = None  # targets a job may hold; `[batch] targets_per_job` if None
    kind: str = "batch"  # batch | scrape | crawl | extract (the Firecrawl jobs)
    crawl: Frontier | None = None  # a crawl (`sift.fetch.scope.Crawl`): targets grow
    webhook: Hook | None = None  # kept in the job's spec (`sift.batch.webhook`)


@dataclass(frozen=True)
class Cancel:
    """Answered with the job's status, "cancelled"; 409 once it has finished."""

    job_id: str
    reply: Answer


@dataclass(frozen=True)
class BatchStats:
    reply: Answer


@dataclass(frozen=True)
class Wake:
    """A timer: a busy target may be tried again, or the leases are due for a sweep."""


# Tags of the answers the runner asks for (of the store and the workers): each comes back to
# its `handle_<tag>(tag, value, error)`.
@dataclass(frozen=True)
class Submitted:
    submit: Submit


@dataclass(frozen=True)
class Cancelled:
    cancel: Cancel


@dataclass(frozen=True)
class Ran:
    job_id: str
    idx: int
    worker: str


@dataclass(frozen=True)
class Written:
    job_id: str
    idx: int
    attempt: Attempt


@dataclass(frozen=True)
class Ended:
    job_id: str


@dataclass(frozen=True)
class Started:
    worker: str
    run: RunTarget  # told to the worker once its target is marked running


@dataclass(frozen=True)
class Found:
    how: str  # restart | takeover | steal: what the store was asked for (`handle_found`)


@dataclass(frozen=True)
class Beat:
    held: frozenset[str]  # the jobs the runner held when it renewed its lease
