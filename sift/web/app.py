"""The Tornado application: the route table (the API's index), the 404 for any other path, the
request log. Every route is named; the first pattern that matches a path wins."""

from __future__ import annotations

from typing import Any

import tornado.web
from tornado.routing import URLSpec
from tornado.web import url

from sift.core.callers import Callers
from sift.core.edge_config import DIRECTORY_PATH
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
from sift.web.progress import ProgressHandler
from sift.web.read import ReadHandler, VerifyHandler
from sift.web.reader import ReaderHandler


def routes(deps: dict[str, Any]) -> list[URLSpec]:
    """Every route sift answers, with its name; `deps` go to every handler."""

    def r(pattern: str, handler: type, name: str, **args: Any) -> URLSpec:
        return url(pattern, handler, {**deps, **args}, name=name)

    return [
        # sift's own
        r("/v1/fetch", FetchHandler, "fetch"),
        r("/v1/read", ReadHandler, "read"),
        r("/v1/verify", VerifyHandler, "verify"),
        r("/r/(.*)", ReaderHandler, "reader"),
        r("/v1/progress", ProgressHandler, "progress"),
        r("/healthz", HealthHandler, "healthz"),
        r("/metrics", MetricsHandler, "metrics"),
        r(DIRECTORY_PATH, DirectoryHandler, "signatures-directory"),  # Web Bot Auth's keys
        # Firecrawl: one document
        r("/v2/scrape", ScrapeHandler, "v2-scrape", route="/v2/scrape"),
        r("/v1/scrape", ScrapeHandler, "v1-scrape", route="/v1/scrape"),
        r("/v2/parse", ParseHandler, "v2-parse"),
        r("/v2/parse/formats", ParseFormatsHandler, "v2-parse-formats"),
        r("/v2/search", SearchHandler, "v2-search"),
        r("/v1/search", SearchHandler, "v1-search", v1=True),
        # Firecrawl jobs, before sift's /v1/batch/{id} (`scrape` is not a job id)
        r("/v2/batch/scrape", BatchScrapeHandler, "v2-batch-scrape", version="v2"),
        r(
            f"/v2/batch/scrape/{JOB_ID}",
            JobHandler,
            "v2-batch-scrape-status",
            version="v2",
            kind="scrape",
        ),
        r(
            f"/v2/batch/scrape/{JOB_ID}/errors",
            ErrorsHandler,
            "v2-batch-scrape-errors",
            version="v2",
            kind="scrape",
        ),
        r("/v2/crawl", CrawlHandler, "v2-crawl", version="v2"),
        r("/v2/crawl/params-preview", ParamsPreviewHandler, "v2-crawl-params-preview"),
        r("/v2/crawl/active", ActiveCrawlsHandler, "v2-crawl-active", version="v2"),
        r(f"/v2/crawl/{JOB_ID}", JobHandler, "v2-crawl-status", version="v2", kind="crawl"),
        r(
            f"/v2/crawl/{JOB_ID}/errors",
            ErrorsHandler,
            "v2-crawl-errors",
            version="v2",
            kind="crawl",
        ),
        r("/v2/map", MapHandler, "v2-map", version="v2"),
        r("/v2/extract", ExtractHandler, "v2-extract"),
        r(f"/v2/extract/{EXTRACT_ID}", ExtractStatusHandler, "v2-extract-status"),
        r("/v1/batch/scrape", BatchScrapeHandler, "v1-batch-scrape", version="v1"),
        r(
            f"/v1/batch/scrape/{JOB_ID}",
            JobHandler,
            "v1-batch-scrape-status",
            version="v1",
            kind="scrape",
        ),
        r(
            f"/v1/batch/scrape/{JOB_ID}/errors",
            ErrorsHandler,
            "v1-batch-scrape-errors",
            version="v1",
            kind="scrape",
        ),
        r("/v1/crawl", CrawlHandler, "v1-crawl", version="v1"),
        r("/v1/crawl/active", ActiveCrawlsHandler, "v1-crawl-active", version="v1"),
        r(f"/v1/crawl/{JOB_ID}", JobHandler, "v1-crawl-status", version="v1", kind="crawl"),
        r(
            f"/v1/crawl/{JOB_ID}/errors",
            ErrorsHandler,
            "v1-crawl-errors",
            version="v1",
            kind="crawl",
        ),
        r("/v1/map", MapHandler, "v1-map", version="v1"),
        r("/v1/extract", ExtractHandler, "v1-extract"),
        r(f"/v1/extract/{EXTRACT_ID}", ExtractStatusHandler, "v1-extract-status"),
        # sift's batch jobs
        r("/v1/batch", BatchSubmitHandler, "batch"),
        r(f"/v1/batch/{JOB_ID}", BatchJobHandler, "batch-job"),
        r(rf"/v1/batch/{JOB_ID}/(\d{{1,6}})", BatchTargetHandler, "batch-target"),
        # Firecrawl usage: answered from sift's own state, nothing metered
        r("/v2/concurrency-check", ConcurrencyHandler, "v2-concurrency-check"),
        r("/v2/team/queue-status", QueueHandler, "v2-queue-status"),
        r("/v2/team/credit-usage", MeterHandler, "v2-credit-usage", what="credits"),
        r(
            "/v2/team/credit-usage/historical",
            MeterHandler,
            "v2-credit-usage-historical",
            what="credits",
            historical=True,
        ),
        r("/v2/team/token-usage", MeterHandler, "v2-token-usage", what="tokens"),
        r(
            "/v2/team/token-usage/historical",
            MeterHandler,
            "v2-token-usage-historical",
            what="tokens",
            historical=True,
        ),
        r("/v1/team/credit-usage", MeterHandler, "v1-credit-usage", what="credits", v1=True),
        r(
            "/v1/team/credit-usage/historical",
            MeterHandler,
            "v1-credit-usage-historical",
            what="credits",
            v1=True,
            historical=True,
        ),
        r("/v1/team/token-usage", MeterHandler, "v1-token-usage", what="tokens", v1=True),
        r(
            "/v1/team/token-usage/historical",
            MeterHandler,
            "v1-token-usage-historical",
            what="tokens",
            v1=True,
            historical=True,
        ),
    ]


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
