"""POST /v2/scrape and /v1/scrape: the Firecrawl scrape API, as the firecrawl-py SDK uses it.

Fields sift has no use for are accepted and ignored (an SDK ahead of sift must still work);
formats sift cannot produce are a 400 that says so. The target's own HTTP errors are
`success: true` with `metadata.statusCode`, as Firecrawl does. sift's upstream failures are
500 here, never 502: the SDK retries a 502 three times, repeating the work.
"""

from __future__ import annotations

from typing import Any

import tornado.web

from sift.core.errors import BadRequest, OutOfTime, SiftError, UpstreamError
from sift.core.request import FetchParams
from sift.service import firecrawl, pipeline
from sift.service.params import check
from sift.web.base import BaseHandler

FORMATS = {"markdown", "html", "rawHtml", "links"}


def parse_formats(raw: Any) -> set[str]:
    if raw is None:
        return {"markdown"}
    if not isinstance(raw, list):
        raise BadRequest("invalid request: `formats` must be a list")
    names = set()
    for item in raw:
        name = item.get("type") if isinstance(item, dict) else item
        if not isinstance(name, str):
            raise BadRequest('invalid request: each of `formats` is a name or {"type": name}')
        if name not in FORMATS:
            raise BadRequest(
                f"format {name!r} is not supported by sift (no browser, no LLM extraction); "
                "use markdown, html, rawHtml or links"
            )
        names.add(name)
    return names or {"markdown"}


def params_from(body: dict[str, Any]) -> FetchParams:
    url = body.get("url")
    if not isinstance(url, str):
        raise BadRequest("invalid request: `url` is required and must be a string")
    timeout = body.get("timeout")
    if timeout is not None and (
        isinstance(timeout, bool) or not isinstance(timeout, int | float) or timeout <= 0
    ):
        raise BadRequest("invalid request: `timeout` must be a positive number of milliseconds")
    headers = body.get("headers")
    if headers is not None and (
        not isinstance(headers, dict) or not all(isinstance(v, str) for v in headers.values())
    ):
        raise BadRequest("invalid request: `headers` must be an object of strings")
    return check(
        FetchParams(
            url=url,
            context=False,
            timeout=timeout / 1000 if timeout else None,
            headers=headers or None,
        )
    )


@tornado.web.stream_request_body
class ScrapeHandler(BaseHandler):
    route = "/v2/scrape"

    def initialize(self, svc: Any, callers: Any, route: str = "/v2/scrape") -> None:
        super().initialize(svc, callers)
        self.route = route

    async def post(self) -> None:
        assert self.caller is not None
        body = self.json_body()
        formats = parse_formats(body.get("formats"))
        params = params_from(body)
        try:
            result = await pipeline.within(
                self.svc, self.caller, params, self.trace, self.svc.cfg.request_deadline,
                strict=False, gone=self.gone,
            )  # fmt: skip
        except OutOfTime as late:
            # Nothing ready in time; the work goes on and fills the cache. The SDK gets a
            # note to ask again instead of an error it would retry at once.
            note = late.message
            pending = {"title": "", "sourceURL": params.url, "url": params.url, "statusCode": 202}
            self.send_json({"success": True, "data": {"markdown": note, "metadata": pending,
                                                       "warning": note}})  # fmt: skip
            return
        data, _ = await firecrawl.document(self.svc, params, result, formats)
        self.send_json({"success": True, "data": data})

    def write_error(self, status_code: int, **kwargs: Any) -> None:
        exc = kwargs.get("exc_info", (None, None, None))[1]
        if isinstance(exc, UpstreamError) or status_code == 502:
            self.set_status(500)
        super().write_error(self.get_status(), **kwargs)

    def error_body(self, err: SiftError) -> dict[str, Any]:
        return {"success": False, "error": err.message}
