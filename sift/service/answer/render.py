"""Rendering a document into the answer's envelope: mode, jq, digest. The text itself comes
from `sift.documents.render` (header, cut, maps, pages, grep), the envelope around it and the
answer's size bound from `envelope.py`."""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING

from sift.clean import kinds
from sift.clean.protocol import CleanTask
from sift.core.envelope import Injection
from sift.core.errors import BadRequest
from sift.core.fence import neutralise
from sift.documents import sections, tokens
from sift.documents.pages import PagedText, Rendered
from sift.documents.render import full_text
from sift.documents.render import render as render_text
from sift.service.answer import findings
from sift.service.answer.budget import (
    Next,
    count,
    fitted,
    header_fits,
    next_of,
    text_budget,
    windowed,
)
from sift.service.answer.citations import cited
from sift.service.answer.digest import Asked, DigestAnswer, digest
from sift.service.answer.envelope import (
    About,
    Framed,
    Shown,
    Text,
    compose,
    envelope,
    frame,
    not_content_notice,
)

if TYPE_CHECKING:
    from sift.core.envelope import Envelope
    from sift.core.request import FetchParams
    from sift.core.types import Content
    from sift.service.document import Change, Document
    from sift.service.parts.runtime import Runtime


@dataclass(frozen=True)
class _Drawn:
    """The text a mode drew from a document, before the envelope is put around it."""

    text: str
    truncated: bool
    next: Next | None
    shown: Shown | None = None
    digested: DigestAnswer | None = None
    parts: findings.Parts = ()  # the text the answer shows, as the document had it


async def render(
    svc: Runtime, p: FetchParams, doc: Document, change: Change | None = None
) -> Envelope:
    """The answer to `p` from `doc`, built once: its text, its size in `tokens`, where it
    goes on (`next`), and how it compares with the version `if_none_match` named."""
    c = doc.content
    framed = frame(svc.cfg.out_cap, p, doc)
    if not await header_fits(svc, p, framed.head):
        framed = Framed(framed.cap, "", framed.cap)
    drawn = await _drawn(svc, p, doc, framed)
    content = compose(p, doc, framed, drawn.text)
    text = Text(content, drawn.truncated, next_of(drawn.next), await count(svc, content))
    robots = svc.cfg.fetch.robots
    parts = drawn.parts or findings.page_parts(drawn.shown)
    found = await svc.cpu.compute(findings.scan_answer, parts, c, cost=findings.size(parts))
    for said in c.facts.hidden_said:  # removed from the text; still reported
        found.add(Injection("hidden element", "instruction", said))
    about = About(framed.cap, robots, drawn.shown, drawn.digested, change, found)
    paged = drawn.shown.paged if drawn.shown is not None else None
    return await cited(svc, p, doc, envelope(p, doc, text, about), paged)


async def _drawn(svc: Runtime, p: FetchParams, doc: Document, framed: Framed) -> _Drawn:
    """The text of the mode asked: the digest's answer, the raw body, jq's output, pages (a
    map, a range, grep hits), or the document's text; within the room and the token budget."""
    c = doc.content
    notice = not_content_notice(c, doc.status, doc.reason) or ""
    budget = await text_budget(svc, p, framed.head + notice)
    mode = p.effective_mode
    digested: DigestAnswer | None = None
    if mode == "digest":
        digested = await _digest(svc, p, doc, framed.cap)
        source, where = digested.answer, "digest"  # a model's answer too: it may quote the page
    elif mode == "raw":
        body = await raw_body(svc, c)
        size = len(body or b"") + len(c.text)
        source, where = await svc.cpu.compute(_raw_text, body, c, cost=size), "body"
    elif p.jq is not None:
        source, where = await _jq(svc, c, p.jq), "body"
    elif (
        doc.pages is not None
        or p.pages
        or p.grep
        or (c.kind == "html" and len(c.text) > framed.room)
    ):
        paged = await _pages_of(svc, doc, remember=not p.private)
        # a document of one part reads as its text, cut with `next`: a map helps nobody there
        whole = paged.count <= 1 and not (p.pages or p.grep)
        if p.offset is None and not whole:
            rendered = await _shown(svc, p, c, paged, framed.room, budget)
            cut = rendered.truncated or rendered.map
            return _Drawn(rendered.content, cut, rendered.next, Shown(rendered, paged))
        full = await _full_text(svc, p, c, paged)
        # read by `offset`: the facts of the pages, none returned
        shown = Shown(Rendered(content=""), paged)
        parts = findings.page_parts(shown, p.pages)
        text, truncated, nxt = await windowed(svc, full, p.offset, framed.room, budget)
        if whole and not p.offset:
            shown = Shown(Rendered(content=text, returned=(1, 1) if paged.count else None), paged)
        return _Drawn(text, truncated, nxt, shown, parts=parts)
    else:
        source, where = c.text, "body"
    full = await svc.cpu.compute(neutralise, source, cost=len(source))
    text, truncated, nxt = await windowed(svc, full, p.offset, framed.room, budget)
    return _Drawn(text, truncated, nxt, None, digested, ((where, source),))


