"""POST /v2/crawl/params-preview: a prompt turned into crawl options by the configured model
(none: a 400 saying how to set one). The answer is only a suggestion, in the shape of the
crawl request: the caller starts the crawl with it, and every option passes the crawl's own
checks then."""

from __future__ import annotations

from typing import Any

import tornado.web

from sift.core.errors import BadRequest
from sift.digest import structured
from sift.web.firecrawl.base import FirecrawlHandler

# The crawl options a model may suggest, as the crawl request spells them.
OPTIONS: dict[str, Any] = {
    "type": "object",
    "properties": {
        "includePaths": {"type": "array", "items": {"type": "string"}},
        "excludePaths": {"type": "array", "items": {"type": "string"}},
        "maxDiscoveryDepth": {"type": "integer", "minimum": 0},
        "limit": {"type": "integer", "minimum": 1},
        "sitemap": {"enum": ["include", "skip", "only"]},
        "crawlEntireDomain": {"type": "boolean"},
        "allowSubdomains": {"type": "boolean"},
        "ignoreQueryParameters": {"type": "boolean"},
    },
    "additionalProperties": False,
}
# A map's options (`POST /v2/map` with a `prompt`).
MAP_OPTIONS: dict[str, Any] = {
    "type": "object",
    "properties": {
        "search": {"type": "string"},
        "includeSubdomains": {"type": "boolean"},
        "limit": {"type": "integer", "minimum": 1},
        "sitemap": {"enum": ["include", "skip", "only"]},
    },
    "additionalProperties": False,
}
ASK = (
    "Turn this request into options for a {what} that starts at {url}. Paths are regular "
    "expressions matched against the URL path; `search` is words the URLs should contain. Use "
    "only the options the request calls for. The request: {prompt}"
)


async def model_options(
    svc: Any, url: str, prompt: str, schema: dict[str, Any] = OPTIONS, what: str = "crawl"
) -> dict[str, Any]:
    """The options the model reads in `prompt`, valid against `schema` (a crawl's, or a
    map's); no model: a 400 saying how to set one."""
    structured.check_request(svc.cfg.digest, prompt, schema)
    ask = ASK.format(what=what, url=url, prompt=prompt)
    data = await structured.extract(svc.cfg.digest, f"Start URL: {url}", ask, schema)
    return dict(data)


@tornado.web.stream_request_body
class ParamsPreviewHandler(FirecrawlHandler):
    route = "/v2/crawl/params-preview"

    async def post(self) -> None:
        body = self.json_body()
        url, prompt = body.get("url"), body.get("prompt")
        if not isinstance(url, str) or not url.strip():
            raise BadRequest("invalid request: `url` is required and must be a string")
        if not isinstance(prompt, str) or not prompt.strip():
            raise BadRequest("invalid request: `prompt` is required and must be a string")
        self.svc.guard.precheck(url)
        data = await model_options(self.svc, url, prompt)
        self.send_json({"success": True, "data": {"url": url, **data}})
