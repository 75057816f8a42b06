"""POST /v1/fetch: sift's own API — a JSON body in, the fetch envelope (or the one error shape)
out."""

from __future__ import annotations

import tornado.web

from sift.service import pipeline
from sift.service.params import parse_params
from sift.web.base import BaseHandler


@tornado.web.stream_request_body
class FetchHandler(BaseHandler):
    route = "/v1/fetch"

    async def post(self) -> None:
        assert self.caller is not None
        params = parse_params(self.body)
        result = await pipeline.within(
            self.svc,
            self.caller,
            params,
            self.trace,
            self.svc.cfg.request_deadline,
            gone=self.gone,
        )
        self.send_json(result.envelope)
