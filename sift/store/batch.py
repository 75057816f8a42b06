"""Batch jobs as every backend keeps them: `batch_job` and its ordered
`batch_target` rows, the statuses, and what every backend decides the same way (the submit
verdict, which finished jobs go over the byte budget). Each backend (`sqlite/`, `postgres/`)
runs only its SQL.

Batch storage is bounded by its own sliding lease and byte budget, not by the content cache's
LRU. Reads never write: the API bumps the lease (`batch_touch`) after checking ownership. A live
job (queued/running) is never swept or byte-evicted: the runner holds it in memory.
"""

from __future__ import annotations

from abc import ABC, abstractmethod
from contextlib import AbstractContextManager
from typing import Any

import msgspec

from sift.core.types import BatchJob, BatchTarget, Resumed

# SQL lists of job statuses. Live is by status, not lease; failed/cancelled jobs are not reused.
LIVE = "('queued', 'running')"
# A Firecrawl job queued behind the live-job caps (nothing run yet); started in order when
# there is room. Not live (not counted in the caps), but not ended: never swept or evicted.
WAITING = "waiting"
HELD = "('waiting', 'queued', 'running')"
QUEUED_KINDS = ("scrape", "crawl")  # the jobs that wait instead of a 429
Caps = tuple[int, int]  # (a caller's, everyone's)
Rows = list[tuple[str, bytes]]  # targets as stored: (url, canonical options)
REUSABLE = "('queued', 'running', 'done', 'partial')"
RESTART = "restart"
EXTRACT = "extract"  # Firecrawl extract jobs: bounded apart from the batch caps, kept an hour
EXTRACT_KEEP = 3600.0  # seconds an extract job is kept after it ends


def restart_error(reason: str) -> str:
    return f"{reason}: sift stopped twice while this target was in flight"


JOB_COLUMNS = (
    "id, caller, caller_class, idem_key, status, error, targets_total, targets_done, "
    "created_at, lease, nbytes, kind, spec"
)
TARGET_COLUMNS = "job_id, idx, url, options, status, {result}, error, hint, code, upstream_status"


def _blob(v: Any) -> bytes | None:
    return bytes(v) if v is not None else None


def job_values(job: BatchJob) -> tuple[Any, ...]:
    """The row of `JOB_COLUMNS` for `job`."""
    return (
        job.id,
        job.caller,
        job.caller_class,
        job.idem_key,
        job.status,
        job.error,
        job.targets_total,
        job.targets_done,
        job.created_at,
        job.lease,
        job.nbytes,
        job.kind,
        job.spec,
    )


def job_row(r: tuple[Any, ...] | None) -> BatchJob | None:
    """A row of `JOB_COLUMNS` (its last, `spec`, a blob: bytes on every backend)."""
    return msgspec.structs.replace(BatchJob(*r), spec=_blob(r[-1])) if r else None


def target_row(r: tuple[Any, ...]) -> BatchTarget:
    """A row of `TARGET_COLUMNS` (`options` and `result` blobs: bytes on every backend)."""
    return BatchTarget(r[0], r[1], r[2], bytes(r[3]), r[4], _blob(r[5]), *r[6:])


