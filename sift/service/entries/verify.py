"""`POST /v1/verify`: is this quote in this page, where, and has the page changed since the
version a citation names? The page is read as `/v1/fetch` reads it (the cached copy; fetched
again only with `refetch`), its text as a read cites it (`entries/read.py` `source_text`),
and the quote found by `documents/quotes.py`: exactly, or with the spacing folded, and never
a near-miss."""

from __future__ import annotations

import asyncio
from typing import Any

import msgspec

from sift.core.callers import Caller
from sift.core.errors import BadRequest
from sift.core.request import FetchParams
from sift.documents.quotes import find
from sift.service.document import Trace
from sift.service.entries.read import document_source
from sift.service.params import check, decoded
from sift.service.parts.runtime import Runtime
from sift.service.steps import pipeline

MAX_QUOTE = 20_000  # characters of a quote


class VerifyRequest(msgspec.Struct, forbid_unknown_fields=True, frozen=True, kw_only=True):
    url: str
    quote: str
    content_hash: str | None = None  # the version the citation names
    refetch: bool = False  # ask the site again, not the cached copy
    pages: str | None = None  # as the read that cited it asked
    headers: dict[str, str] | None = None
    timeout: float | None = None


def parse_verify(raw: bytes | dict[str, Any]) -> tuple[VerifyRequest, FetchParams]:
    """A `/v1/verify` body checked, and the fetch it makes; a problem is a 400 naming it."""
    v = decoded(raw, VerifyRequest)
    if not v.quote.strip() or len(v.quote) > MAX_QUOTE:
        raise BadRequest(f"invalid request: `quote` is 1 to {MAX_QUOTE:,} characters")
    fields: dict[str, Any] = {
        "url": v.url,
        "context": False,
        "offset": 0,
        "max_chars": 1,
        "pages": v.pages,
        "headers": v.headers,
        "timeout": v.timeout,
    }
    if v.refetch:
        fields["max_age"] = 0
    try:
        p = check(msgspec.convert(fields, FetchParams))
    except msgspec.ValidationError as exc:
        raise BadRequest(f"invalid request: {exc}") from None
    return v, p


async def verify(
    svc: Runtime,
    caller: Caller,
    v: VerifyRequest,
    p: FetchParams,
    gone: asyncio.Future[None] | None = None,
) -> dict[str, Any]:
    """Whether `v.quote` is in the page's version at hand, where, and whether that version is
    the one `v.content_hash` names (`changed`; null when none was given)."""
    result = await pipeline.within(svc, caller, p, Trace(), svc.cfg.request_deadline, gone=gone)
    src = await document_source(svc, p, result.doc)
    found = await svc.cpu.compute(find, src.text, v.quote, src.parts, cost=2 * len(src.text) + 1)
    asked = v.content_hash.strip().strip('"').lower() if v.content_hash else None
    answer: dict[str, Any] = {
        "success": True,
        "url": p.url,
        "found": found is not None,
        "match": found.how if found else None,
        "part": found.part if found else None,
        "unit": src.unit if found and found.part is not None else None,
        "start": found.start if found else None,
        "end": found.end if found else None,
        "content_hash": src.content_hash,
        "changed": None if asked is None else asked != src.content_hash,
        "cached": result.doc.cached,
    }
    return answer
