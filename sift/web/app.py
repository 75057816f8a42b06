"""The Tornado application: the route table (the API's index), the 404 for any other path, the
request log. Every route is named; the first pattern that matches a path wins."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import tornado.web
from tornado.routing import URLSpec
from tornado.web import url

from sift.core.callers import Callers
from sift.core.config.edges import DIRECTORY_PATH
from sift.service.services import Services
from sift.web.base import NotFoundHandler
from sift.web.batch import JOB_ID, BatchJobHandler, BatchSubmitHandler, BatchTargetHandler
from sift.web.fetch import FetchHandler
from sift.web.firecrawl.active import ActiveCrawlsHandler
from sift.web.firecrawl.extract import EXTRACT_ID, ExtractHandler, ExtractStatusHandler
from sift.web.firecrawl.jobs import BatchScrapeHandler, CrawlHandler, ErrorsHandler, JobHandler
from sift.web.firecrawl.map import MapHandler
from sift.web.firecrawl.params_preview import ParamsPreviewHandler
from sift.web.firecrawl.parse import ParseFormatsHandler, ParseHandler
from sift.web.firecrawl.scrape import ScrapeHandler
from sift.web.firecrawl.search import SearchHandler
from sift.web.firecrawl.usage import ConcurrencyHandler, MeterHandler, QueueHandler
from sift.web.health import HealthHandler, MetricsHandler
from sift.web.hosts import rules_for
from sift.web.identity import DirectoryHandler
from sift.web.logs import log_request
from sift.web.page import ASSET, AssetHandler, PageHandler
from sift.web.progress import ProgressHandler
from sift.web.read import ReadHandler, VerifyHandler
from sift.web.reader import ReaderHandler

Route = Callable[..., URLSpec]  # (pattern, handler, name, **handler args) -> the route


def routes(deps: dict[str, Any]) -> list[URLSpec]:
    """Every route sift answers, with its name; `deps` go to every handler. Firecrawl's jobs
    come before sift's /v1/batch/{id} (`scrape` is not a job id)."""

    def r(pattern: str, handler: type, name: str, **args: Any) -> URLSpec:
        return url(pattern, handler, {**deps, **args}, name=name)

    return [
        *_own(r),
        *_firecrawl_documents(r),
        *_firecrawl_jobs(r, "v2"),
        *_firecrawl_jobs(r, "v1"),
        *_batch(r),
        *_firecrawl_usage(r, "v2"),
        *_firecrawl_usage(r, "v1"),
    ]


def _own(r: Route) -> list[URLSpec]:
    """sift's own: the page for people, a fetch, the reader URL, progress, health and
    metrics."""
    return [
        r("/", PageHandler, "page"),
        r(f"/static/{ASSET}", AssetHandler, "page-asset"),
        r("/v1/fetch", FetchHandler, "fetch"),
        r("/v1/read", ReadHandler, "read"),
        r("/v1/verify", VerifyHandler, "verify"),
        r("/r/(.*)", ReaderHandler, "reader"),
        r("/v1/progress", ProgressHandler, "progress"),
        r("/healthz", HealthHandler, "healthz"),
        r("/metrics", MetricsHandler, "metrics"),
        r(DIRECTORY_PATH, DirectoryHandler, "signatures-directory"),  # Web Bot Auth's keys
    ]


def _firecrawl_documents(r: Route) -> list[URLSpec]:
    """Firecrawl: one document (scrape, parse, search)."""
    return [
        r("/v2/scrape", ScrapeHandler, "v2-scrape", route="/v2/scrape"),
        r("/v1/scrape", ScrapeHandler, "v1-scrape", route="/v1/scrape"),
        r("/v2/parse", ParseHandler, "v2-parse"),
        r("/v2/parse/formats", ParseFormatsHandler, "v2-parse-formats"),
        r("/v2/search", SearchHandler, "v2-search"),
        r("/v1/search", SearchHandler, "v1-search", v1=True),
    ]


def _firecrawl_jobs(r: Route, v: str) -> list[URLSpec]:
    """Firecrawl's jobs in API version `v`: batch scrape, crawl, map, extract."""
    preview = [r("/v2/crawl/params-preview", ParamsPreviewHandler, "v2-crawl-params-preview")]
    scrape = {"version": v, "kind": "scrape"}
    crawl = {"version": v, "kind": "crawl"}
    batch = f"/{v}/batch/scrape"
    return [
        r(batch, BatchScrapeHandler, f"{v}-batch-scrape", version=v),
        r(f"{batch}/{JOB_ID}", JobHandler, f"{v}-batch-scrape-status", **scrape),
        r(f"{batch}/{JOB_ID}/errors", ErrorsHandler, f"{v}-batch-scrape-errors", **scrape),
        r(f"/{v}/crawl", CrawlHandler, f"{v}-crawl", version=v),
        *(preview if v == "v2" else []),
        r(f"/{v}/crawl/active", ActiveCrawlsHandler, f"{v}-crawl-active", version=v),
        r(f"/{v}/crawl/{JOB_ID}", JobHandler, f"{v}-crawl-status", **crawl),
        r(f"/{v}/crawl/{JOB_ID}/errors", ErrorsHandler, f"{v}-crawl-errors", **crawl),
        r(f"/{v}/map", MapHandler, f"{v}-map", version=v),
        r(f"/{v}/extract", ExtractHandler, f"{v}-extract", version=v),
        r(f"/{v}/extract/{EXTRACT_ID}", ExtractStatusHandler, f"{v}-extract-status", version=v),
    ]


def _batch(r: Route) -> list[URLSpec]:
    """sift's batch jobs."""
    return [
        r("/v1/batch", BatchSubmitHandler, "batch"),
        r(f"/v1/batch/{JOB_ID}", BatchJobHandler, "batch-job"),
        r(rf"/v1/batch/{JOB_ID}/(\d{{1,6}})", BatchTargetHandler, "batch-target"),
    ]


def _firecrawl_usage(r: Route, v: str) -> list[URLSpec]:
    """Firecrawl usage in API version `v`: answered from sift's own state, nothing metered."""
    old = {"v1": True} if v == "v1" else {}
    state = [
        r("/v2/concurrency-check", ConcurrencyHandler, "v2-concurrency-check"),
        r("/v2/team/queue-status", QueueHandler, "v2-queue-status"),
    ]
    meters = [
        r(f"/{v}/team/{what}-usage{later}", MeterHandler, f"{v}-{what}-usage{named}", **args)
        for what, metered in (("credit", "credits"), ("token", "tokens"))
        for later, named, args in (
            ("", "", {"what": metered, **old}),
            ("/historical", "-historical", {"what": metered, **old, "historical": True}),
        )
    ]
    return (state if v == "v2" else []) + meters


def make_app(svc: Services, callers: Callers) -> tornado.web.Application:
    deps = {"svc": svc, "callers": callers}
    return tornado.web.Application(
        routes(deps),
        default_handler_class=NotFoundHandler,
        default_handler_args=deps,
        log_function=log_request,
        compress_response=True,
        serve_traceback=False,
        ready=(svc, callers),  # ready answers at the edge (web/ready.py)
        cfg=svc.cfg if svc is not None else None,
        hosts=rules_for(svc.cfg) if svc is not None else None,  # Host and Origin (web/hosts.py)
    )
