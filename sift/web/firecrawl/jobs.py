"""Firecrawl's job endpoints on sift's batch machinery: batch scrape and crawl (start,
status with `next` pages, cancel, errors) — v2, and v1 where the SDK's v1 client calls them.
Shapes are the SDK's models: absent is absent, integers are integers. Credits are not metered:
v2 never sends `creditsUsed` (optional in its models); v1's models require it, so v1 sends 0.

A Firecrawl job is a batch job of Firecrawl targets: the same workers, round-robin, per-caller
and total live-job caps, lease and ownership (another caller's job is a 404). Beyond the caps
it waits its turn (`scraping`, nothing done yet) instead of a 429, as Firecrawl queues; only a
full queue (`[batch] firecrawl_waiting_*`) is refused. Its size cap is its own: `[batch]
firecrawl_urls_per_job` URLs (a crawl's `limit` too). Each target is its own scrape
(`targets.JobScrape`); a URL without a scheme gets `https://`.
"""

from __future__ import annotations

import contextlib
import itertools
import time
from typing import Any

import msgspec
import tornado.web

from sift.batch.webhook import Hook
from sift.core.errors import BadRequest, Blocked, Conflict, SiftError
from sift.core.request import FetchParams
from sift.core.types import BatchJob
from sift.documents.render import iso
from sift.fetch.scope import Crawl, normal, unique
from sift.service.firecrawl import site_map
from sift.web.batch import _BatchHandler
from sift.web.firecrawl import crawl_options, hooks
from sift.web.firecrawl.base import Versioned, with_scheme
from sift.web.firecrawl.params_preview import model_options
from sift.web.firecrawl.targets import JobScrape, template_of
from sift.web.hosts import link_base

BODY_CAP = 1024 * 1024  # 1,000 URLs of up to ~1 KiB each
PAGE_DOCS = 100  # documents in one status page; `next` points at the rest
PAGE_BYTES = 8 * 1024 * 1024
PATHS = {"scrape": "batch/scrape", "crawl": "crawl"}
CRAWL_LIMIT = 50  # a crawl's `limit` when none is given
UNSUPPORTED = {
    "ignoreRobotsTxt": "sift always honours robots.txt",
}


class _JobsHandler(Versioned, _BatchHandler):
    """A Firecrawl job endpoint: batch enabled, the jobs store healthy, the owner's jobs only."""

    def refuse_unsupported(self, body: dict[str, Any]) -> None:
        for key, why in UNSUPPORTED.items():
            if body.get(key) not in (None, False, ""):
                raise BadRequest(f"`{key}` is not supported: {why}")

    def base(self) -> str:
        return link_base(self)

    async def submit(
        self,
        targets: list[FetchParams],
        kind: str,
        crawl: Crawl | None = None,
        hook: Hook | None = None,
    ) -> BatchJob:
        assert self.caller is not None
        cap = self.svc.cfg.batch.firecrawl_urls_per_job
        job, _ = await self.svc.jobs.batch_submit(
            self.caller, tuple(targets), cap=cap, kind=kind, crawl=crawl, webhook=hook
        )
        if hook is not None:
            self.svc.webhooks.started(job, hook)
        return job


def too_many(n: int, cap: int) -> BadRequest:
    return BadRequest(
        f"too many URLs: {n} (a Firecrawl job takes at most {cap}; "
        "`[batch] firecrawl_urls_per_job`); split the list"
    )


def whole_number(body: dict[str, Any], *names: str) -> int | None:
    for name in names:
        value = body.get(name)
        if value is None:
            continue
        if isinstance(value, bool) or not isinstance(value, int) or value < 0:
            raise BadRequest(f"invalid request: `{name}` must be a whole number, 0 or more")
        return value
    return None


def _status(job: BatchJob) -> str:
    if job.status in ("waiting", "queued", "running"):
        return "scraping"
    if job.status == "cancelled":
        return "cancelled"
    return "failed" if job.error else "completed"  # a job error: sift restarted under it


