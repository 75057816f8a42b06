"""POST /v2/map (and /v1/map): a site's URLs, from its sitemaps and the page's own links
(`sift.service.firecrawl.site_map`); v2 answers `links` of {url}, v1 plain strings."""

from __future__ import annotations

import tornado.web

from sift.core.errors import BadRequest
from sift.core.request import ScrapeTarget
from sift.service.firecrawl import site_map
from sift.service.params import check
from sift.web.firecrawl.base import Versioned, with_scheme
from sift.web.firecrawl.jobs import sitemap_mode, whole_number


@tornado.web.stream_request_body
class MapHandler(Versioned):
    """POST /v2/map: the site's URLs (`links` of {url}; v1: plain strings)."""

    route = "/v2/map"

    async def post(self) -> None:
        assert self.caller is not None
        body = self.json_body()
        url = body.get("url")
        if not isinstance(url, str) or not url.strip():
            raise BadRequest("invalid request: `url` is required and must be a string")
        url = with_scheme(url)
        check(ScrapeTarget(url=url))
        self.svc.guard.precheck(url)
        search = body.get("search")
        if search is not None and not isinstance(search, str):
            raise BadRequest("invalid request: `search` must be a string")
        limit = whole_number(body, "limit")
        limit = 5000 if limit is None else limit
        if not 1 <= limit <= site_map.MAX_LIMIT:
            raise BadRequest(f"invalid request: `limit` must be 1 to {site_map.MAX_LIMIT}")
        mode = sitemap_mode(body)
        req = site_map.MapRequest(url, search, body.get("includeSubdomains") is True, limit, mode)
        links = await site_map.site_map(self.svc, self.caller, req)
        if self.version == "v1":
            self.send_json({"success": True, "links": links})
        else:
            self.send_json({"success": True, "links": [{"url": u} for u in links]})
