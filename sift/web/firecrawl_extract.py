"""POST /v2/extract (and /v1/extract), GET …/extract/{id}; the scrape `json` format.

`extract` is a job, as the SDK expects: the answer to the POST is an id, and the SDK polls the
status until `completed` or `failed`. The job fetches its URLs through the pipeline (guard,
gates, cache), side by side, joins their clean text with a line naming each source, and asks
the model once (`sift.digest.structured`: schema-checked). Jobs live in memory — bounded in
number and kept for an hour after they end; a restart forgets them (the status is then 404,
and running the extract again is cheap: the pages are cached). Owners only: another caller's
id is 404, as for batch.
"""

from __future__ import annotations

import asyncio
import secrets
import time
from collections import OrderedDict
from dataclasses import dataclass, field
from typing import Any

import tornado.web

from sift.core.errors import BadRequest, Busy, NotFound, SiftError
from sift.core.request import FetchParams
from sift.digest import structured
from sift.service import pipeline
from sift.service.params import check
from sift.service.services import Services
from sift.web.firecrawl_base import FirecrawlHandler

MAX_URLS = 10
MAX_JOBS = 100
KEEP = 3600.0


def json_spec(body: dict[str, Any]) -> tuple[str | None, dict[str, Any] | None] | None:
    """(prompt, schema) of a scrape body's `json` format (v2 `{"type": "json", …}`, v1
    `jsonOptions`), or None when it asks for no JSON."""
    for item in body.get("formats") or []:
        if isinstance(item, dict) and item.get("type") == "json":
            return item.get("prompt"), item.get("schema")
        if item in ("json", "extract"):
            opts = body.get("jsonOptions") or body.get("extract") or {}
            return opts.get("prompt"), opts.get("schema")
    return None


@dataclass
class Job:
    caller: str
    status: str = "processing"
    data: Any = None
    error: str | None = None
    sources: dict[str, list[str]] = field(default_factory=dict)
    ended: float | None = None


class Jobs:
    """The extract jobs of this process: at most MAX_JOBS, finished ones dropped after KEEP."""

    def __init__(self) -> None:
        self.jobs: OrderedDict[str, Job] = OrderedDict()

    def add(self, job: Job) -> str:
        now = time.time()
        for key in [k for k, j in self.jobs.items() if j.ended and now - j.ended > KEEP]:
            del self.jobs[key]
        if len(self.jobs) >= MAX_JOBS:
            ended = next((k for k, j in self.jobs.items() if j.ended), None)
            if ended is None:
                raise Busy(f"busy: {MAX_JOBS} extract jobs are running; retry shortly", 10)
            del self.jobs[ended]
        job_id = secrets.token_urlsafe(12)
        self.jobs[job_id] = job
        return job_id


def _body(body: dict[str, Any]) -> tuple[list[str], str | None, dict[str, Any] | None]:
    urls = body.get("urls")
    if not isinstance(urls, list) or not urls or not all(isinstance(u, str) for u in urls):
        raise BadRequest("invalid request: `urls` must be a non-empty list of URLs")
    if len(urls) > MAX_URLS:
        raise BadRequest(f"invalid request: at most {MAX_URLS} `urls` in one extract")
    if any("*" in u for u in urls):
        raise BadRequest("invalid request: sift does not expand `*` in URLs; use map, then list")
    return urls, body.get("prompt"), body.get("schema")


async def _run(svc: Services, caller: Any, job: Job, urls: list[str],
               prompt: str | None, schema: dict[str, Any] | None) -> None:  # fmt: skip
    """Fetch every URL, then one model call on their texts; the outcome goes into `job`."""
    deadline = svc.cfg.request_deadline

    async def one(url: str) -> str:
        try:
            p = check(FetchParams(url=url, context=False))
            result = await pipeline.within(svc, caller, p, pipeline.Trace(), deadline, strict=False)
        except SiftError as exc:
            job.sources.setdefault("failed", []).append(f"{url}: {exc.message}")
            return ""
        job.sources.setdefault("used", []).append(url)
        return f"=== source: {url} ===\n{result.envelope['content']}"

    try:
        texts = [t for t in await asyncio.gather(*(one(u) for u in urls)) if t]
        if not texts:
            raise BadRequest("none of the URLs could be read: " + "; ".join(job.sources["failed"]))
        job.data = await structured.extract(svc.cfg.digest, "\n\n".join(texts), prompt, schema)
        job.status = "completed"
    except SiftError as exc:
        job.status, job.error = "failed", exc.message
    finally:
        job.ended = time.time()


@tornado.web.stream_request_body
class ExtractHandler(FirecrawlHandler):
    route = "/v2/extract"

    def initialize(self, svc: Any, callers: Any, jobs: Jobs | None = None) -> None:
        super().initialize(svc, callers)
        self.jobs = jobs or Jobs()

    def post(self) -> None:
        assert self.caller is not None
        urls, prompt, schema = _body(self.json_body())
        structured.check_request(self.svc.cfg.digest, prompt, schema)
        for url in urls:
            self.svc.guard.precheck(url)  # a blocked URL is refused now, not in the job
        job = Job(self.caller.name)
        job_id = self.jobs.add(job)
        self.svc.spawn(_run(self.svc, self.caller, job, urls, prompt, schema))
        self.send_json({"success": True, "id": job_id, "status": "processing"})


class ExtractStatusHandler(FirecrawlHandler):
    route = "/v2/extract/{id}"

    def initialize(self, svc: Any, callers: Any, jobs: Jobs | None = None) -> None:
        super().initialize(svc, callers)
        self.jobs = jobs or Jobs()

    def get(self, job_id: str) -> None:
        assert self.caller is not None
        job = self.jobs.jobs.get(job_id)
        if job is None or job.caller != self.caller.name:
            raise NotFound("no such extract job (jobs are kept in memory for an hour)")
        body: dict[str, Any] = {"success": True, "id": job_id, "status": job.status}
        if job.status == "completed":
            body["data"] = job.data
            body["sources"] = job.sources
        if job.error:
            body["error"] = job.error
        if job.sources.get("failed"):
            body["warning"] = "not read: " + "; ".join(job.sources["failed"])
        self.send_json(body)


def routes(deps: dict[str, Any]) -> list[tuple[str, Any, dict[str, Any]]]:
    args = {**deps, "jobs": Jobs()}
    return [
        (r"/v[12]/extract", ExtractHandler, args),
        (r"/v[12]/extract/([A-Za-z0-9_-]+)", ExtractStatusHandler, args),
    ]
