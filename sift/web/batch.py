"""The batch endpoints: submit a list of /v1/fetch bodies, read a summary or one result,
cancel. A job is visible to its owner only: anyone else gets the 404 an unknown job
gets, so a caller cannot probe for another's jobs. Every owner read slides the job's lease
(`Services.batch_*`).
"""

from __future__ import annotations

from typing import Any

import msgspec
import tornado.web

from sift.batch.scheduler import NoTargets, TooManyTargets
from sift.core.errors import (
    BadRequest,
    SiftError,
    Unavailable,
    Unprocessable,
)
from sift.core.request import FetchParams
from sift.core.types import BatchJob, BatchTarget
from sift.documents.render import iso
from sift.service.params import parse_params
from sift.web.base import BaseHandler

BATCH_BODY_CAP = 256 * 1024  # 32 targets need more than the global 64 KiB; fixed, not config
JOB_ID = r"([A-Za-z0-9_-]{1,64})"


def parse_targets(body: dict[str, Any], cap: int) -> list[FetchParams]:
    """`{"targets": [<a /v1/fetch body>, …]}`; a problem names the target's index."""
    unknown = sorted(set(body) - {"targets"})
    if unknown:
        raise BadRequest(f"invalid request: unknown field `{unknown[0]}` (only `targets`)")
    raw = body.get("targets")
    if not isinstance(raw, list):
        raise BadRequest("invalid request: `targets` must be a list of /v1/fetch bodies")
    if not raw:
        raise NoTargets()
    if len(raw) > cap:
        raise TooManyTargets(len(raw), cap)
    targets = []
    for i, item in enumerate(raw):
        if not isinstance(item, dict):
            raise BadRequest(f"invalid request: target {i} is not a JSON object")
        try:
            target = parse_params(item)
        except BadRequest as exc:
            raise BadRequest(f"target {i}: {exc.message}") from None
        if target.headers:  # a target is kept in jobs.db until its lease ends: no secrets there
            raise BadRequest(
                f"target {i}: `headers` are not accepted in a batch (targets are stored); "
                "send the request with your headers to /v1/fetch"
            )
        targets.append(target)
    return targets


class _BatchHandler(BaseHandler):
    def prepare(self) -> None:
        super().prepare()
        if self.svc.cfg.batch.disabled:
            raise Unavailable("batch disabled")
        fault = self.svc.store_fault()
        if fault is not None:  # jobs must be durable: none is taken while it is not
            raise fault

    def write_error(self, status_code: int, **kwargs: Any) -> None:
        """A batch log line never carries a target's URL or host, for any caller class: the
        caller gets the whole message, the log only the outcome of a target's refusal."""
        err = self.error
        if err is not None and err.message.startswith("target "):
            logged = SiftError(f"{err.message.split(':', 1)[0]}: {err.outcome}")
            logged.status, logged.outcome = err.status, err.outcome
            self.error = logged
        super().write_error(status_code, **kwargs)


def target_view(t: BatchTarget, job_id: str | None = None) -> dict[str, Any]:
    view: dict[str, Any] = {"job_id": job_id} if job_id is not None else {}
    view.update(idx=t.idx, url=t.url, status=t.status)
    if t.result is not None:
        view["result"] = msgspec.Raw(t.result)  # the stored envelope, as stored
    if t.status == "failed":
        view["error"] = t.error
        if t.hint:
            view["hint"] = t.hint
        if t.code is not None:
            view["code"] = t.code
        if t.upstream_status is not None:
            view["upstream_status"] = t.upstream_status
    return view


@tornado.web.stream_request_body
class BatchSubmitHandler(_BatchHandler):
    route = "/v1/batch"
    body_cap = BATCH_BODY_CAP

    async def post(self) -> None:
        assert self.caller is not None
        targets = parse_targets(self.json_body(), self.svc.cfg.batch.targets_per_job)
        for i, p in enumerate(targets):
            try:
                self.svc.guard.precheck(p.url)  # a name that resolves privately fails later
            except SiftError as exc:
                self.trace.outcome = exc.outcome
                raise Unprocessable(f"target {i}: {exc.message}", hint=exc.hint) from None
        job, reused = await self.svc.jobs.batch_submit(self.caller, tuple(targets))
        body = {
            "success": True,
            "job_id": job.id,
            "status": job.status,
            "targets": job.targets_total,
            "reused": reused,
        }
        self.send_json(body, status=202)

    async def get(self) -> None:
        """The caller's jobs not ended yet, of every kind (batch, Firecrawl batch scrape,
        crawl, extract): what the page lists. An ended job is read by its id."""
        assert self.caller is not None
        jobs = await self.svc.jobs.live(self.caller)
        self.send_json({"success": True, "jobs": [job_view(job) for job in jobs]})


def job_view(job: BatchJob) -> dict[str, Any]:
    """A job's summary as the list shows it."""
    return {
        "job_id": job.id,
        "kind": job.kind,
        "status": "queued" if job.status == "waiting" else job.status,  # P6's word
        "targets_total": job.targets_total,
        "targets_done": job.targets_done,
        "created_at": iso(job.created_at),
    }


class BatchJobHandler(_BatchHandler):
    route = "/v1/batch/{id}"

    async def get(self, job_id: str) -> None:
        assert self.caller is not None
        results = self.get_argument("results", "0") not in ("0", "", "false")
        job, targets = await self.svc.jobs.batch_status(self.caller, job_id, results)
        body: dict[str, Any] = {
            "job_id": job.id,
            "status": "queued" if job.status == "waiting" else job.status,  # P6's word
            "targets_total": job.targets_total,
            "targets_done": job.targets_done,
            "created_at": iso(job.created_at),
            "expires_at": iso(job.lease + self.svc.cfg.batch.ttl),
        }
        if job.error:
            body["error"] = job.error
        body["targets"] = [target_view(t) for t in targets]
        self.send_json(body)

    async def delete(self, job_id: str) -> None:
        assert self.caller is not None
        status = await self.svc.jobs.batch_cancel(self.caller, job_id)
        self.send_json({"success": True, "status": status})


class BatchTargetHandler(_BatchHandler):
    route = "/v1/batch/{id}/{idx}"

    async def get(self, job_id: str, idx: str) -> None:
        assert self.caller is not None
        target = await self.svc.jobs.batch_result(self.caller, job_id, int(idx))
        self.send_json(target_view(target, job_id))