@tornado.web.stream_request_body
class BatchScrapeHandler(_JobsHandler):
    route = "/v2/batch/scrape"
    body_cap = BODY_CAP

    async def post(self) -> None:
        body = self.json_body()
        self.refuse_unsupported(body)
        urls = body.get("urls")
        if not isinstance(urls, list) or not all(isinstance(u, str) for u in urls):
            raise BadRequest("invalid request: `urls` must be a list of URLs")
        if not urls:
            raise BadRequest("invalid request: `urls` is empty; give at least one URL")
        cap = self.svc.cfg.batch.firecrawl_urls_per_job
        if len(urls) > cap:
            raise too_many(len(urls), cap)
        scrape = JobScrape(body, self.svc.cfg.digest)
        hook = await hooks.asked(self.svc, body)
        # Firecrawl's defaults: v2 drops invalid URLs (listed in `invalidURLs`), v1 refuses.
        skip_invalid = body.get("ignoreInvalidURLs", self.version == "v2") is True
        targets: list[FetchParams] = []
        invalid: list[str] = []
        why = ""  # the first invalid URL's reason, for a job left with none
        for i, url in enumerate(urls):
            try:
                self.svc.guard.precheck(with_scheme(url))
                p = scrape.target(url)
            except SiftError as exc:
                if not skip_invalid:
                    raise BadRequest(f"target {i}: {exc.message}", hint=exc.hint) from None
                invalid.append(url)
                why = why or f"{url}: {exc.message}"
                continue
            targets.append(p)
        if not targets:
            more = f" (and {len(invalid) - 1} more)" if len(invalid) > 1 else ""
            raise BadRequest(f"invalid request: none of `urls` can be fetched: {why}{more}")
        job = await self.submit(targets, "scrape", hook=hook)
        answer: dict[str, Any] = {
            "success": True,
            "id": job.id,
            "url": f"{self.base()}/{self.version}/batch/scrape/{job.id}",
        }
        if invalid:
            answer["invalidURLs"] = invalid
        self.send_json(answer)


@tornado.web.stream_request_body
class CrawlHandler(_JobsHandler):
    route = "/v2/crawl"

    async def post(self) -> None:
        assert self.caller is not None
        body = self.json_body()
        self.refuse_unsupported(body)
        asked = body.get("url")
        if not isinstance(asked, str) or not asked.strip():
            raise BadRequest("invalid request: `url` is required and must be a string")
        url = with_scheme(asked)
        if body.get("prompt"):  # the model's options, where the caller gave none
            body = {**await model_options(self.svc, url, str(body["prompt"])), **body}
        cap = self.svc.cfg.batch.firecrawl_urls_per_job
        limit = whole_number(body, "limit")
        limit = CRAWL_LIMIT if limit is None else limit
        if limit < 1:
            raise BadRequest("invalid request: `limit` must be at least 1")
        if limit > cap:
            raise too_many(limit, cap)
        depth = whole_number(body, "maxDiscoveryDepth", "maxDepth")
        opts = body.get("scrapeOptions") or {}
        if not isinstance(opts, dict):
            raise BadRequest("invalid request: `scrapeOptions` must be an object")
        mode = sitemap_mode(body)
        self.svc.guard.precheck(url)
        hook = await hooks.asked(self.svc, body)
        start = JobScrape(opts, self.svc.cfg.digest).target(asked, discover=mode != "only")
        scope = crawl_options.scope(body, url)
        no_query = crawl_options.flag(body, "ignoreQueryParameters")
        delay = crawl_options.delay(body)
        rules = await site_map.robots(self.svc, self.caller, url)
        if not rules.allowed(url):
            raise Blocked("the site's robots.txt disallows this URL for sift")
        targets: list[FetchParams] = [start]
        template = template_of(start)
        if mode != "skip":  # as Firecrawl: the sitemap's pages are crawled too, at depth 0
            found = await site_map.sitemap_urls(
                self.svc,
                self.caller,
                url,
                rules,
                self.svc.cfg.batch.map_sitemaps,
                time.monotonic() + self.svc.cfg.request_deadline,
            )
            kept = (u for u in found if scope.keeps(u) and rules.allowed(u))
            first = {normal(url, not no_query)}
            for u in itertools.islice(unique(kept, first, not no_query), limit - 1):
                targets.append(msgspec.structs.replace(template, url=u))
        listed = crawl_options.listed(body, limit, depth, mode, opts)
        delay = max(delay, rules.crawl_delay)  # the site's `Crawl-delay` is honoured too
        crawl = Crawl(scope, rules, limit, depth, template, no_query, delay, url, listed)
        job = await self.submit(targets, "crawl", crawl, hook)
        self.send_json(
            {"success": True, "id": job.id, "url": f"{self.base()}/{self.version}/crawl/{job.id}"}
        )


