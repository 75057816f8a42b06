"""POST /v2/parse: a file the client uploads (HTML, PDF, JSON, text), read like `sift extract`.

The SDK sends multipart/form-data: a `file` part and an `options` part (JSON scrape options).
The file runs through the same document path as `sift extract` (`pipeline.run_local`: no
fetch, no guard; a PDF's pages cached by content hash under the caller's class) under the
same caps as a fetched body — a PDF up to `fetch.pdf_max_body`, anything else up to
`fetch.max_body`; over is 413 — and within the request deadline. sift answers markdown;
other formats asked for are named in `warning`.
"""

from __future__ import annotations

import asyncio
import hashlib
import json
import urllib.parse
from typing import Any

import tornado.httputil
import tornado.web

from sift.core.errors import BadRequest, OutOfTime, TooLarge
from sift.core.request import FetchParams
from sift.service import pipeline
from sift.web.firecrawl_base import FirecrawlHandler, document

FORM_OVERHEAD = 64 * 1024  # multipart boundaries and the options part
# What `pipeline.run_local` reads (GET /v2/parse/formats answers it, in the SDK's shape).
FORMATS = [
    ("pdf", [".pdf"], ["application/pdf"]),
    ("html", [".html", ".htm"], ["text/html"]),
    ("json", [".json"], ["application/json"]),
    ("text", [".txt", ".md"], ["text/plain", "text/markdown"]),
]


def _form(content_type: str, body: bytes) -> tuple[str, bytes, dict[str, Any]]:
    """(file name, file bytes, options) of a multipart body; 400 when it is not one."""
    if not content_type.startswith("multipart/form-data"):
        raise BadRequest("invalid request: parse takes multipart/form-data with a `file` part")
    args: dict[str, list[bytes]] = {}
    files: dict[str, list[tornado.httputil.HTTPFile]] = {}
    tornado.httputil.parse_body_arguments(content_type, body, args, files)
    if not files.get("file"):
        raise BadRequest("invalid request: the form has no `file` part")
    upload = files["file"][0]
    try:
        options = json.loads(args["options"][0]) if args.get("options") else {}
    except ValueError:
        raise BadRequest("invalid request: the `options` part is not JSON") from None
    return upload.filename or "upload", upload.body, options if isinstance(options, dict) else {}


@tornado.web.stream_request_body
class ParseHandler(FirecrawlHandler):
    route = "/v2/parse"

    def initialize(self, svc: Any, callers: Any) -> None:
        super().initialize(svc, callers)
        self.body_cap = svc.cfg.fetch.pdf_max_body + FORM_OVERHEAD

    async def post(self) -> None:
        assert self.caller is not None
        content_type = self.request.headers.get("Content-Type", "")
        body = self.body
        name, data, options = await self.svc.compute(_form, content_type, body, cost=len(body))
        fetch = self.svc.cfg.fetch
        cap = fetch.pdf_max_body if data[:5] == b"%PDF-" else fetch.max_body
        if len(data) > cap:
            raise TooLarge(f"too large (>{cap // 1_000_000} MB): the file is over sift's cap")
        digest = hashlib.sha256(data).hexdigest()[:16]
        url = f"upload:{digest}/{urllib.parse.quote(name)}"
        params = FetchParams(url=url, context=False)
        deadline = self.svc.cfg.request_deadline
        try:
            result = await asyncio.wait_for(
                pipeline.run_local(self.svc, data, name, params, caller=self.caller),
                deadline,
            )
        except TimeoutError:
            raise OutOfTime(deadline) from None
        doc = document(name, result)
        doc["metadata"]["url"] = name
        asked = {f.get("type") if isinstance(f, dict) else f for f in options.get("formats") or []}
        if asked - {"markdown", None}:
            doc["warning"] = "sift's parse answers markdown only; not produced: " + ", ".join(
                sorted(str(f) for f in asked - {"markdown", None})
            )
        self.send_json({"success": True, "data": doc})


class ParseFormatsHandler(FirecrawlHandler):
    route = "/v2/parse"

    def get(self) -> None:
        formats = [{"format": name, "kind": "document", "extensions": ext, "mimeTypes": mimes,
                    "available": True} for name, ext, mimes in FORMATS]  # fmt: skip
        self.send_json({"success": True, "data": {"formats": formats}})
