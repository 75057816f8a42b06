"""POST /v2/parse: a file the client uploads (HTML, PDF, office, JSON, text), read like
`sift extract`.

The SDK sends multipart/form-data: a `file` part and an `options` part (JSON scrape options).
The file runs through the same document path as `sift extract` (no fetch, no guard; a PDF's
pages cached by content hash under the uploading caller's class) under the same caps as a
fetched body — a PDF up to `fetch.pdf_max_body`, an office file or e-book (by its name or
first bytes) up to `fetch.office_max_body`, anything else up to `fetch.max_body`; over is
413 — and within the request deadline (lowered by `timeout`): out of time, the extraction goes
on into the cache and the answer is the pages so far, or a note to ask again. The upload is
joined, parsed and hashed (once) on a CPU thread. sift answers markdown; other formats asked
for, and the cleaning and `parsers` options it does not apply, are named in `warning`.
"""

from __future__ import annotations

import json
import urllib.parse
from typing import Any

import tornado.httputil
import tornado.web

from sift.clean import formats
from sift.core.errors import BadRequest, OutOfTime, TooLarge
from sift.core.request import FetchParams
from sift.service.entries import local_run
from sift.service.steps import local
from sift.web.firecrawl.base import FirecrawlHandler, document, pending
from sift.web.firecrawl.scrape import _ms, unhonoured

# Scrape options that would change an upload's markdown, which parse does not apply.
UNAPPLIED = ("includeTags", "excludeTags", "parsers")

FORM_OVERHEAD = 64 * 1024  # multipart boundaries and the options part
# What `local_run.local_document` reads (GET /v2/parse/formats answers it, in the SDK's shape).
FORMATS = [
    ("pdf", [".pdf"], ["application/pdf"]),
    ("html", [".html", ".htm"], ["text/html"]),
    ("json", [".json"], ["application/json"]),
    ("text", [".txt", ".md"], ["text/plain", "text/markdown"]),
    (
        "image",  # read by OCR (Tesseract)
        [".png", ".jpg", ".jpeg", ".webp", ".tif", ".tiff", ".gif"],
        ["image/png", "image/jpeg", "image/webp", "image/tiff", "image/gif"],
    ),
    *(
        (fmt, [f".{fmt}"], sorted(t for t, f in formats.MEDIA_TYPES.items() if f == fmt))
        for fmt in formats.FORMATS
    ),
]


def _form(content_type: str, parts: list[bytes]) -> tuple[str, bytes, dict[str, Any]]:
    """(file name, file bytes, options) of a multipart body as it came, in `parts`; 400 when
    it is not one."""
    if not content_type.startswith("multipart/form-data"):
        raise BadRequest("invalid request: parse takes multipart/form-data with a `file` part")
    body = b"".join(parts)
    args: dict[str, list[bytes]] = {}
    files: dict[str, list[tornado.httputil.HTTPFile]] = {}
    try:
        tornado.httputil.parse_body_arguments(content_type, body, args, files)
    except tornado.httputil.HTTPInputError as exc:
        raise BadRequest(f"invalid request: the body is not multipart/form-data ({exc})") from None
    if not files.get("file"):
        raise BadRequest("invalid request: the form has no `file` part")
    upload = files["file"][0]
    try:
        options = json.loads(args["options"][0]) if args.get("options") else {}
    except ValueError:
        raise BadRequest("invalid request: the `options` part is not JSON") from None
    return upload.filename or "upload", upload.body, options if isinstance(options, dict) else {}


def _formats(options: dict[str, Any]) -> set[str]:
    """The format names an upload's options ask for (a name, or Firecrawl's `{"type": …}`);
    400 when `formats` is not such a list."""
    formats = options.get("formats") or []
    names = (
        [f.get("type") if isinstance(f, dict) else f for f in formats]
        if isinstance(formats, list)
        else None
    )
    if names is None or not all(isinstance(n, str) for n in names):
        raise BadRequest("invalid request: `formats` must be a list of format names")
    return {n for n in names if isinstance(n, str)}


@tornado.web.stream_request_body
class ParseHandler(FirecrawlHandler):
    route = "/v2/parse"

    def initialize(self, svc: Any, callers: Any) -> None:
        super().initialize(svc, callers)
        fetch = svc.cfg.fetch
        self.body_cap = max(fetch.pdf_max_body, fetch.office_max_body) + FORM_OVERHEAD

    async def post(self) -> None:
        assert self.caller is not None
        content_type = self.request.headers.get("Content-Type", "")
        parts = self._chunks or [self.request.body]  # joined on a CPU thread, as it is parsed
        size = sum(len(part) for part in parts)
        name, data, options = await self.svc.cpu.compute(_form, content_type, parts, cost=size)
        fetch = self.svc.cfg.fetch
        cap = fetch.pdf_max_body if data[:5] == b"%PDF-" else fetch.max_body
        magic = data.startswith((formats.ZIP_MAGIC, formats.RTF_MAGIC))
        if local.content_type(name) in formats.MEDIA_TYPES or magic:
            cap = fetch.office_max_body
        if len(data) > cap:
            raise TooLarge(f"too large (>{cap // 1_000_000} MB): the file is over sift's cap")
        asked = _formats(options)
        digest = await self.svc.cpu.compute(local.content_hash, data, cost=len(data))
        url = f"upload:{digest[:16]}/{urllib.parse.quote(name)}"
        params = FetchParams(url=url, context=False, timeout=_ms(options, "timeout"))
        try:
            result = await local_run.parse_within(
                self.svc,
                self.caller,
                data,
                name,
                params,
                digest,
                self.trace,
                self.svc.cfg.request_deadline,
                self.gone,
            )
        except OutOfTime as late:  # the extraction goes on into the cache: ask again
            self.send_json({"success": True, "data": pending(name, late)})
            return
        doc = document(name, result)
        doc["metadata"]["url"] = name
        notes = _notes(asked, options)
        if notes:
            doc["warning"] = "; ".join(filter(None, (doc.get("warning"), *notes)))
        self.send_json({"success": True, "data": doc})


def _notes(asked: set[str], options: dict[str, Any]) -> list[str]:
    """What the upload's options ask that parse does not do: formats but markdown, the
    cleaning and `parsers` options, and what a scrape cannot honour either."""
    notes = []
    if skipped := sorted(asked - {"markdown"}):
        notes.append("sift's parse answers markdown only; not produced: " + ", ".join(skipped))
    names = ["onlyMainContent: false"] * (options.get("onlyMainContent") is False)
    names += [name for name in UNAPPLIED if options.get(name)]
    if names:
        notes.append(f"sift's parse does not apply {', '.join(f'`{n}`' for n in names)}")
    return notes + unhonoured(options)


class ParseFormatsHandler(FirecrawlHandler):
    route = "/v2/parse/formats"

    def get(self) -> None:
        formats = [
            {
                "format": name,
                "kind": "document",
                "extensions": ext,
                "mimeTypes": mimes,
                "available": True,
            }
            for name, ext, mimes in FORMATS
        ]
        self.send_json({"success": True, "data": {"formats": formats}})
