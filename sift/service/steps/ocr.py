"""OCR in the pipeline, lazily and page by page.

Extraction marks a PDF's image-only pages (`documents.scans`); an image is all image-only
frames. Before an answer is rendered, the image-only pages it shows are OCR'd: those of its
`pages` range, else the first `[ocr] lead_pages` (the first answer's leading pages). A grep or
a question over the whole document OCRs those first pages now and the rest in the background,
and says how many pages it has searched. OCR runs under the PDF pool's slots (a job at most
`CHUNK_PER_CHILD` pages a child, so a slot is never held long), in `ocrtext` children; each
chunk's text goes into the page cache as it comes, so the next range costs only its own pages.

The document's bytes come from the request (a private fetch, an upload, `sift extract`) or
from the bodies kept on disk for this (`documents.kept`).
"""

from __future__ import annotations

import asyncio
from pathlib import Path
from typing import Any

import msgspec

from sift.core import metrics
from sift.core.callers import Caller
from sift.core.errors import SiftError, Unprocessable
from sift.core.request import FetchParams
from sift.core.types import PdfDoc
from sift.documents.ocr import kept
from sift.documents.ocr.runner import OcrAsk, tesseract
from sift.documents.pages import PagedText
from sift.documents.pdf import scans
from sift.documents.pdf.runner import OCR_NEEDS
from sift.service.document import Document, Scan
from sift.service.parts.runtime import Runtime
from sift.service.steps.pdf import account

CHUNK_PER_CHILD = 4  # pages a child OCRs in one pool job (its deadline: 4 × `[ocr] page_time`)


def available(svc: Runtime) -> bool:
    """Is Tesseract where `[ocr] tesseract` says?"""
    return tesseract(svc.cfg.ocr.tesseract) is not None


def ask(svc: Runtime, kind: str, pages: tuple[int, ...]) -> OcrAsk:
    o, pdf = svc.cfg.ocr, svc.cfg.pdf
    return OcrAsk(
        kind=kind,
        pages=pages,
        languages=o.languages,
        dpi=o.dpi,
        tesseract=o.tesseract,
        page_time=float(o.page_time),
        memory=int(pdf.memory),
        children=pdf.children,
    )


async def read_scans(svc: Runtime, caller: Caller, p: FetchParams, doc: Document) -> Document:
    """`doc` with the image-only pages this answer shows OCR'd (and kept in the page cache); a
    whole-document grep or question sets the rest going in the background and says so."""
    paged, scan = doc.pages, doc.scan
    if paged is None or scan is None or not scans.pending(paged):
        return doc
    if not available(svc):
        if not scans.has_text(paged):
            raise Unprocessable(f"no text layer (scanned PDF?); {OCR_NEEDS}", hint="ocr")
        return noted(doc, paged, f"image-only pages not read: {OCR_NEEDS}")
    want = scans.wanted(paged, p.pages, svc.cfg.ocr.lead_pages)
    whole = p.grep is not None or p.effective_mode == "digest"
    if not want and not whole:
        return noted(doc, paged, None)
    source = await _source(svc, scan)
    if source is None:
        why = "image-only pages not read: their images are no longer kept; ask with max_age=0"
        return noted(doc, paged, why)
    try:
        paged = await _ocr(svc, caller.pool_name, doc, source, want)
    except SiftError as exc:
        if not scans.has_text(paged):
            raise
        return noted(doc, paged, f"OCR failed: {exc.message}")
    doc = msgspec.structs.replace(doc, pages=paged)
    left = scans.pending(paged)
    if not left and not scans.has_text(paged):
        raise Unprocessable("no text: OCR found none on the page images")
    if left and whole:
        going = _background(svc, caller, doc, source, left)
        more = "goes on in the background; ask again" if going else "did not start (not cached)"
        searched = f"searched {paged.count - len(left)} of {paged.count} pages"
        return noted(doc, paged, f"{searched}: OCR of the {len(left)} other image pages {more}")
    return noted(doc, paged, None)


def noted(doc: Document, paged: PagedText, note: str | None) -> Document:
    """`doc` with `paged`, a content hash that tells its OCR state apart (renders, digests and
    the answer's hash follow the text), and `note` in its warning."""
    done = len(scans.ocr_pages(paged))
    text_hash = doc.content.content_hash.split(":ocr")[0]
    face = msgspec.structs.replace(doc.content, content_hash=f"{text_hash}:ocr{done}")
    warning = "; ".join(w for w in (doc.warning, note) if w) or None
    return msgspec.structs.replace(doc, content=face, pages=paged, warning=warning)


async def _source(svc: Runtime, scan: Scan) -> bytes | Path | None:
    if scan.body is not None:
        return scan.body
    if scan.pdf is None:
        return None
    root = kept.root(svc.cfg.state_path)
    found: Path | None = await svc.cpu.compute(kept.path, root, scan.pdf.content_hash)
    return found


