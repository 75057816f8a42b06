"""POST /v2/search and /v1/search: web search through the operator's SearXNG instance.

sift has no search index of its own. With `[search] searxng_url` set, a query goes to that
instance's JSON API (`/search?q=…&format=json`) — the operator's endpoint, reached directly at
its configured address and never through the caller-facing guard (which stays shut to it),
under the gates, never the cache (results go stale) — and its results come back in Firecrawl's
shape. With `scrapeOptions` asking for formats, each web result is also scraped through the
normal pipeline (guard, gates, cache), within the request's deadline. Without SearXNG the
answer is a 400 that says how to configure it: the request cannot succeed as sent, and a 4xx
is not retried by the SDK (a 5xx or 501 would read as sift failing, not as a setting).
"""

from __future__ import annotations

import asyncio
import urllib.parse
from typing import Any

import msgspec
import tornado.web

from sift.core.errors import BadRequest, SiftError, UpstreamError
from sift.digest import structured
from sift.fetch import direct
from sift.service.document import Trace
from sift.service.firecrawl import pdf_pages, scrape
from sift.service.steps import pipeline
from sift.web.firecrawl.base import FirecrawlHandler
from sift.web.firecrawl.extract import json_spec
from sift.web.firecrawl.scrape import (
    JOB_FORMATS,
    device_notes,
    option_notes,
    params_from,
    parse_formats,
    wait_notes,
)

NOT_CONFIGURED = (
    "search is not configured: sift searches through a SearXNG instance; set "
    "`[search] searxng_url = \"http://HOST:PORT\"` in sift's config (with `json` in SearXNG's "
    "`search.formats`) and restart sift"
)
CATEGORIES = {"web": "general", "news": "news", "images": "images"}


class _Hit(msgspec.Struct):
    url: str = ""
    title: str = ""
    content: str = ""
    publishedDate: str | None = None  # SearXNG's name
    img_src: str = ""


class _Answer(msgspec.Struct):
    results: list[_Hit] = []


def _request(body: dict[str, Any], cap: int) -> tuple[str, int, list[str], dict[str, Any]]:
    """(query, limit, sources, scrapeOptions) of a search body; 400 naming a bad field."""
    query = body.get("query")
    if not isinstance(query, str) or not query.strip():
        raise BadRequest("invalid request: `query` is required and must be a non-empty string")
    limit = body.get("limit", 5)
    if isinstance(limit, bool) or not isinstance(limit, int) or limit < 1:
        raise BadRequest("invalid request: `limit` must be a positive integer")
    asked = body.get("sources") or ["web"]
    if not isinstance(asked, list):
        raise BadRequest("invalid request: `sources` must be a list of web, news, images")
    sources = []
    for s in asked:
        name = s.get("type") if isinstance(s, dict) else s
        if not isinstance(name, str):
            raise BadRequest(f"invalid request: source {name!r}: sift searches web, news, images")
        sources.append(name)  # one sift does not search is ignored (named in `warning`)
    options = body.get("scrapeOptions") or {}
    if not isinstance(options, dict):
        raise BadRequest("invalid request: `scrapeOptions` must be an object")
    if options.get("formats"):  # the options' own checks, before the search (any URL will do)
        params_from({**options, "url": "-"}, _formats(options))
        pdf_pages.parse(options)
    return query, min(limit, cap), sources, options


def _formats(options: dict[str, Any]) -> set[str]:
    """A search scrapes as a job does, `json` (the model, on each result) too."""
    return parse_formats(options.get("formats"), JOB_FORMATS | {"json"}, where="search")


def _item(source: str, hit: _Hit, position: int) -> dict[str, Any]:
    if source == "images":
        return {
            "title": hit.title,
            "imageUrl": hit.img_src or hit.url,
            "url": hit.url,
            "position": position,
        }
    item: dict[str, Any] = {"url": hit.url, "title": hit.title, "position": position}
    if source == "news":
        item.update(snippet=hit.content, date=hit.publishedDate)
    else:
        item["description"] = hit.content
    return item


