"""POST /v2/extract (and /v1/extract), GET …/extract/{id}; the scrape `json` format.

`extract` is a job, as the SDK expects: the answer to the POST is an id, and the SDK polls the
status until `completed` or `failed`. The job is a batch job of kind `extract` with one target
(`sift.service.firecrawl.extract`: the URLs side by side, the model asked once): stored, so it
goes on after a restart and any replica answers its status. At most 100 are kept, each an hour
after it ends. Owners only: another caller's id is 404, as for batch.
"""

from __future__ import annotations

from typing import Any

import msgspec
import tornado.web

from sift.core.errors import BadRequest
from sift.core.request import ExtractTarget
from sift.digest import structured
from sift.web.firecrawl import hooks
from sift.web.firecrawl.base import Versioned, with_scheme

MAX_URLS = 10
EXTRACT_ID = r"([A-Za-z0-9_-]+)"
# What an extract job's Firecrawl status says, by its batch job's status.
STATUS = {
    "queued": "processing",
    "running": "processing",
    "done": "completed",
    "partial": "completed",
    "failed": "failed",
    "cancelled": "cancelled",
}


def json_spec(body: dict[str, Any]) -> tuple[str | None, dict[str, Any] | None] | None:
    """(prompt, schema) of a scrape body's `json` format (v2 `{"type": "json", …}`, v1
    `jsonOptions`), or None when it asks for no JSON; options that are no object: a 400."""
    for item in body.get("formats") or []:
        if isinstance(item, dict) and item.get("type") == "json":
            return item.get("prompt"), item.get("schema")
        if item in ("json", "extract"):
            name = "jsonOptions" if body.get("jsonOptions") else "extract"
            opts = body.get(name) or {}
            if not isinstance(opts, dict):
                raise BadRequest(f"invalid request: `{name}` must be an object (prompt, schema)")
            return opts.get("prompt"), opts.get("schema")
    return None


def _body(body: dict[str, Any]) -> tuple[list[str], str | None, dict[str, Any] | None]:
    urls = body.get("urls")
    if not isinstance(urls, list) or not urls or not all(isinstance(u, str) for u in urls):
        raise BadRequest("invalid request: `urls` must be a non-empty list of URLs")
    if len(urls) > MAX_URLS:
        raise BadRequest(f"invalid request: at most {MAX_URLS} `urls` in one extract")
    if any("*" in u for u in urls):
        raise BadRequest("invalid request: sift does not expand `*` in URLs; use map, then list")
    return [with_scheme(u) for u in urls], body.get("prompt"), body.get("schema")


@tornado.web.stream_request_body
class ExtractHandler(Versioned):
    route = "/v2/extract"

    async def post(self) -> None:
        assert self.caller is not None
        body = self.json_body()
        urls, prompt, schema = _body(body)
        structured.check_request(self.svc.cfg.digest, prompt, schema)
        for url in urls:
            self.svc.guard.precheck(url)  # a blocked URL is refused now, not in the job
        hook = await hooks.asked(self.svc, body)
        target = ExtractTarget(
            url=urls[0], context=False, urls=tuple(urls), prompt=prompt, schema=schema
        )
        job = await self.svc.jobs.extract_submit(self.caller, target, hook)
        if hook is not None:
            self.svc.webhooks.started(job, hook)
        self.send_json({"success": True, "id": job.id, "status": "processing"})


class ExtractStatusHandler(Versioned):
    route = "/v2/extract/{id}"

    async def get(self, job_id: str) -> None:
        assert self.caller is not None
        job, target = await self.svc.jobs.extract_job(self.caller, job_id)
        status = STATUS.get(job.status, "failed")
        body: dict[str, Any] = {"success": True, "id": job_id, "status": status}
        kept: dict[str, Any] = {}
        if target is not None and target.result:
            kept = msgspec.json.decode(target.result)
        if status == "completed":
            body["data"] = kept.get("data")
            body["sources"] = kept.get("sources", {})
        error = job.error or (target.error if target is not None else None)
        if status == "failed" and error:
            body["error"] = error
        failed = kept.get("sources", {}).get("failed")
        notes = ["not read: " + "; ".join(failed)] if failed else []
        notes += filter(None, [self.svc.webhooks.failures(job_id)])
        if notes:
            body["warning"] = "; ".join(notes)
        self.send_json(body)
