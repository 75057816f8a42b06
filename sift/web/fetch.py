"""POST /v1/fetch: sift's own API — the envelope of DESIGN §2."""

from __future__ import annotations

import tornado.web

from sift import pipeline
from sift.errors import UpstreamError
from sift.request import parse_params
from sift.web.base import BaseHandler


@tornado.web.stream_request_body
class FetchHandler(BaseHandler):
    route = "/v1/fetch"

    async def post(self) -> None:
        assert self.caller is not None
        params = parse_params(self.body)
        result = await pipeline.run(self.svc, self.caller, params, self.trace)
        doc = result.doc
        if doc.status >= 400:
            self.trace.outcome = "upstream_4xx" if doc.status < 500 else "upstream_5xx"
            raise UpstreamError(
                f"upstream {doc.status} {doc.reason}".strip(), upstream_status=doc.status
            )
        self.send_json(result.envelope)
