"""The Tornado application: routes to handlers, one error shape, the request log."""

from __future__ import annotations

import tornado.web

from sift.core.callers import Callers
from sift.service.services import Services
from sift.web import batch, firecrawl_extract, firecrawl_jobs, firecrawl_usage
from sift.web.base import NotFoundHandler
from sift.web.fetch import FetchHandler
from sift.web.firecrawl_parse import ParseFormatsHandler, ParseHandler
from sift.web.firecrawl_search import SearchHandler
from sift.web.health import HealthHandler, MetricsHandler
from sift.web.logs import log_request
from sift.web.reader import ReaderHandler
from sift.web.scrape import ScrapeHandler


def make_app(svc: Services, callers: Callers) -> tornado.web.Application:
    deps = {"svc": svc, "callers": callers}
    return tornado.web.Application(
        [
            (r"/v1/fetch", FetchHandler, deps),
            (r"/v2/scrape", ScrapeHandler, {**deps, "route": "/v2/scrape"}),
            (r"/v1/scrape", ScrapeHandler, {**deps, "route": "/v1/scrape"}),
            (r"/r/(.*)", ReaderHandler, deps),
            (r"/healthz", HealthHandler, deps),
            (r"/metrics", MetricsHandler, deps),
            *firecrawl_jobs.routes(deps),  # before /v1/batch/{id}: `scrape` is not a job id
            *[(path, handler, deps) for path, handler in batch.ROUTES],
            (r"/v2/search", SearchHandler, deps),
            (r"/v1/search", SearchHandler, {**deps, "v1": True}),
            (r"/v2/parse", ParseHandler, deps),
            (r"/v2/parse/formats", ParseFormatsHandler, deps),
            *firecrawl_extract.routes(deps),
            *firecrawl_usage.routes(deps),
        ],
        default_handler_class=NotFoundHandler,
        default_handler_args=deps,
        log_function=log_request,
        compress_response=True,
        serve_traceback=False,
    )
