"""The cache as one request meets it: the copy it may answer with (the loop's hot set, else
the store), whether that copy is fresh, the copy answered when the live fetch fails, and a
new page kept for the next request."""

from __future__ import annotations

import time
from dataclasses import dataclass

import msgspec

from sift.core import metrics
from sift.core.callers import Caller
from sift.core.request import FetchParams
from sift.core.types import Content, PdfDoc
from sift.documents.render import iso
from sift.fetch.transfer import FetchResult
from sift.service.document import Document, Trace
from sift.service.parts.gates import GateTicket
from sift.service.parts.runtime import Runtime
from sift.service.steps import pdf


@dataclass
class Copy:
    """What the cache holds for a request: a page, or a PDF (`pdf`) and its face (`content`),
    or nothing; and the gate's ask, made while the store was read (None on a hot-set hit)."""

    content: Content | None = None
    pdf: PdfDoc | None = None
    ticket: GateTicket | None = None


async def find(svc: Runtime, caller: Caller, p: FetchParams, trace: Trace, host: str) -> Copy:
    """The cached copy of `p.url` for the caller's class; none for a private request (the
    page behind the caller's own headers is neither read from nor put in the cache)."""
    if p.private:
        trace.cache = "private"
        return Copy()
    hot = _hot(svc, p.url, caller.cls)
    if hot is not None:
        return Copy(hot)
    ticket = svc.gates.gate_ask(host, caller.name)  # the gate's round trip overlaps the store's
    try:
        cached, pdf_cached = await _stored(svc, p.url, caller.cls)
    except BaseException:
        ticket.drop()
        raise
    return Copy(cached, pdf_cached, ticket)


def fresh(c: Content, ttl: float, max_age: float | None, now: float) -> bool:
    """A cached copy answers when younger, at `now`, than the TTL and the caller's `max_age`."""
    if max_age is not None:
        ttl = min(ttl, max_age)
    return now - c.fetched_at < ttl


async def hit(svc: Runtime, copy: Copy, trace: Trace) -> Document:
    """The fresh copy as the answer: it gives the gate's ask back, holding no slot."""
    assert copy.content is not None
    if copy.ticket is not None:
        copy.ticket.drop()
    trace.cache = "hit"
    metrics.cache_event("hit")
    return await pdf.recall(svc, copy.content, copy.pdf)


async def cached(svc: Runtime, url: str, cls: str) -> tuple[Content | None, PdfDoc | None]:
    """The cached copy: from the loop's hot set, else one store call (a page or a PDF)."""
    hot = _hot(svc, url, cls)
    return (hot, None) if hot is not None else await _stored(svc, url, cls)


def _hot(svc: Runtime, url: str, cls: str) -> Content | None:
    """The copy in the loop's hot set."""
    hot = svc.hot.get((url, cls))
    write_back_uses(svc)
    return hot


def write_back_uses(svc: Runtime) -> None:
    """The uses seen in the hot set go to the store now and then, so its LRU order holds."""
    due = svc.hot.due()
    if due:
        now = time.time()
        svc.held.store_tell(lambda s: s.content_touch(due, now))


async def _stored(svc: Runtime, url: str, cls: str) -> tuple[Content | None, PdfDoc | None]:
    """The copy in the store (a page or a PDF), put in the hot set when a page."""
    found = await svc.held.cache_or(None, lambda s: s.doc_get(url, cls))  # None: live, `uncached`
    if isinstance(found, PdfDoc):
        return pdf.pdf_content(found), found
    if found is not None:
        svc.hot.put((url, cls), found)
    return found, None


async def stale(svc: Runtime, copy: Copy, trace: Trace, why: str) -> Document:
    """The cached copy when the live fetch failed (`recover`), saying so and why."""
    assert copy.content is not None
    trace.cache = "stale"
    metrics.cache_event("stale")
    doc = await pdf.recall(svc, copy.content, copy.pdf)
    doc.stale = True
    when = iso(copy.content.fetched_at)
    doc.warning = f"live fetch failed ({why}); this is the copy of {when}"
    return doc


async def at_deadline(
    svc: Runtime, caller: Caller, p: FetchParams, trace: Trace
) -> Document | None:
    """`recover` when the request's deadline passed with the live fetch unfinished (a timeout
    as the request counts it): the cached copy, saying so; None without one."""
    if not p.recover or p.private:
        return None
    content, pdf_doc = await cached(svc, p.url, caller.cls)
    if content is None:
        return None
    return await stale(svc, Copy(content, pdf_doc), trace, "not done by the request's deadline")


async def revalidated(
    svc: Runtime, caller: Caller, p: FetchParams, copy: Copy, res: FetchResult, trace: Trace
) -> Document:
    """The cached copy, which the target says is unchanged (304): fresh from now on."""
    assert copy.content is not None
    metrics.cache_event("revalidated")
    trace.cache = "revalidated"
    url, cls, etag, modified = p.url, caller.cls, res.etag, res.last_modified
    now = time.time()
    if p.store and copy.pdf is not None:
        now = await svc.held.cache_or(now, lambda s: s.pdf_refresh(url, cls, etag, modified))
    elif p.store:
        now = await svc.held.cache_or(now, lambda s: s.content_refresh(url, cls, etag, modified))
    refreshed = msgspec.structs.replace(copy.content, fetched_at=now)
    if copy.pdf is None and p.store:
        svc.hot.put((url, cls), refreshed)
    return await pdf.recall(svc, refreshed, copy.pdf)


def keep(svc: Runtime, page: Content) -> None:
    """A new page, for the next request: in the hot set now, in the store once the answer is
    out (`HeldWrites.store_later`: before any later store call, which thus sees it); the put's
    outcome is accounted when it comes."""
    svc.hot.put((page.url, page.caller_class), page)
    cap = svc.cfg.cache.max_bytes
    svc.held.store_later(
        lambda s: s.content_put(page, cap), lambda stored: pdf.account(svc, stored)
    )


def uncached(svc: Runtime, doc: Document) -> Document:
    """A live answer while the store is degraded says that it was not cached, and why."""
    reason = svc.store_health.reason
    if reason is not None:
        doc.warning = f"cache unavailable: {reason}; answered live, not cached"
    return doc