@tornado.web.stream_request_body
class SearchHandler(FirecrawlHandler):
    route = "/v2/search"

    def initialize(self, svc: Any, callers: Any, v1: bool = False) -> None:
        super().initialize(svc, callers)
        self.v1 = v1
        self.route = "/v1/search" if v1 else "/v2/search"

    async def post(self) -> None:
        base = self.svc.cfg.search.searxng_url
        if not base:
            raise BadRequest(NOT_CONFIGURED)
        body = self.json_body()
        query, limit, sources, options = _request(body, self.svc.cfg.search.max_results)
        if (spec := json_spec(options)) is not None:
            structured.check_request(self.svc.cfg.digest, *spec)  # no model: 400 before
        self._asked = body.get("limit", 5)
        data: dict[str, list[dict[str, Any]]] = {}
        ignored = [s for s in sources if s not in CATEGORIES]
        for source in (s for s in sources if s in CATEGORIES):
            hits = (await self._searx(base, query, CATEGORIES[source]))[:limit]
            data[source] = [_item(source, h, i + 1) for i, h in enumerate(hits) if h.url]
        if options.get("formats") and data.get("web"):
            await self._scrape(data["web"], options)
        answer: dict[str, Any] = {"success": True, "data": data.get("web", []) if self.v1 else data}
        warnings = [f"sources sift does not search, ignored: {', '.join(ignored)}"] * bool(ignored)
        if self._asked > limit:
            warnings.append(f"at most {limit} results a search (`[search] max_results`)")
        if warnings:
            answer["warning"] = "; ".join(warnings)
        self.send_json(answer)

    async def _searx(self, base: str, query: str, category: str) -> list[_Hit]:
        """The SearXNG JSON answer for one category. SearXNG is the operator's endpoint, not
        caller input: reached directly at its configured address (`sift.fetch.direct`), never
        through the caller-facing guard; the URLs it answers pass the guard when scraped."""
        qs = urllib.parse.urlencode({"q": query, "format": "json", "categories": category})
        url = f"{base.rstrip('/')}/search?{qs}"
        fetch = self.svc.cfg.fetch
        assert self.caller is not None
        async with self.svc.gates.gate(
            urllib.parse.urlsplit(base).hostname or "", self.caller.name
        ):
            status, body = await direct.get(
                url,
                "the search engine",
                timeout=fetch.timeout,
                cap=fetch.max_body,
                user_agent=fetch.user_agent,
            )
        if status != 200:
            why = f"the search engine answered HTTP {status}"
            if status == 403:
                why += " (is `json` in SearXNG's `search.formats`?)"
            raise UpstreamError(why)
        try:
            return msgspec.json.decode(body, type=_Answer).results
        except msgspec.DecodeError:
            raise UpstreamError("the search engine's answer is not SearXNG JSON") from None

    async def _scrape(self, items: list[dict[str, Any]], options: dict[str, Any]) -> None:
        """Each result's document, through the pipeline, side by side within the deadline,
        with the scrape options honoured or named in its `warning`, as `/v2/scrape` does."""
        assert self.caller is not None
        caller, deadline = self.caller, self.svc.cfg.request_deadline
        formats = _formats(options)
        parser = pdf_pages.parse(options)
        notes = option_notes(options, parser)
        git_diff = scrape.tracking_options(options.get("formats"))[0]
        cap = self.svc.cfg.out_cap

        async def one(item: dict[str, Any]) -> None:
            try:
                p = params_from({**options, "url": item["url"]}, formats)
                result = await pipeline.within(
                    self.svc,
                    caller,
                    p,
                    Trace(),
                    deadline,
                    strict=False,
                    wait_renders=True,
                )
                more = notes + wait_notes(self.svc, p, result.doc)
                more += device_notes(options, p, result.doc)
                said = scrape.Options(tuple(more), parser.max_pages, git_diff=git_diff)
                data, _ = await scrape.document(self.svc, p, result, formats, said)
                pdf_pages.apply(data, result.doc, parser, cap)
                if (spec := json_spec(options)) is not None:
                    content = result.envelope.content
                    data["json"] = await structured.extract(self.svc.cfg.digest, content, *spec)
            except SiftError as exc:
                item["warning"] = f"not scraped: {exc.message}"
                return
            item.update(data)

        await asyncio.gather(*(one(item) for item in items))