async def _jq(svc: Runtime, c: Content, program: str) -> str:
    """The output of a jq program on a JSON document."""
    if c.kind != "json":
        raise BadRequest(f"`jq` needs a JSON response; this one is {c.kind}")
    source = await raw_body(svc, c) or c.text.encode()
    task = CleanTask(
        kind="json", body=source, content_type="application/json", url=c.final_url, jq=program
    )
    return (await svc.cleaners.clean(task)).text


async def _shown(
    svc: Runtime, p: FetchParams, c: Content, paged: PagedText, room: int, budget: int | None
) -> Rendered:
    """The map, a page range or grep hits, within `room` characters and `budget` tokens."""

    async def at(cap: int) -> Rendered:
        return await _rendered(svc, c, paged, cap, p.pages, p.grep, remember=not p.private)

    return await fitted(svc, await at(room), room, budget, at)


async def _full_text(svc: Runtime, p: FetchParams, c: Content, paged: PagedText) -> str:
    """What `offset` counts in: an HTML page's markdown as it is, else the pages asked for
    (or grep hits) with their markers, uncut."""
    if c.kind == "html" and not (p.pages or p.grep):
        return await svc.cpu.compute(neutralise, c.text, cost=len(c.text))
    return await svc.cpu.compute(full_text, paged, pages=p.pages, grep=p.grep, cost=paged.chars)


def _raw_text(body: bytes | None, c: Content) -> str:
    """The body as served (fenced as any text: a raw line can no more pass for sift's)."""
    return kinds.decode(body or c.text.encode(), c.content_type)


async def raw_body(svc: Runtime, c: Content) -> bytes | None:
    """The raw body of a document: at hand when just fetched, else read from the store."""
    if c.body is not None or c.kind not in ("html", "json", "text"):
        return c.body
    return await svc.held.store(lambda s: s.content_body(c.url, c.caller_class))


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
    """`render_text` on a CPU thread (its text counted there too: `_counted`), remembered
    (within `[cache] render_memory`) for the most recent (document, cap, pages, grep): agents
    ask for the same map and pages again. A private request's is not `remember`ed."""
    key = (c.content_hash, c.caller_class, c.kind, c.title, room, pages, grep, c.url)
    found: Rendered | None = svc.renders.get(key) if remember else None
    if found is None:
        # A map (no range, no grep) estimates its document's tokens on `tokens.SAMPLE`
        # characters; the text rendered, at most `room`, is counted.
        counted = min(paged.chars, room)
        counted += min(paged.chars, tokens.SAMPLE) if pages is None and grep is None else 0
        cost = paged.chars + tokens.cost_of(counted)
        found = await svc.cpu.compute(
            _counted, paged, out_cap=room, pages=pages, grep=grep, url=c.url, cost=cost
        )
        if remember:
            svc.renders.put(key, found, len(found.content) + len(found.note or "") + 256)
    return found


def _counted(
    paged: PagedText, *, out_cap: int, pages: str | None, grep: str | None, url: str
) -> Rendered:
    """`render_text`, and its text counted: every answer reports its `tokens`, and the count
    of the answer around this text (its header above) then finds the sections of this one
    remembered, so it is counted on the loop without a second trip to a CPU thread."""
    found = render_text(paged, out_cap=out_cap, pages=pages, grep=grep, url=url)
    tokens.count(found.content)
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
        found = await svc.cpu.compute(
            sections.html_document, c.text, title=c.title, cost=len(c.text)
        )
        size = sum(map(len, found.pages)) + 128 * (len(found.outline) + len(found.pages))
        if remember:
            svc.sections.put(key, found, size)
    return found


async def _digest(svc: Runtime, p: FetchParams, doc: Document, cap: int) -> DigestAnswer:
    """The answer to `p.question`, citing pages; the model's, or extractive without one."""
    c = doc.content
    if c.kind in ("pdf", "html", "image") or c.kind in kinds.OFFICE:
        pages = list((await _pages_of(svc, doc, remember=not p.private)).pages)
    else:
        pages = [c.text]
    pages = [neutralise(page) for page in pages]
    asked = Asked(
        caller_class=c.caller_class,
        content_hash=c.content_hash,
        pages=tuple(pages),
        kind=c.kind,
        title=c.title,
        question=p.question or "",
        out_cap=cap,
        private=p.private,
    )
    return await digest(svc, asked)
