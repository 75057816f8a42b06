"""PDFs in the pipeline: extraction under the pool, the pages kept in the cache and recalled
from it; and the cache accounting every put shares (metrics, the hot set forgets evictions)."""

from __future__ import annotations

import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import msgspec

from sift.core import metrics
from sift.core.callers import Caller
from sift.core.errors import SiftError
from sift.core.request import FetchParams
from sift.core.types import NO_FACTS, Content, PageFacts, PdfDoc, Stored
from sift.documents.ocr import kept
from sift.documents.ocr.runner import tesseract
from sift.documents.pages import PagedText, from_rows
from sift.documents.pdf import scans
from sift.documents.pdf.runner import Extraction, Progress
from sift.fetch.transfer import FetchResult
from sift.service.document import Document, Scan, Trace
from sift.service.parts.runtime import Runtime
from sift.service.steps.content import content
from sift.service.steps.local import pdf_key


def account(svc: Runtime, stored: Stored) -> None:
    """Metrics for a put, and the hot set forgets what the store evicted."""
    if stored.evicted:
        metrics.cache_event("evicted", len(stored.evicted))
        metrics.CACHE_EVICTED_BYTES.inc(sum(size for *_, size in stored.evicted))
        for _, url, cls, _ in stored.evicted:
            svc.hot.drop((url, cls))
    metrics.CACHE_BYTES.set(stored.total)


async def recall(svc: Runtime, cached: Content, pdf: PdfDoc | None) -> Document:
    """A cached document; for a PDF, its pages from the page cache (no child, no fetch)."""
    if pdf is None:
        return Document(cached, cached=True)
    rows = await svc.held.store(
        lambda s: s.pdf_pages(pdf.content_hash, pdf.caller_class, 1, 1 << 30)
    )
    metrics.PDF_CACHE_HITS.inc()
    chars = sum(len(text) for _, text, _ in rows)
    pages = await svc.cpu.compute(from_rows, pdf.meta, rows, cost=chars)
    return Document(cached, cached=True, pages=pages, scan=_scan(pdf, pages))


def _scan(pdf: PdfDoc | None, pages: PagedText, body: bytes | None = None) -> Scan | None:
    """Where the image-only pages of `pages`, if any, are read again for OCR."""
    if not scans.pending(pages):
        return None
    kind = "image" if pdf is not None and pdf.content_type.startswith("image/") else "pdf"
    return Scan(kind, pdf, body)


def pdf_content(pdf: PdfDoc) -> Content:
    """The Content face of a cached PDF (title, validators, times); its text is in pages."""
    return content(
        pdf.url,
        pdf.caller_class,
        pdf.final_url,
        "image" if pdf.content_type.startswith("image/") else pdf.meta.get("kind", "pdf"),
        pdf.content_type,
        title=pdf.meta.get("title", ""),
        etag=pdf.etag,
        last_modified=pdf.last_modified,
        content_hash=pdf.content_hash,
        fetched_at=pdf.fetched_at,
        facts=msgspec.convert(pdf.meta.get("facts") or {}, PageFacts),
    )


def cache_row(face: Content, url: str, meta: dict[str, Any]) -> PdfDoc:
    """The page-cache row of a document read now (`face`: its identity), under `url`."""
    return PdfDoc(
        url=url,
        caller_class=face.caller_class,
        final_url=face.final_url,
        content_type=face.content_type,
        content_hash=face.content_hash,
        etag=face.etag,
        last_modified=face.last_modified,
        meta=meta,
        fetched_at=time.time(),
    )


def error_content(p: FetchParams, caller: Caller, res: FetchResult) -> Content:
    """The face of a response sift does not read (the target's error page, say)."""
    return content(p.url, caller.cls, res.final_url, "other", res.content_type)


@dataclass(frozen=True)
class Spooled:
    """A PDF or office body as fetched, waiting for the pool."""

    res: FetchResult  # the response, without its body
    source: bytes | Path  # the body, or its spool file
    digest: str  # the body's hash
    facts: PageFacts = NO_FACTS  # what the site says about its use, kept with it
    office: str | None = None  # an office file's or e-book's format: its parts are pages


async def extract_pdf(
    svc: Runtime, caller: Caller, p: FetchParams, body: Spooled, trace: Trace, scope: str
) -> Document:
    """Extract `body` under the pool, keep the pages in the cache, answer them. `scope` is
    who may share the extraction (`pipeline.scope`)."""
    res, source, digest, facts, office = body.res, body.source, body.digest, body.facts, body.office
    started = time.monotonic()
    progress = Progress()
    kind = office or "pdf"
    face = msgspec.structs.replace(
        error_content(p, caller, res), kind=kind, content_type=res.content_type
    )
    svc.readings.start((scope, p.url), progress, face)
    try:
        ocr = office is None and tesseract(svc.cfg.ocr.tesseract) is not None
        ex = await svc.pdfs.extract(
            (scope, res.final_url), caller.pool_name, source, progress, office, ocr
        )
    except SiftError as exc:
        trace.outcome = exc.outcome
        metrics.pdf_outcome(pdf_failure(exc))
        raise
    finally:
        metrics.PDF_EXTRACT_SECONDS.observe(time.monotonic() - started)
        svc.readings.end((scope, p.url), progress)
    metrics.pdf_outcome("ok")
    pdf = PdfDoc(
        url=p.url,
        caller_class=caller.cls,
        final_url=res.final_url,
        content_type=res.content_type,
        content_hash=digest,
        etag=res.etag,
        last_modified=res.last_modified,
        meta=pdf_meta(ex, kind) | {"facts": msgspec.to_builtins(facts)},
        fetched_at=time.time(),
    )
    # the caller's own headers: never cached
    keeps = p.store and not p.private
    if keeps:
        ex = await ocr_done(svc, ex, digest, caller.cls)
    pages = keep(svc, pdf, ex, keeps)
    scan = _scan(pdf if keeps else None, pages, source if isinstance(source, bytes) else None)
    if scan is not None and keeps:  # its image-only pages are OCR'd when a range asks
        root, budget = kept.root(svc.cfg.state_path), svc.cfg.ocr.keep_bytes
        await svc.cpu.compute(kept.put, root, digest, source, budget)
    return Document(pdf_content(pdf), pages=pages, scan=scan)


