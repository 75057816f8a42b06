"""Rendering a document into the answer's envelope: mode, jq, digest. The text itself comes
from `sift.documents.render` (header, cut, maps, pages, grep), the envelope around it and the
answer's size bound from `envelope.py`."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from sift.clean import kinds
from sift.clean.protocol import CleanTask
from sift.core.errors import BadRequest
from sift.documents import sections
from sift.documents.pages import PagedText, Rendered
from sift.documents.render import cut
from sift.documents.render import render as render_text
from sift.service.digest import DigestAnswer, digest
from sift.service.envelope import envelope, frame

if TYPE_CHECKING:
    from sift.core.request import FetchParams
    from sift.core.types import Content
    from sift.service.document import Document
    from sift.service.runtime import Runtime


async def render(svc: Runtime, p: FetchParams, doc: Document) -> dict[str, Any]:
    c = doc.content
    framed = frame(svc.cfg.out_cap, p, doc)
    cap, _, room = framed
    mode = p.effective_mode
    digested: DigestAnswer | None = None
    shown: Rendered | None = None
    paged = doc.pages
    truncated = False
    if mode == "digest":
        digested = await _digest(svc, p, doc, cap)
        text, truncated = cut(digested.answer, room)
    elif mode == "raw":
        body = await raw_body(svc, c)
        text, truncated = await svc.compute(
            _raw_text, body, c, room, cost=len(body or b"") + len(c.text)
        )
    elif p.jq is not None:
        if c.kind != "json":
            raise BadRequest(f"`jq` needs a JSON response; this one is {c.kind}")
        source = await raw_body(svc, c) or c.text.encode()
        result = await svc.clean(
            CleanTask(
                kind="json", body=source, content_type="application/json", url=c.final_url, jq=p.jq
            )
        )
        text, truncated = cut(result.text, room)
    elif doc.pages is not None or p.pages or p.grep or (c.kind == "html" and len(c.text) > room):
        paged = await _pages_of(svc, doc, remember=not p.private)
        shown = await _rendered(svc, c, paged, room, p.pages, p.grep, remember=not p.private)
        text, truncated = shown.content, shown.truncated or shown.map
    else:
        text, truncated = cut(c.text, room)
    facts = (digested.envelope(), digested.warning) if digested is not None else None
    return envelope(p, doc, framed, text, truncated, shown, paged, facts)


def _raw_text(body: bytes | None, c: Content, room: int) -> tuple[str, bool]:
    return cut(kinds.decode(body or c.text.encode(), c.content_type), room)


async def raw_body(svc: Runtime, c: Content) -> bytes | None:
    """The raw body of a document: at hand when just fetched, else read from the store."""
    if c.body is not None or c.kind not in ("html", "json", "text"):
        return c.body
    return await svc.store(lambda s: s.content_body(c.url, c.caller_class))


async def _rendered(
    svc: Runtime,
    c: Content,
    paged: PagedText,
    room: int,
    pages: str | None,
    grep: str | None,
    *,
    remember: bool,
) -> Rendered:
    """`render_text` on a CPU thread, remembered (within `[cache] render_memory`) for the
    most recent (document, cap, pages, grep): agents ask for the same map and pages again.
    A private request's is not `remember`ed."""
    key = (c.content_hash, c.caller_class, c.kind, c.title, room, pages, grep, c.url)
    found: Rendered | None = svc.renders.get(key) if remember else None
    if found is None:
        found = await svc.compute(
            render_text, paged, out_cap=room, pages=pages, grep=grep, url=c.url, cost=paged.chars
        )
        if remember:
            svc.renders.put(key, found, len(found.content) + len(found.note or "") + 256)
    return found


async def _pages_of(svc: Runtime, doc: Document, *, remember: bool) -> PagedText:
    """The document as pages: a PDF's own, or an HTML page's sections split at headings.

    Splitting a long page is CPU work, done on a CPU thread; the split of the most recently
    used pages is remembered within `[cache] sections_memory` (keyed by content hash), but
    a private request's is not `remember`ed.
    """
    if doc.pages is not None:
        return doc.pages
    c = doc.content
    key = (c.content_hash, c.caller_class, c.title)
    found: PagedText | None = svc.sections.get(key) if remember else None
    if found is None:
        found = await svc.compute(sections.html_document, c.text, title=c.title, cost=len(c.text))
        size = sum(map(len, found.pages)) + 128 * (len(found.outline) + len(found.pages))
        if remember:
            svc.sections.put(key, found, size)
    return found


async def _digest(svc: Runtime, p: FetchParams, doc: Document, cap: int) -> DigestAnswer:
    """The answer to `p.question`, citing pages; the model's, or extractive without one."""
    c = doc.content
    if c.kind in ("pdf", "html", "image"):
        pages = list((await _pages_of(svc, doc, remember=not p.private)).pages)
    else:
        pages = [c.text]
    return await digest(
        svc,
        c.caller_class,
        content_hash=c.content_hash,
        pages=pages,
        kind=c.kind,
        title=c.title,
        question=p.question or "",
        out_cap=cap,
        private=p.private,
    )
