"""A site's URLs for Firecrawl's `map` (and a crawl's robots.txt): robots.txt's `Sitemap:`
lines, /sitemap.xml, nested sitemap indexes (gzipped too), and the page's own links.

Every URL goes through the guard and the fetch gates like any fetch; the page itself goes
through the pipeline (and its cache). robots.txt and sitemap bodies are read straight upstream
(`svc.upstream`), past the pipeline: they are not documents an agent reads, and the content
cache keeps only those.
"""

from __future__ import annotations

import time
import urllib.parse
from dataclasses import dataclass

from sift.core.callers import Caller
from sift.core.errors import Busy, SiftError, TooLarge
from sift.core.request import ScrapeTarget
from sift.fetch import sitemaps
from sift.fetch.robots import Robots
from sift.fetch.scope import Scope, unique
from sift.fetch.transfer import media_type
from sift.service.document import Trace
from sift.service.firecrawl.scrape import document
from sift.service.parts.runtime import Runtime
from sift.service.steps import pipeline, usage

MAX_LIMIT = 100_000  # Firecrawl's own cap on `limit`
LLMS_FILES = ("llms.txt", "llms-full.txt")  # a site's index for language models (llmstxt.org)
HTML_TYPES = frozenset({"text/html", "application/xhtml+xml"})


@dataclass(frozen=True)
class MapRequest:
    url: str
    search: str | None = None
    subdomains: bool = False
    limit: int = 5000
    sitemap: str = "include"  # include | skip | only


async def fetch_body(svc: Runtime, caller: Caller, url: str) -> bytes | None:
    """A body read upstream (guard, gates, fetch actor); None for a failed fetch or a
    non-2xx (a missing sitemap is normal). Busy gates are the caller's 429, not a silence."""
    try:
        res = await svc.upstream.fetch(caller.name, url)
    except Busy:
        raise
    except SiftError:
        return None
    return res.body if 200 <= res.status < 300 else None


def root_of(url: str) -> str:
    parts = urllib.parse.urlsplit(url)
    return f"{parts.scheme}://{parts.netloc}"


async def robots(svc: Runtime, caller: Caller, url: str) -> Robots:
    """The site's robots.txt for sift, as every fetch reads it (allow-all when missing or
    unreadable)."""
    return await usage.robots_txt(svc, caller, url) or Robots("")


async def llms_txt(svc: Runtime, caller: Caller, url: str) -> list[str]:
    """The site's `llms.txt` and `llms-full.txt` where it has them: a 2xx that is not an HTML
    page (a site that answers every path with its home page has none), or one over the body
    cap (it is there, only long)."""
    found = []
    for name in LLMS_FILES:
        there = f"{root_of(url)}/{name}"
        try:
            res = await svc.upstream.fetch(caller.name, there)
        except TooLarge:
            found.append(there)
            continue
        except Busy:
            raise
        except SiftError:
            continue
        if 200 <= res.status < 300 and media_type(res.content_type) not in HTML_TYPES:
            found.append(there)
    return found


async def sitemap_urls(
    svc: Runtime, caller: Caller, url: str, found: Robots, budget: int, deadline: float
) -> list[str]:
    """Page URLs of the site's sitemaps: robots.txt's, else /sitemap.xml; indexes followed,
    at most `budget` sitemap documents, until `deadline` (monotonic)."""
    queue = list(found.sitemaps) or [f"{root_of(url)}/sitemap.xml"]
    seen: set[str] = set()
    urls: list[str] = []
    while queue and budget > 0 and time.monotonic() < deadline:
        sm = queue.pop(0)
        if sm in seen:
            continue
        seen.add(sm)
        budget -= 1
        body = await fetch_body(svc, caller, sm)
        if not body:
            continue
        parsed = await svc.cpu.compute(sitemaps.parse, body, cost=len(body))
        queue.extend(parsed.children)
        urls.extend(parsed.urls)
    return urls


async def page_links(svc: Runtime, caller: Caller, url: str, budget: float) -> list[str]:
    """The page's own links, fetched through the pipeline (guard, gates, cache)."""
    p = ScrapeTarget(url=url, context=False, formats=("links",))
    result = await pipeline.within(svc, caller, p, Trace(), budget, strict=False)
    _, links = await document(svc, p, result, {"links"})
    return links


async def site_map(svc: Runtime, caller: Caller, req: MapRequest) -> list[str]:
    """The site's URLs: in scope, filtered by `search` (case-insensitive, in the URL), at most
    `limit`. The page's own fetch errors are the map's errors (a blocked URL is a 403)."""
    deadline = time.monotonic() + svc.cfg.request_deadline
    scope = Scope(urllib.parse.urlsplit(req.url).hostname or "", req.subdomains)
    links: list[str] = []
    if req.sitemap != "only":
        links = await page_links(svc, caller, req.url, svc.cfg.request_deadline)
    found: list[str] = await llms_txt(svc, caller, req.url)
    if req.sitemap != "skip":
        rules = await robots(svc, caller, req.url)
        budget = svc.cfg.batch.map_sitemaps
        found += await sitemap_urls(svc, caller, req.url, rules, budget, deadline)
    candidates = [req.url, *found, *links] if req.sitemap != "only" else found
    word = (req.search or "").lower()
    picked = []
    for u in unique((u for u in candidates if scope.keeps(u)), set()):
        if word and word not in u.lower():
            continue
        picked.append(u)
        if len(picked) >= req.limit:
            break
    return picked
