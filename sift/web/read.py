"""POST /v1/read (many sources, one question, one budget) and POST /v1/verify (is a quote in
a page): JSON in, the answer or the one error shape out. A source that fails is reported in
the read's answer with sift's error; only a bad request fails the read itself."""

from __future__ import annotations

import tornado.web

from sift.service.entries.read import parse_read, read
from sift.service.entries.verify import parse_verify, verify
from sift.web.base import BaseHandler


@tornado.web.stream_request_body
class ReadHandler(BaseHandler):
    route = "/v1/read"

    async def post(self) -> None:
        assert self.caller is not None
        cfg = self.svc.cfg.read
        req = parse_read(self.json_body(), cfg.max_urls, cfg.max_tokens)
        self.trace.private = any(p.private for p in req.sources)
        self.send_json(await read(self.svc, self.caller, req, self.gone))


@tornado.web.stream_request_body
class VerifyHandler(BaseHandler):
    route = "/v1/verify"

    async def post(self) -> None:
        assert self.caller is not None
        v, p = parse_verify(self.body)
        self.trace.private = p.private
        self.send_json(await verify(self.svc, self.caller, v, p, self.gone))
