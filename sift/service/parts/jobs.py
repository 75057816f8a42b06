"""Batch jobs as the handlers see them: typed operations on the caller's own jobs, so that no
handler ever names an actor message or a store row's query."""

from __future__ import annotations

import time

from sift.actors.batch_messages import Cancel, Submit
from sift.actors.bridge import ask
from sift.batch.scheduler import Frontier
from sift.batch.webhook import Hook
from sift.core.callers import Caller
from sift.core.config import BatchConfig
from sift.core.errors import NotFound
from sift.core.request import ExtractTarget, FetchParams
from sift.core.types import BatchJob, BatchTarget
from sift.service.parts.held import STORE_DEADLINE, HeldWrites
from sift.service.parts.roles import Roles
from sift.store.batch import EXTRACT, EXTRACT_KEEP, QUEUED_KINDS


class BatchJobs:
    """A caller's jobs: submitted to the BatchRunner, read from the store."""

    def __init__(self, cfg: BatchConfig, roles: Roles, held: HeldWrites) -> None:
        self.cfg = cfg
        self._roles = roles
        self._store = held.store  # after the held writes, as every store call

    async def batch_submit(
        self,
        caller: Caller,
        targets: tuple[FetchParams, ...],
        *,
        cap: int | None = None,
        kind: str = "batch",
        crawl: Frontier | None = None,
        webhook: Hook | None = None,
    ) -> tuple[BatchJob, bool]:
        """A new job (or the same list's live one: `reused`), queued to run. A Firecrawl job
        (`kind` scrape or crawl) has its own size `cap` and is never reused; a crawl grows."""
        job, reused = await ask(
            self._roles.batch(),
            lambda r: Submit(caller, targets, r, cap=cap, kind=kind, crawl=crawl, webhook=webhook),
            STORE_DEADLINE,
        )
        return job, reused

    async def _owned(self, caller: Caller, job_id: str, kind: str | None = None) -> BatchJob:
        """The caller's own job (its lease slid by this read), else 404: a caller cannot
        tell another's job from no job, nor a job of another `kind` from no job. An extract
        job is kept an hour after it ends, reads or not."""
        now = time.time()
        ttl = EXTRACT_KEEP if kind == EXTRACT else self.cfg.ttl
        job = await self._store(lambda s: s.batch_job(job_id, now, ttl))
        if job is None or (job.caller, job.caller_class) != (caller.name, caller.cls):
            raise NotFound("no such batch job")
        if kind is not None and job.kind != kind:
            raise NotFound("no such batch job")
        if kind != EXTRACT:
            await self._store(lambda s: s.batch_touch(job_id, now))
        return job

    async def batch_job(self, caller: Caller, job_id: str, kind: str) -> BatchJob:
        """The caller's own job of this `kind` (a Firecrawl job's status), else 404."""
        return await self._owned(caller, job_id, kind)

    async def batch_live(self, caller: Caller, kind: str) -> list[BatchJob]:
        """The caller's own jobs of `kind` not ended yet (Firecrawl's active crawls)."""
        return await self._store(lambda s: s.batch_held_jobs(caller.name, caller.cls, kind))

    async def live(self, caller: Caller) -> list[BatchJob]:
        """The caller's jobs of every kind not ended yet, oldest first (the page's list)."""
        found: list[BatchJob] = []
        for kind in ("batch", *QUEUED_KINDS, EXTRACT):
            found += await self.batch_live(caller, kind)
        return sorted(found, key=lambda job: job.created_at)

    async def extract_submit(
        self, caller: Caller, target: ExtractTarget, webhook: Hook | None = None
    ) -> BatchJob:
        """A new extract job: a job of one target, bounded and kept apart from batch's caps."""
        job, _ = await self.batch_submit(caller, (target,), kind=EXTRACT, webhook=webhook)
        return job

    async def extract_job(self, caller: Caller, job_id: str) -> tuple[BatchJob, BatchTarget | None]:
        """The caller's own extract job and its one target (with its result), else 404."""
        try:
            job = await self._owned(caller, job_id, EXTRACT)
        except NotFound:
            raise NotFound("no such extract job (kept for an hour after it ends)") from None
        return job, await self._store(lambda s: s.batch_target(job_id, 0))

    async def batch_page(
        self, caller: Caller, job_id: str, kind: str, start: int, limit: int
    ) -> tuple[BatchJob, list[BatchTarget]]:
        """The job and its done targets from index `start` on (at most `limit`, with
        results): a page of a Firecrawl job's `data`."""
        job = await self._owned(caller, job_id, kind)
        return job, await self._store(lambda s: s.batch_results(job_id, start, limit))

    async def batch_errors(
        self, caller: Caller, job_id: str, kind: str
    ) -> tuple[list[BatchTarget], list[str]]:
        """The job's targets (no results) and the URLs robots.txt kept a crawl from."""
        await self._owned(caller, job_id, kind)
        targets = await self._store(lambda s: s.batch_targets(job_id, False))
        return targets, await self._store(lambda s: s.batch_skipped(job_id))

    async def batch_status(
        self, caller: Caller, job_id: str, results: bool
    ) -> tuple[BatchJob, list[BatchTarget]]:
        """The job and its targets (with their results when `results`)."""
        job = await self._owned(caller, job_id)
        return job, await self._store(lambda s: s.batch_targets(job_id, results))

    async def batch_result(self, caller: Caller, job_id: str, idx: int) -> BatchTarget:
        """One target of the caller's job, else 404."""
        await self._owned(caller, job_id)
        target = await self._store(lambda s: s.batch_target(job_id, idx))
        if target is None:
            raise NotFound(f"no target {idx} in this batch job")
        return target

    async def batch_cancel(self, caller: Caller, job_id: str) -> str:
        """Cancel the caller's job: its status, "cancelled"; 409 once it has finished."""
        await self._owned(caller, job_id)
        status: str = await ask(self._roles.batch(), lambda r: Cancel(job_id, r), STORE_DEADLINE)
        return status
