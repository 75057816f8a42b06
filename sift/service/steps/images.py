"""Images (PNG, JPEG, WebP, TIFF, GIF) as documents of their frames, read by OCR: a
multi-page TIFF is a page a frame. The frames an answer shows are OCR'd at once (the first
`[ocr] lead_pages`, or its `pages` range); the others wait, marked image-only, for the range
that asks for them (`service.ocr`), the image kept on disk meanwhile."""

from __future__ import annotations

import msgspec

from sift.core import metrics
from sift.core.callers import Caller
from sift.core.errors import SiftError, Unprocessable
from sift.core.request import FetchParams
from sift.core.types import Content
from sift.documents.pages import MAX_ANSWER_PAGES, PagedText, page_spec
from sift.documents.pdf import scans
from sift.service.document import Document, Scan
from sift.service.parts.runtime import Runtime
from sift.service.steps.local import pdf_key
from sift.service.steps.ocr import ask, available, keep_body, noted
from sift.service.steps.pdf import account, cache_row, recall


async def image_document(
    svc: Runtime,
    caller: Caller,
    p: FetchParams,
    face: Content,
    body: bytes,
    cache_url: str,
    store: bool,
) -> Document:
    """An image (PNG, JPEG, WebP, TIFF, GIF) as a document of its frames, the frames this
    answer shows OCR'd; its pages cached under `cache_url` when it may `store`."""
    if not available(svc):
        raise Unprocessable(f"an image: OCR needs Tesseract: {scans.INSTALL}", hint="ocr")
    first = _first_frames(p.pages, svc.cfg.ocr.lead_pages)
    key = (face.caller_class if store else f"private:{id(body)}", f"image:{face.content_hash}")
    result = await svc.pdfs.ocr(key, caller.pool_name, body, ask(svc, "image", first))
    metrics.OCR_PAGES.inc(len(result.texts))
    n = result.count
    paged = PagedText(
        pages=tuple(result.texts.get(i, "") for i in range(1, n + 1)),
        warnings={
            i: scans.OCR_TEXT if i in result.texts else scans.IMAGE_ONLY for i in range(1, n + 1)
        },
        total=n,
    )
    pdf = cache_row(face, cache_url, {"pages": n, "title": "", "extracted": n, "outline": []})
    if store:
        rows = [(i, t, paged.warnings.get(i)) for i, t in enumerate(paged.pages, start=1)]
        cap = svc.cfg.cache.max_bytes
        svc.held.store_later(
            lambda s: s.pdf_put(pdf, rows, cap), lambda stored: account(svc, stored)
        )
        if scans.pending(paged):
            await keep_body(svc, face.content_hash, body)
    scan = Scan("image", pdf if store else None, body)
    return noted(
        Document(msgspec.structs.replace(face, kind="image"), pages=paged, scan=scan), paged, None
    )


def _first_frames(pages: str | None, lead: int) -> tuple[int, ...]:
    """The frames a first answer OCRs (the child skips those past the last frame)."""
    try:
        a, b = page_spec(pages) if pages is not None else (1, lead)
    except SiftError:
        a, b = 1, lead
    return tuple(range(a, min(b or a + MAX_ANSWER_PAGES - 1, a + MAX_ANSWER_PAGES - 1) + 1))


async def local_image(
    svc: Runtime, caller: Caller, p: FetchParams, face: Content, data: bytes
) -> Document:
    """An uploaded or local image: from the page cache by its content hash, else read."""
    key, cls = pdf_key(face.content_hash), face.caller_class
    found = await svc.held.cache_or(None, lambda s: s.pdf_get(key, cls))
    if found is not None and found.content_hash == face.content_hash:
        doc = await recall(svc, msgspec.structs.replace(face, kind="image"), found)
        return msgspec.structs.replace(
            doc, scan=msgspec.structs.replace(doc.scan, body=data) if doc.scan else None
        )
    return await image_document(svc, caller, p, face, data, key, True)