def sitemap_mode(body: dict[str, Any]) -> str:
    """v2 `sitemap` (include | skip | only), or v1 `ignoreSitemap` / `sitemapOnly`."""
    mode = body.get("sitemap", "include")
    if body.get("ignoreSitemap") is True:
        mode = "skip"
    if body.get("sitemapOnly") is True:
        mode = "only"
    if mode not in ("include", "skip", "only"):
        raise BadRequest('invalid request: `sitemap` is "include", "skip" or "only"')
    return str(mode)


class _OneJob(_JobsHandler):
    """A route of one job of `kind`: its id is in the path (`{id}` in the metrics label)."""

    tail = ""

    def initialize(self, svc: Any, callers: Any, version: str = "v2", kind: str = "scrape") -> None:
        super().initialize(svc, callers, version)
        self.kind = kind
        self.route = f"/{version}/{PATHS[kind]}/{{id}}{self.tail}"


class JobHandler(_OneJob):
    """GET: the job's status and a page of its documents; DELETE: cancel it."""

    async def get(self, job_id: str) -> None:
        assert self.caller is not None
        start = self.get_argument("skip", "0")
        if not start.isdecimal() or not start.isascii() or len(start) > 9:
            raise BadRequest("invalid request: `skip` is a whole number of documents")
        first = int(start)
        job, rows = await self.svc.jobs.batch_page(
            self.caller, job_id, self.kind, first, PAGE_DOCS + 1
        )
        data: list[msgspec.Raw] = []
        size = 0
        more = len(rows) > PAGE_DOCS
        for t in rows[:PAGE_DOCS]:
            if data and size + len(t.result or b"") > PAGE_BYTES:
                more = True
                break
            data.append(msgspec.Raw(t.result or b"{}"))
            size += len(t.result or b"")
            first = t.idx + 1
        status = _status(job)
        body: dict[str, Any] = {
            "success": True,
            "status": status,
            "completed": job.targets_done,
            "total": job.targets_total,
            "expiresAt": iso(job.lease + self.svc.cfg.batch.ttl),
        }
        if self.version == "v1":  # the v1 SDK's model requires it: not metered, so 0
            body["creditsUsed"] = 0
        if more or status == "scraping":
            body["next"] = f"{self.base()}{self.request.path}?skip={first}"
        if job.error:
            body["warning"] = job.error
            if status == "failed":
                body["error"] = job.error
        if (posts := self.svc.webhooks.failures(job_id)) is not None:
            body["warning"] = "; ".join(filter(None, (body.get("warning"), posts)))
        body["data"] = data
        self.send_json(body)

    async def delete(self, job_id: str) -> None:
        assert self.caller is not None
        job = await self.svc.jobs.batch_job(self.caller, job_id, self.kind)
        status = _status(job)
        if status != "scraping":  # ended: 409, as Firecrawl v2 answers (DESIGN §2)
            what = "Crawl" if self.kind == "crawl" else "Batch scrape"
            ended = "cancelled" if status == "cancelled" else "completed"
            raise Conflict(f"{what} is already {ended}")  # (the SDK's cancel_crawl: False)
        with contextlib.suppress(Conflict):  # it ended meanwhile: it is ended all the same
            await self.svc.jobs.batch_cancel(self.caller, job_id)
        self.send_json({"success": True, "status": "cancelled"})


class ErrorsHandler(_OneJob):
    """The job's failed URLs, and (a crawl's) the URLs robots.txt kept it from."""

    tail = "/errors"

    async def get(self, job_id: str) -> None:
        assert self.caller is not None
        targets, blocked = await self.svc.jobs.batch_errors(self.caller, job_id, self.kind)
        errors = []
        for t in targets:
            if t.status == "failed":
                item = {"id": f"{job_id}-{t.idx}", "url": t.url, "error": t.error or "failed"}
                if t.code is not None:
                    item["code"] = str(t.code)
                errors.append(item)
        self.send_json({"success": True, "errors": errors, "robotsBlocked": blocked})
