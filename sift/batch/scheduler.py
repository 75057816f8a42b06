"""Batch fetch, free of threads: job identity, caps, the round-robin scheduler, and
how one target's try becomes a stored outcome. The actors in `sift.actors.batch` drive it.

One job drains serially (target i+1 starts once i is written); the 1–2 workers share one
round-robin over the live jobs; a busy answer leaves the target pending and it is tried again
every `retry_every` seconds for up to `retry_for`, then stored as failed.
"""

from __future__ import annotations

import hashlib
import logging
import math
import secrets
import time
from collections import deque
from collections.abc import Awaitable, Callable, Iterable
from dataclasses import dataclass, field, replace
from typing import Protocol

import msgspec

from sift.core.callers import Caller
from sift.core.errors import (
    BadRequest,
    Blocked,
    Busy,
    Conflict,
    NotFound,
    OutOfTime,
    SiftError,
    TooLarge,
    Unavailable,
    Unprocessable,
    Unsupported,
    UpstreamTimeout,
)
from sift.core.request import ExtractTarget, FetchParams, ScrapeTarget
from sift.core.types import BatchJob, TargetOutcome

log = logging.getLogger("sift.batch")


class NoTargets(BadRequest):
    def __init__(self) -> None:
        super().__init__("invalid request: `targets` is empty; give at least one /v1/fetch body")


class TooManyTargets(Unprocessable):
    def __init__(self, n: int, cap: int) -> None:
        super().__init__(f"too many targets: {n} (at most {cap} per batch job); split the list")


class CallerJobsBusy(Busy):
    def __init__(self) -> None:
        super().__init__(
            "busy: you already have a batch job running; wait for it or cancel it",
            retry_after=30,
        )


class JobsBusy(Busy):
    def __init__(self) -> None:
        super().__init__("busy: sift is running as many batch jobs as it takes", retry_after=30)


class QueueFull(Busy):
    def __init__(self, whose: str, key: str) -> None:
        super().__init__(
            f"busy: {whose} as many Firecrawl jobs waiting as sift queues (`[batch] {key}`); "
            "wait for one to end or cancel one",
            retry_after=30,
        )


EXTRACT_JOBS = 100  # extract jobs kept at once (running, or ended within the hour)


class ExtractJobsBusy(Busy):
    def __init__(self) -> None:
        super().__init__(f"busy: {EXTRACT_JOBS} extract jobs are running; retry shortly", 10)


def canonical(p: FetchParams) -> bytes:
    """A target's options as canonical JSON: every field, sorted, defaults spelled out."""
    return msgspec.json.encode(msgspec.to_builtins(p), order="sorted")


# What a stored target is read back as, by its job's kind: the kinds of job there are.
TARGET_TYPES: dict[str, type[FetchParams]] = {
    "batch": FetchParams,
    "scrape": ScrapeTarget,
    "crawl": ScrapeTarget,
    "extract": ExtractTarget,
}


class Unreadable(Exception):
    """A stored job that cannot be read back (a damaged row, a form this sift does not know):
    it fails with `reason`, and nothing else stops."""

    def __init__(self, reason: str) -> None:
        super().__init__(reason)
        self.reason = f"this job cannot be read back from the store: {reason}; submit it again"


def decode_targets(kind: str, options: list[bytes]) -> tuple[FetchParams, ...]:
    """A stored job's targets (their canonical JSON), read as its `kind` writes them."""
    cls = TARGET_TYPES.get(kind)
    if cls is None:
        raise Unreadable(f"unknown job kind {kind!r}")
    try:
        return tuple(msgspec.json.decode(o, type=cls) for o in options)
    except msgspec.DecodeError as exc:  # ValidationError too
        raise Unreadable(f"a target is not a {kind} target ({exc})") from None


def new_job_id() -> str:
    """A job's id: 16 URL-safe characters that never start with '-', which a command line
    (`sift batch status ID`) would read as an option."""
    while (job_id := secrets.token_urlsafe(12)).startswith("-"):
        pass
    return job_id


def idem_key(caller: str, targets: tuple[FetchParams, ...]) -> str:
    """SHA-256 of the caller and the canonical target list: the same list is the same job."""
    body = b"[" + b",".join(canonical(p) for p in targets) + b"]"
    return hashlib.sha256(caller.encode() + b"\x00" + body).hexdigest()