def pdf_meta(ex: Extraction, kind: str = "pdf") -> dict[str, Any]:
    """What the page cache keeps of a document beside its pages (an office file's kind and
    the unit of its parts too)."""
    return {
        "kind": kind,
        "unit": ex.meta.unit,
        "pages": ex.meta.pages,
        "title": ex.meta.title,
        "extracted": ex.extracted,
        "outline": [msgspec.structs.asdict(o) for o in ex.meta.outline],
    }


def keep(svc: Runtime, pdf: PdfDoc, ex: Extraction, store: bool = True) -> PagedText:
    """The extracted pages, kept in the page cache under `pdf` unless not to `store`. The
    write goes once the answer is out (`HeldWrites.store_later`: before any later store call,
    so the next `pages` or `grep` sees them); a store that is down loses it, and the answer
    says it is live (`recall.uncached`)."""
    metrics.PDF_PAGES.inc(len(ex.texts))
    pages = ex.document()
    if store:
        rows = [(n, t, pages.warnings.get(n)) for n, t in enumerate(ex.texts, start=1)]
        cap = svc.cfg.cache.max_bytes
        svc.held.store_later(
            lambda s: s.pdf_put(pdf, rows, cap), lambda stored: account(svc, stored)
        )
    return pages


async def local_pdf(
    svc: Runtime,
    base: Content,
    data: bytes,
    caller: str,
    progress: Progress | None = None,
    office: str | None = None,
) -> Document:
    """`sift extract` (or an upload) of a PDF, or an office file of format `office`: by its
    content hash (`base.content_hash`) from
    the page cache, else extracted under the pool and kept there, so the next call on the
    same bytes (any path, any page range) starts no child. The cache row is keyed
    `sha256:<hash>` in the caller class of `base` (`local` for `sift extract`): a file's
    bytes are its identity, so it never goes stale. While it is extracted, its progress is in
    `svc.readings` under `(class, key)`: a request out of time answers the pages so far."""
    key, cls = pdf_key(base.content_hash), base.caller_class
    found = await svc.held.cache_or(None, lambda s: s.pdf_get(key, cls))
    if found is not None and found.content_hash == base.content_hash:
        doc = await recall(
            svc, msgspec.structs.replace(base, title=found.meta.get("title", "")), found
        )
        return msgspec.structs.replace(
            doc, scan=_scan(found, doc.pages, data) if doc.pages else None
        )
    progress = progress or Progress()
    svc.readings.join((cls, key), progress, base)
    ocr = office is None and tesseract(svc.cfg.ocr.tesseract) is not None
    try:
        ex = await svc.pdfs.extract((cls, key), caller, data, progress, office, ocr)
    finally:
        svc.readings.end((cls, key), progress)
    face = base if office else msgspec.structs.replace(base, content_type="application/pdf")
    pdf = cache_row(face, key, pdf_meta(ex, office or "pdf"))
    pages = keep(svc, pdf, await ocr_done(svc, ex, base.content_hash, cls))
    return Document(
        msgspec.structs.replace(base, title=ex.meta.title),
        pages=pages,
        scan=_scan(pdf, pages, data),
    )


async def ocr_done(svc: Runtime, ex: Extraction, digest: str, cls: str) -> Extraction:
    """`ex` with the OCR text the page cache already has for the same bytes (fetched again,
    or from another URL) in place of its image-only pages: no page is OCR'd twice."""
    if scans.IMAGE_ONLY not in ex.warnings.values():
        return ex
    none: list[tuple[int, str, str | None]] = []
    rows = await svc.held.cache_or(none, lambda s: s.pdf_pages(digest, cls, 1, 1 << 30))
    texts, warnings = list(ex.texts), dict(ex.warnings)
    for n, text, note in rows:
        i = n - ex.first
        if note == scans.OCR_TEXT and 0 <= i < len(texts) and warnings.get(n) == scans.IMAGE_ONLY:
            texts[i], warnings[n] = text, note
    return msgspec.structs.replace(ex, texts=tuple(texts), warnings=warnings)


def pdf_failure(exc: SiftError) -> str:
    msg = exc.message
    for needle, outcome in (
        ("timed out", "timeout"),
        ("encrypted", "encrypted"),
        ("no text", "no_text"),
        ("busy", "busy"),
    ):
        if needle in msg:
            return outcome
    return "unreadable" if "unreadable" in msg else "other"