async def keep_body(svc: Runtime, digest: str, body: bytes | Path) -> None:
    """Keep a scanned document's body for the OCR of later ranges (`[ocr] keep_bytes`)."""
    root = kept.root(svc.cfg.state_path)
    await svc.cpu.compute(kept.put, root, digest, body, int(svc.cfg.ocr.keep_bytes))


async def _ocr(
    svc: Runtime, caller: str, doc: Document, source: bytes | Path, numbers: list[int]
) -> PagedText:
    """OCR `numbers` in pool jobs of a few pages each, each job's text kept as it comes."""
    assert doc.pages is not None and doc.scan is not None
    scan, paged = doc.scan, doc.pages
    # a job's deadline (`page_time` a page of a child) within what the pool waits for a job
    fits = int((svc.cfg.pdf.longest - 10) // max(1.0, float(svc.cfg.ocr.page_time)))
    step = max(1, min(CHUNK_PER_CHILD, fits)) * max(1, svc.cfg.pdf.children)
    for i in range(0, len(numbers), step):
        chunk = tuple(numbers[i : i + step])
        cls = scan.pdf.caller_class if scan.pdf is not None else f"private:{id(scan)}"
        key = (cls, f"ocr:{doc.content.content_hash.split(':ocr')[0]}:{','.join(map(str, chunk))}")
        job = asyncio.ensure_future(_chunk(svc, caller, scan, source, chunk, key))
        texts = await asyncio.shield(job)  # a request gone or out of time: the chunk is kept
        paged = scans.with_text(paged, texts)
    return paged


async def _chunk(
    svc: Runtime,
    caller: str,
    scan: Scan,
    source: bytes | Path,
    chunk: tuple[int, ...],
    key: tuple[str, str],
) -> dict[int, str]:
    """One pool job's OCR text, put in the page cache before it is answered. Pages another
    job has put there meanwhile are taken from it, not OCR'd again."""
    done = await _cached_text(svc, scan.pdf, chunk) if scan.pdf is not None else {}
    todo = tuple(n for n in chunk if n not in done)
    if not todo:
        return done
    result = await svc.pdfs.ocr(key, caller, source, ask(svc, scan.kind, todo))
    metrics.OCR_PAGES.inc(len(result.texts))
    if scan.pdf is not None and result.texts:
        await _store(svc, scan.pdf, result.texts)
    return done | result.texts


async def _cached_text(svc: Runtime, pdf: PdfDoc, chunk: tuple[int, ...]) -> dict[int, str]:
    """The OCR text of pages of `chunk` already in the page cache."""
    h, cls = pdf.content_hash, pdf.caller_class
    none: list[tuple[int, str, str | None]] = []
    rows = await svc.held.cache_or(none, lambda s: s.pdf_pages(h, cls, chunk[0], chunk[-1]))
    return {n: t for n, t, w in rows if n in chunk and w == scans.OCR_TEXT}


async def _store(svc: Runtime, pdf: PdfDoc, texts: dict[int, str]) -> None:
    """Merge OCR text into the cached pages (read, merge, write under one lock on the loop,
    so two jobs on one document never undo each other)."""
    async with svc.pdfs.ocr_lock:
        h, cls = pdf.content_hash, pdf.caller_class
        none: list[tuple[int, str, str | None]] = []
        rows = await svc.held.cache_or(none, lambda s: s.pdf_pages(h, cls, 1, 1 << 30))
        if not rows:
            return
        merged = [
            (n, texts[n], scans.OCR_TEXT) if n in texts and w == scans.IMAGE_ONLY else (n, t, w)
            for n, t, w in rows
        ]
        cap = svc.cfg.cache.max_bytes
        stored = await svc.held.cache_or(None, lambda s: s.pdf_put(pdf, merged, cap))
        if stored is not None:
            account(svc, stored)


def _background(
    svc: Runtime, caller: Caller, doc: Document, source: bytes | Path, left: list[int]
) -> bool:
    """OCR `left` in the background (one job a document), under the caller's own pool name
    for background work; False when there is nowhere to keep the text (not cached)."""
    scan = doc.scan
    if scan is None or scan.pdf is None:
        return False
    key = (scan.pdf.caller_class, scan.pdf.content_hash)
    if key in svc.pdfs.ocr_jobs:
        return True
    job = asyncio.ensure_future(_ocr(svc, f"{caller.pool_name}:ocr", doc, source, left))
    svc.pdfs.ocr_jobs[key] = job

    def over(task: asyncio.Task[Any]) -> None:
        svc.pdfs.ocr_jobs.pop(key, None)
        if not task.cancelled():
            task.exception()  # retrieved: a failed background OCR leaves its pages marked

    job.add_done_callback(over)
    return True
