"""The document path on a file's bytes, in place of a fetch: `sift extract` in the CLI's
process, and Firecrawl's `parse` of an upload. No guard, no fetch: a PDF's pages (an office
file's parts) are cached by the file's content hash (`pdf.local_pdf`), other kinds go through
the clean workers."""

from __future__ import annotations

import asyncio

from sift.clean import kinds
from sift.clean.protocol import CleanTask
from sift.core.callers import Caller
from sift.core.errors import Unprocessable, Unsupported
from sift.core.request import FetchParams
from sift.documents.pdf.runner import Progress
from sift.service.answer.render import render
from sift.service.document import Document, Result, Trace
from sift.service.parts.flights import Waiter
from sift.service.parts.runtime import Runtime
from sift.service.steps import local
from sift.service.steps.content import content
from sift.service.steps.deadline import held, so_far
from sift.service.steps.images import local_image
from sift.service.steps.ocr import read_scans
from sift.service.steps.pdf import local_pdf

CLI = Caller("cli", local.LOCAL)  # `sift extract`: its own PDF pool caller, its files in `local`


async def run_local(
    svc: Runtime,
    data: bytes,
    name: str,
    p: FetchParams,
    *,
    caller: Caller = CLI,
    progress: Progress | None = None,
) -> Result:
    """`sift extract`: the document path on a file's bytes — no fetch, no guard; a PDF's pages
    are cached by content hash (`local_pdf`) under the caller's class (`local` for `sift
    extract`). `caller` also holds the PDF pool's one-job-per-caller rule; `progress` lets the
    CLI show pages extracted so far."""
    digest = await svc.cpu.compute(local.content_hash, data, cost=len(data))
    doc = await local_document(svc, data, name, p, digest, caller=caller, progress=progress)
    doc = await read_scans(svc, caller, p, doc)
    return Result(doc, await render(svc, p, doc))


async def parse_within(
    svc: Runtime,
    caller: Caller,
    data: bytes,
    name: str,
    p: FetchParams,
    digest: str,
    trace: Trace,
    budget: float,
    gone: asyncio.Future[None] | None = None,
) -> Result:
    """Firecrawl's `parse` of an upload whose content hash is `digest`, held to this request's
    deadline as `pipeline.within` holds a fetch: out of time, the extraction goes on into the
    page cache (concurrent parses of the upload by callers of one class share it) and this
    request answers the pages so far. An upload is cached under its caller's class, never
    shared across classes.

    Raises:
        OutOfTime: nothing is ready at the deadline.
        ClientGone: the client went away first.
    """
    if p.timeout:
        budget = min(budget, p.timeout)
    waiter = Waiter()
    document = lambda: local_document(svc, data, name, p, digest, caller=caller)  # noqa: E731
    work = asyncio.ensure_future(svc.flights.run((caller.cls, p.url), document, waiter))
    if await held(work, waiter, budget, gone, trace):
        doc, _ = work.result()
        doc = await read_scans(svc, caller, p, doc)
        return Result(doc, await render(svc, p, doc))
    return await so_far(svc, (caller.cls, local.pdf_key(digest)), p, budget, waiter.kept)


async def local_document(
    svc: Runtime,
    data: bytes,
    name: str,
    p: FetchParams,
    digest: str,
    *,
    caller: Caller,
    progress: Progress | None = None,
) -> Document:
    """The document of a file's bytes, whose content hash is `digest`."""
    content_type = local.content_type(name)
    kind = await svc.cpu.compute(kinds.kind, content_type, data, cost=len(data))
    if kind == "other":
        raise Unsupported(content_type or "of this file")
    if kind == "image" and not kinds.is_image(data):  # named an image, holding something else
        raise Unprocessable(f"not an image: {name} is not PNG, JPEG, GIF, TIFF or WebP")
    if kind in ("pdf", "image") or kind in kinds.OFFICE:
        face = content(p.url, caller.cls, p.url, kind, content_type, content_hash=digest)
        if kind == "image":
            return await local_image(svc, caller, p, face, data)
        office = kind if kind != "pdf" else None
        return await local_pdf(svc, face, data, caller.pool_name, progress, office)
    cleaned = await svc.cleaners.clean(
        CleanTask(
            kind=kind,
            body=data,
            content_type=content_type,
            url=p.url,
            input_cap=svc.cfg.clean.input_cap,
        )
    )
    page = content(
        p.url,
        caller.cls,
        p.url,
        kind,
        content_type,
        cleaned=cleaned,
        body=data,
        content_hash=digest,
    )
    return Document(page)
