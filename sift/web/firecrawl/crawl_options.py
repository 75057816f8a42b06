"""A Firecrawl crawl's options, read from its body into the bounds stored with the job: its
scope (`allowSubdomains`, `crawlEntireDomain`, `allowExternalLinks`, include/exclude paths),
`delay`, `ignoreQueryParameters`, and the options as `/v2/crawl/active` lists them."""

from __future__ import annotations

import urllib.parse
from typing import Any

from sift.core.errors import BadRequest
from sift.fetch.scope import Scope, patterns

MAX_DELAY = 60.0  # seconds between pages: longer would hold a worker's job slot for hours


def flag(body: dict[str, Any], name: str) -> bool:
    """A true/false option (absent or null: false); anything else is a 400 naming it."""
    value = body.get(name)
    if value is None:
        return False
    if not isinstance(value, bool):
        raise BadRequest(f"invalid request: `{name}` must be true or false")
    return value


def scope(body: dict[str, Any], url: str) -> Scope:
    """The URLs the crawl may reach: the start URL's site, below its path unless
    `crawlEntireDomain` (v1: `allowBackwardLinks`), its subdomains with `allowSubdomains`,
    any site with `allowExternalLinks` (the guard checks each host as it is fetched)."""
    parts = urllib.parse.urlsplit(url)
    whole = flag(body, "crawlEntireDomain") or flag(body, "allowBackwardLinks")
    return Scope(
        parts.hostname or "",
        flag(body, "allowSubdomains"),
        patterns(body.get("includePaths"), "includePaths"),
        patterns(body.get("excludePaths"), "excludePaths"),
        below="" if whole else parts.path or "/",
        external=flag(body, "allowExternalLinks"),
    )


def delay(body: dict[str, Any]) -> float:
    """`delay`: seconds between one page's end and the next's start (0 to 60)."""
    value = body.get("delay")
    if value is None:
        return 0.0
    if isinstance(value, bool) or not isinstance(value, int | float) or not 0 <= value <= MAX_DELAY:
        raise BadRequest(f"invalid request: `delay` must be 0 to {MAX_DELAY:.0f} seconds")
    return float(value)


# The crawl options `/v2/crawl/active` lists, as asked (Firecrawl's v2 names).
LISTED = (
    "includePaths",
    "excludePaths",
    "crawlEntireDomain",
    "allowSubdomains",
    "allowExternalLinks",
    "ignoreQueryParameters",
    "delay",
)


def listed(
    body: dict[str, Any], limit: int, depth: int | None, mode: str, opts: dict[str, Any]
) -> dict[str, object]:
    """The crawl's options as Firecrawl lists an active crawl's (`options`)."""
    out: dict[str, object] = {k: body[k] for k in LISTED if body.get(k) is not None}
    out |= {"limit": limit, "sitemap": mode}
    if depth is not None:
        out["maxDiscoveryDepth"] = depth
    if opts.get("formats") is not None:
        out["scrapeOptions"] = {"formats": opts["formats"]}
    return out
