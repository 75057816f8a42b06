"""A Firecrawl job's targets (batch scrape, crawl): each URL its own scrape, with every option
and format `/v2/scrape` takes — `json` through the configured model (refused up front without
one), `summary`, `screenshot`, `images`, `links`, `parsers` — read once for the whole job, with
the notes on what sift cannot honour as asked, which each document's `warning` carries.

The caller's own `headers` are refused (400) unless they carry no credential (a `User-Agent`):
a job's targets are stored, and a credential may hide in any other header. A URL without a
scheme gets `https://`; its `sourceURL` stays as written.
"""

from __future__ import annotations

from typing import Any

import msgspec

from sift.core.config import DigestConfig
from sift.core.errors import BadRequest
from sift.core.request import ScrapeTarget
from sift.digest import structured
from sift.service.firecrawl import pdf_pages, scrape
from sift.web.firecrawl.base import with_scheme
from sift.web.firecrawl.extract import json_spec
from sift.web.firecrawl.scrape import country_note, option_notes, params_from, parse_formats

# The headers a job may carry: they say how to ask, not who asks.
PLAIN = frozenset({"user-agent", "accept", "accept-language", "referer", "dnt", "cache-control"})


class JobScrape:
    """A job's scrape options (`scrapeOptions`, or a batch scrape's body): `target(url)`."""

    def __init__(self, opts: dict[str, Any], digest: DigestConfig) -> None:
        headers = opts.get("headers") or {}
        if not isinstance(headers, dict) or any(k.lower() not in PLAIN for k in headers):
            raise BadRequest(
                "invalid request: a job's `headers` may only be "
                f"{', '.join(sorted(PLAIN))} (its targets are stored, the caller's "
                "credentials never are): scrape a page behind a login with /v2/scrape"
            )
        self.opts = {k: v for k, v in opts.items() if k != "url"}
        self.formats = parse_formats(opts.get("formats"))
        self.parser = pdf_pages.parse(opts)
        self.notes = tuple(option_notes(opts, self.parser) + country_note(opts))
        self.git_diff = scrape.tracking_options(opts.get("formats"))[0]
        self.prompt: str | None = None
        self.schema: dict[str, Any] | None = None
        spec = json_spec(opts)
        if spec is not None:
            structured.check_request(digest, *spec)  # no model: 400 before the job starts
            self.prompt, self.schema = spec

    def target(self, url: str, discover: bool = False) -> ScrapeTarget:
        """`url`'s scrape (a 400 naming what is wrong with it or the options)."""
        full = with_scheme(url)
        p = params_from({**self.opts, "url": full}, self.formats)
        fields = {f: getattr(p, f) for f in p.__struct_fields__}
        return ScrapeTarget(
            **fields,
            formats=tuple(sorted(self.formats)),
            discover=discover,
            asked=url if full != url else "",
            json_prompt=self.prompt,
            json_schema=self.schema,
            notes=self.notes,
            max_pages=self.parser.max_pages,
            page_list=self.parser.pages,
            page_markers=self.parser.markers,
            git_diff=self.git_diff,
        )


def template_of(target: ScrapeTarget) -> ScrapeTarget:
    """The options a crawl's next pages are scraped with: the start target's, its own URL's
    details left out."""
    return msgspec.structs.replace(target, asked="", depth=0)
