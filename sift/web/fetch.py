"""POST /v1/fetch: sift's own API — a JSON body in, the fetch envelope (or the one error shape)
out. A plain answer of a fresh cached page is kept ready (`service/answers.py`): the next
identical request from the caller's class is answered at the edge (`web/edge.py`)."""

from __future__ import annotations

import msgspec
import tornado.web

from sift.service import pipeline
from sift.service.answers import Ready, expiry, memoizable
from sift.service.params import parse_params
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
        doc = result.doc
        if memoizable(params, doc, self.trace):
            key = (params.url, self.caller.cls)
            if self.svc.hot.get(key) is doc.content:
                ttl = self.svc.cfg.cache.ttl
                ready = Ready(
                    data,
                    doc.content,
                    key,
                    expiry(doc.content, ttl, params.max_age),
                    self.trace.host,
                )
                self.svc.answers.put(self.caller.cls, body, ready)
        self.send_encoded(data)