def new_job(
    caller: Caller,
    targets: tuple[FetchParams, ...],
    cap: int,
    kind: str,
    spec: bytes | None,
    now: float,
) -> BatchJob:
    """A job as submitted (1 to `cap` targets), queued. A batch job is the same job as any
    earlier one of the same caller and targets; a Firecrawl job never is (each start is a new
    job there)."""
    if not targets:
        raise NoTargets()
    if len(targets) > cap:
        raise TooManyTargets(len(targets), cap)
    key = idem_key(caller.name, targets) if kind == "batch" else secrets.token_hex()
    return BatchJob(
        id=new_job_id(),
        caller=caller.name,
        caller_class=caller.cls,
        idem_key=key,
        status="queued",
        error=None,
        targets_total=len(targets),
        targets_done=0,
        created_at=now,
        lease=now,
        nbytes=0,
        kind=kind,
        spec=spec,
    )


def job_caps(kind: str, per_caller: int, total: int) -> tuple[int, int]:
    """The live jobs a caller, and everyone, may hold (extract jobs: bounded on their own, as
    Firecrawl's are)."""
    return (EXTRACT_JOBS, EXTRACT_JOBS) if kind == "extract" else (per_caller, total)


def submit_refusal(verdict: str, kind: str) -> SiftError | None:
    """The error a submit answers when the store refused the job for the caps (`verdict`)."""
    if verdict == "caller_busy":
        return CallerJobsBusy()
    if verdict == "caller_queue_full":
        return QueueFull("you have", "firecrawl_waiting_per_caller")
    if verdict == "queue_full":
        return QueueFull("everyone has", "firecrawl_waiting_total")
    if verdict == "busy":
        return ExtractJobsBusy() if kind == "extract" else JobsBusy()
    return None


def cancel_refusal(status: str) -> SiftError:
    """Why a cancel changed nothing: the job is gone, or it has finished."""
    if status == "gone":
        return NotFound("no such batch job")
    return Conflict(f"batch job already finished ({status}); nothing to cancel")


def rows(targets: Iterable[FetchParams]) -> list[tuple[str, bytes]]:
    """Targets as the store keeps them: each URL with its canonical options."""
    return [(p.url, canonical(p)) for p in targets]


@dataclass(frozen=True)
class Attempt:
    """One try of a target: the outcome to store, or `busy` (the outcome if we give up)."""

    outcome: TargetOutcome
    klass: str  # the metrics outcome class
    seconds: float = 0.0
    busy: bool = False
    links: tuple[str, ...] = ()  # a crawl page's links, for the runner to scope and queue


def classify(exc: SiftError) -> str:
    if isinstance(exc, Blocked):
        return "blocked"
    if isinstance(exc, UpstreamTimeout | OutOfTime):
        return "timeout"
    if isinstance(exc, Busy | Unavailable):
        return "busy"
    if isinstance(exc, Unsupported):
        return "unsupported"
    if isinstance(exc, TooLarge):
        return "too_long"
    if exc.upstream_status is not None:
        return "upstream_4xx" if exc.upstream_status < 500 else "upstream_5xx"
    return "other"


def from_error(exc: SiftError, seconds: float = 0.0) -> Attempt:
    """The stored form of an error: the body /v1/fetch would answer with, and its status."""
    out = TargetOutcome(
        "failed",
        error=exc.message,
        hint=exc.hint,
        code=exc.status,
        upstream_status=exc.upstream_status,
    )
    return Attempt(out, classify(exc), seconds, busy=isinstance(exc, Busy | Unavailable))


def gave_up(a: Attempt, retry_for: float) -> Attempt:
    """A target busy for too long is stored failed, saying so."""
    error = f"{a.outcome.error} (still busy after {retry_for:.0f} s of retries)"
    return replace(a, outcome=msgspec.structs.replace(a.outcome, error=error), busy=False)


async def guarded(work: Callable[[], Awaitable[Attempt]]) -> Attempt:
    """Run one try; a bug becomes a stored internal error (never echoed) and the job goes on.
    The try is started here, so a call the loop never runs leaves no coroutine behind."""
    started = time.monotonic()
    try:
        return await work()
    except SiftError as exc:
        return from_error(exc, time.monotonic() - started)
    except Exception:
        log.exception("bug: a batch target raised")
        return from_error(SiftError(), time.monotonic() - started)


