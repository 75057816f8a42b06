"""What one target becomes on its way through the pipeline: its trace, the document ready to
render, and the rendered result."""

from __future__ import annotations

import msgspec

from sift.core.envelope import Envelope
from sift.core.types import Content, PdfDoc
from sift.documents.pages import PagedText


class Trace(msgspec.Struct):
    """What the request log and metrics may know about one target (never page text)."""

    host: str = ""
    outcome: str = "ok"
    cache: str = "none"  # hit | miss | revalidated | stale | none
    bytes: int = 0
    upstream_status: int | None = None
    fetch_ms: float = 0.0
    private: bool = False  # fetched with the caller's own headers: no error detail is logged


class Scan(msgspec.Struct, frozen=True):
    """Where a document's image-only pages are read again for OCR: its page-cache row (None:
    not cached, as a private request's) and its bytes when at hand (else the kept body)."""

    kind: str  # "pdf" or "image"
    pdf: PdfDoc | None
    body: bytes | None = None


class Document(msgspec.Struct):
    """A document ready to render: from the cache or just fetched and cleaned.

    `pages` is set for PDFs (their pages, outline and warnings); `content.text` is empty then.
    """

    content: Content
    status: int = 200
    reason: str = "OK"
    cached: bool = False
    stale: bool = False
    warning: str | None = None
    pages: PagedText | None = None
    html: str | None = None  # the cleaned HTML, when a view asked for it (`view`)
    rendered: bool = False  # by the browser (sift.browser)
    screenshot: str | None = None  # base64 PNG, when asked
    shots: tuple[str, ...] = ()  # base64 PNGs of Firecrawl's `screenshot` actions
    previous: Content | None = None  # the cached copy a live fetch replaced (what changed)
    scan: Scan | None = None  # a document with image-only pages (sift.service.steps.ocr)


class Change(msgspec.Struct, frozen=True):
    """How a document compares with the version `if_none_match` named: `unchanged`, or
    changed, with the `diff` against that version while it is still the cached copy."""

    unchanged: bool
    diff: str | None = None


class Result(msgspec.Struct, frozen=True):
    """A document and its answer, as every door reads them."""

    doc: Document
    envelope: Envelope
