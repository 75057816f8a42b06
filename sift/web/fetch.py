"""POST /v1/fetch: sift's own API — a JSON body in, the fetch envelope (or the one error shape)
out. A plain answer of a fresh cached page is kept ready (`service/parts/ready.py`): the next
identical request from the caller's class is answered at the edge (`web/edge.py`)."""

from __future__ import annotations

import msgspec
import tornado.web

from sift.service.params import parse_params
from sift.service.steps import pipeline
from sift.web import ready
from sift.web.base import BaseHandler


@tornado.web.stream_request_body
class FetchHandler(BaseHandler):
    route = "/v1/fetch"

    async def post(self) -> None:
        assert self.caller is not None
        body = self.body
        params = parse_params(body)
        result = await pipeline.within(
            self.svc,
            self.caller,
            params,
            self.trace,
            self.svc.cfg.request_deadline,
            gone=self.gone,
        )
        data = msgspec.json.encode(result.envelope)
        ready.keep(self, params, result.doc, body, data)
        self.send_encoded(data)