class BatchRules(ABC):
    """What every backend's batch tables decide the same way, from the queries each runs."""

    def batch_submit(
        self, job: BatchJob, targets: Rows, caps: Caps, ttl: float, queue: Caps | None = None
    ) -> tuple[str, BatchJob | None]:
        """Reuse the caller's job for the same targets within its lease, else create one.

        Returns ("reused", job), ("created", job), or ("caller_busy" | "busy", None) when the
        caller's or everyone's live-job cap (`caps`) is full; an extract job is bounded by the
        second cap alone, among the extract jobs kept. A job given `queue` (a Firecrawl one)
        waits instead, behind those already waiting ("waiting", job), while the caller's and
        everyone's waiting jobs are under `queue` (else "caller_queue_full" | "queue_full").
        Exclusive, so the caps hold across every process that shares the database.
        """
        now = job.created_at
        with self._transaction(exclusive=True):
            found = self.batch_find(job.idem_key, job.caller, now - ttl)
            if found is not None:
                self.batch_touch(found.id, now)
                return "reused", self.batch_job(found.id, now, ttl)
            if job.kind == EXTRACT:
                if not self._extract_room(now, caps[1]):
                    return "busy", None
            else:
                mine, everyone = self.batch_live_counts(job.caller)
                full = mine >= caps[0] or everyone >= caps[1]
                if queue is not None and (full or self._waiting()):
                    return self._wait(job, targets, queue)
                if mine >= caps[0]:
                    return "caller_busy", None
                if everyone >= caps[1]:
                    return "busy", None
            self.batch_create(job, targets)
            return "created", job

    def _wait(self, job: BatchJob, targets: Rows, queue: Caps) -> tuple[str, BatchJob | None]:
        waiting = self._waiting()
        if sum(1 for _, caller in waiting if caller == job.caller) >= queue[0]:
            return "caller_queue_full", None
        if len(waiting) >= queue[1]:
            return "queue_full", None
        job = msgspec.structs.replace(job, status=WAITING)
        self.batch_create(job, targets)
        return "waiting", job

    def batch_promote(self, caps: Caps, now: float) -> Resumed:
        """Start the waiting jobs, oldest first, while the caller's and everyone's live-job
        `caps` have room: each is queued to run from now on by this runner (on any replica).
        Exclusive, as a submit: the caps hold across every process."""
        with self._transaction(exclusive=True):
            waiting = self._waiting()
            if not waiting:
                return Resumed([], 0)
            live = {caller: self.batch_live_counts(caller)[0] for _, caller in waiting}
            total = self.batch_live_counts("")[1]
            ids = []
            for job_id, caller in waiting:
                if total >= caps[1]:
                    break
                if live[caller] < caps[0]:
                    ids.append(job_id)
                    live[caller] += 1
                    total += 1
            return self._start(ids, now)

    def _extract_room(self, now: float, cap: int) -> bool:
        """Room for one more extract job among at most `cap` kept: the oldest ended one goes
        when they are full; none ended, there is no room."""
        if self._extracts_kept(now - EXTRACT_KEEP) < cap:
            return True
        return self._drop_oldest_extract()

    def batch_evict(self, max_bytes: int, keep: str = "") -> int:
        """Evict whole finished jobs, oldest lease first, until the budget fits; never a live
        job and never `keep`. Returns how many jobs went."""
        with self._transaction():
            total = self.batch_nbytes()
            if total <= max_bytes:
                return 0
            evicted = 0
            for job_id, nbytes in self._ended_by_lease(keep):
                if total <= max_bytes:
                    break
                self._job_delete(job_id)
                total -= nbytes
                evicted += 1
            return evicted

    # -- what each backend runs

    @abstractmethod
    def _transaction(self, exclusive: bool = False) -> AbstractContextManager[Any]:
        """The calls inside as one transaction where the backend needs it; `exclusive`: one at
        a time across every process that shares the database."""

    @abstractmethod
    def batch_find(self, idem_key: str, caller: str, not_before: float) -> BatchJob | None:
        """The newest reusable job with this key, of this caller, whose lease has not lapsed."""

    @abstractmethod
    def batch_live_counts(self, caller: str) -> tuple[int, int]:
        """(live jobs of `caller`, live jobs of everyone), extract jobs apart; live is by
        status, not lease."""

    @abstractmethod
    def _waiting(self) -> list[tuple[str, str]]:
        """(id, caller) of every waiting job, oldest first."""

    @abstractmethod
    def _start(self, ids: list[str], now: float) -> Resumed:
        """The waiting jobs `ids` queued to run, held by this runner, with their targets."""

    @abstractmethod
    def _extracts_kept(self, not_before: float) -> int:
        """Extract jobs live or ended since `not_before`."""

    @abstractmethod
    def _drop_oldest_extract(self) -> bool:
        """Delete the ended extract job of the oldest lease; False when none has ended."""

    @abstractmethod
    def batch_create(self, job: BatchJob, targets: list[tuple[str, bytes]]) -> None: ...

    @abstractmethod
    def batch_job(self, job_id: str, now: float, ttl: float) -> BatchJob | None: ...

    @abstractmethod
    def batch_touch(self, job_id: str, now: float) -> None: ...

    @abstractmethod
    def batch_nbytes(self) -> int: ...

    @abstractmethod
    def _ended_by_lease(self, keep: str) -> list[tuple[Any, ...]]:
        """(id, nbytes) of every ended job but `keep`, oldest lease first."""

    @abstractmethod
    def _job_delete(self, job_id: str) -> None:
        """The job and, by its foreign keys, its targets."""