class Frontier(Protocol):
    """How a job's targets grow while it runs (a crawl: `sift.fetch.scope.Crawl`): the new
    targets a page's links give, at most `room`, and the URLs it may not fetch."""

    @property
    def limit(self) -> int: ...  # the most targets the job may reach

    @property
    def delay(self) -> float: ...  # seconds between one target's end and the next's start

    def encode(self) -> bytes: ...  # its bounds, stored with the job so that it resumes within them

    def grow(
        self, parent: FetchParams, links: tuple[str, ...], seen: set[str], room: int
    ) -> tuple[list[FetchParams], list[str]]: ...


@dataclass
class LiveJob:
    """A queued or running job as the runner holds it: with its caller, in memory only."""

    id: str
    caller: Caller
    targets: tuple[FetchParams, ...]
    started: float  # monotonic, for the job's duration
    next_idx: int = 0
    in_flight: bool = False  # a target is running or being written
    cancelled: bool = False
    ok: int = 0
    failed: int = 0
    busy_since: float | None = None
    retry_at: float = 0.0
    crawl: Frontier | None = None
    seen: set[str] = field(default_factory=set)  # a crawl's URLs so far (`scope.normal`)

    def ready(self, now: float) -> bool:
        return (
            not self.in_flight
            and not self.cancelled
            and self.retry_at <= now
            and self.next_idx < len(self.targets)
        )

    def grow(self, idx: int, links: tuple[str, ...]) -> tuple[int, list[FetchParams], list[str]]:
        """A crawl page's links become the job's next targets, within its bounds: (the index
        of the first, the new targets, the URLs it may not fetch)."""
        first = len(self.targets)
        if self.crawl is None:
            return first, [], []
        room = self.crawl.limit - first
        new, blocked = self.crawl.grow(self.targets[idx], links, self.seen, room)
        self.targets += tuple(new)
        return first, new, blocked

    @property
    def over(self) -> bool:
        return not self.in_flight and (self.cancelled or self.next_idx >= len(self.targets))

    @property
    def status(self) -> str:
        if self.cancelled:
            return "cancelled"
        return "done" if not self.failed else "failed" if not self.ok else "partial"


class Scheduler:
    """The live jobs and one round-robin over them, shared by every worker."""

    def __init__(self, retry_every: float, retry_for: float) -> None:
        self.retry_every = retry_every
        self.retry_for = retry_for
        self.jobs: dict[str, LiveJob] = {}
        self._ring: deque[str] = deque()

    def add(self, job: LiveJob) -> None:
        self.jobs[job.id] = job
        self._ring.append(job.id)

    def remove(self, job_id: str) -> None:
        if self.jobs.pop(job_id, None) is not None:
            self._ring.remove(job_id)

    def take(self, now: float) -> LiveJob | None:
        """The next job whose next target may run, going round; it is in flight from now."""
        for _ in range(len(self._ring)):
            job = self.jobs[self._ring[0]]
            self._ring.rotate(-1)
            if job.ready(now):
                job.in_flight = True
                return job
        return None

    def retry(self, job: LiveJob, now: float) -> bool:
        """A busy answer: True when the target waits for another try, False to give up."""
        if job.busy_since is None:
            job.busy_since = now
        if now - job.busy_since >= self.retry_for:
            return False
        job.in_flight = False
        job.retry_at = now + self.retry_every
        return True

    def written(self, job: LiveJob, ok: bool, now: float = 0.0) -> None:
        """The target's outcome is stored: the job moves on to its next target (after its
        crawl's `delay`)."""
        job.in_flight = False
        job.next_idx += 1
        job.busy_since = None
        job.retry_at = now + job.crawl.delay if job.crawl is not None else 0.0
        job.ok, job.failed = job.ok + ok, job.failed + (not ok)

    def next_wake(self, now: float) -> float:
        """When a target waiting out a busy answer may next run (`math.inf`: none waits)."""
        times = [
            j.retry_at
            for j in self.jobs.values()
            if not j.in_flight and not j.cancelled and j.retry_at > now
        ]
        return min(times, default=math.inf)

    def depth(self) -> int:
        """Targets of live jobs still to run."""
        return sum(
            len(j.targets) - j.next_idx - j.in_flight for j in self.jobs.values() if not j.cancelled
        )
