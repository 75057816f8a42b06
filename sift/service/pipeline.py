"""The one per-target pipeline: guard → cache → gates → fetch → kind → clean → render.

`/v1/fetch`, `/v2/scrape`, batch targets and the in-process CLI all call `run()` (the first
three through `within()`, which holds each request to its own deadline); nothing
re-implements a piece of it. It runs on the event loop and awaits actors through replies.
"""

from __future__ import annotations

import asyncio
import contextvars
import hashlib
import time
from dataclasses import replace
from typing import Any

import msgspec

from sift.clean import kinds
from sift.clean.data import jq_over_time
from sift.clean.protocol import CleanTask
from sift.core import metrics
from sift.core.callers import Caller
from sift.core.errors import (
    BadRequest,
    ClientGone,
    NotContent,
    OutOfTime,
    SiftError,
    Unsupported,
    UpstreamError,
    UpstreamTimeout,
)
from sift.core.request import FetchParams
from sift.core.types import Content, PdfDoc
from sift.documents import spool
from sift.documents.pages import PagedText
from sift.documents.render import iso
from sift.documents.runner import Extraction, Progress
from sift.fetch.headers import check_headers
from sift.service import local
from sift.service.asker import ASKER, Asker
from sift.service.document import Document, Result, Trace
from sift.service.flights import Waiter
from sift.service.pdf import (
    account,
    error_content,
    extract_pdf,
    local_pdf,
    pdf_content,
    recall,
)
from sift.service.render import raw_body, render
from sift.service.runtime import GateTicket, Runtime


def _hash(text: str) -> str:
    return hashlib.sha256(text.encode()).hexdigest()[:32]


def _fresh(c: Content, ttl: float, max_age: float | None) -> bool:
    """A cached copy answers when younger than the TTL and the caller's `max_age`."""
    if max_age is not None:
        ttl = min(ttl, max_age)
    return time.time() - c.fetched_at < ttl


def scope(caller: Caller, p: FetchParams) -> str:
    """Who may share this request's document: its caller class, or, fetched with the
    caller's own headers, only this caller with these headers (in memory only)."""
    if not p.private:
        return caller.cls
    assert p.headers is not None
    mark = hashlib.sha256(repr(sorted(p.headers.items())).encode()).hexdigest()[:32]
    return f"private:{caller.name}:{mark}"


async def fetch_document(svc: Runtime, caller: Caller, p: FetchParams, trace: Trace) -> Document:
    """The document for `p.url` as this caller's class sees it: cached, revalidated or fetched.

    Fetched with the caller's own headers (`p.private`) it is neither read from nor put in
    the cache: the page behind a login is this caller's alone."""
    target = svc.guard.precheck(p.url)
    trace.host = target.host
    ticket: GateTicket | None = None
    cached: Content | None = None
    pdf_cached: PdfDoc | None = None
    if p.private:
        trace.cache = "private"
    else:
        cached = _hot(svc, p.url, caller.cls)
        if cached is None:  # the gate's round trip overlaps the store's: one wait, not two
            ticket = svc.gate_ask(target.host, caller.name)
            try:
                cached, pdf_cached = await _stored(svc, p.url, caller.cls)
            except BaseException:
                ticket.drop()
                raise
    if cached is not None and _fresh(cached, svc.cfg.cache.ttl, p.max_age):
        if ticket is not None:
            ticket.drop()  # a hit holds no slot and waits for none
        trace.cache = "hit"
        metrics.cache_event("hit")
        return await recall(svc, cached, pdf_cached)
    if not p.private:
        trace.cache = "miss"
        metrics.cache_event("miss")
    started = time.monotonic()
    try:
        async with svc.gate(target.host, caller.name, ticket):
            res = await svc.fetch(
                p.url,
                etag=cached.etag if cached else None,
                last_modified=cached.last_modified if cached else None,
                headers=check_headers(p.headers) if p.headers else (),
            )
    except (UpstreamError, UpstreamTimeout) as exc:
        trace.outcome = exc.outcome
        metrics.fetch_outcome("timeout" if isinstance(exc, UpstreamTimeout) else "error")
        if p.recover and cached is not None:
            return await _stale(svc, cached, pdf_cached, trace, exc.message)
        raise
    except SiftError as exc:
        metrics.fetch_outcome(exc.outcome)
        raise
    finally:
        trace.fetch_ms = (time.monotonic() - started) * 1000
        metrics.FETCH_SECONDS.observe(trace.fetch_ms / 1000)
    trace.upstream_status = res.status
    trace.bytes = len(res.body)
    if res.status == 304 and cached is not None:
        metrics.fetch_outcome("ok")
        metrics.cache_event("revalidated")
        trace.cache = "revalidated"
        url, cls, etag, modified = p.url, caller.cls, res.etag, res.last_modified
        now = time.time()
        if p.store and pdf_cached is not None:
            now = await svc.cache_or(now, lambda s: s.pdf_refresh(url, cls, etag, modified))
        elif p.store:
            now = await svc.cache_or(now, lambda s: s.content_refresh(url, cls, etag, modified))
        cached = replace(cached, fetched_at=now)
        if pdf_cached is None and p.store:
            svc.hot.put((p.url, caller.cls), cached)
        return await recall(svc, cached, pdf_cached)
    if res.status >= 500:
        metrics.fetch_outcome("upstream_5xx")
        if p.recover and cached is not None:
            why = f"upstream {res.status} {res.reason}".strip()
            return await _stale(svc, cached, pdf_cached, trace, why)
    elif res.status >= 400:
        metrics.fetch_outcome("upstream_4xx")
    kind = await svc.compute(
        kinds.kind, res.content_type, res.body, cost=len(res.body)
    )  # may parse a JSON body
    if res.status < 400 and kind == "pdf":
        digest = await svc.compute(local.content_hash, res.body, cost=len(res.body))
        # A big body waits on disk, not in memory; a private one is written to no file.
        source = res.body if p.private else await svc.spool(res.body)
        res = replace(res, body=b"")
        try:
            doc = await extract_pdf(svc, caller, p, res, source, digest, trace, scope(caller, p))
        finally:
            spool.remove(source)
        metrics.fetch_outcome("ok")
        return _uncached(svc, doc)
    if kind in ("other", "pdf"):
        if res.status >= 400:  # the target's own error page, in a form sift does not read
            return Document(error_content(p, caller, res), status=res.status, reason=res.reason)
        metrics.fetch_outcome("unsupported")
        trace.outcome = "unsupported"
        raise Unsupported(res.content_type.split(";")[0].strip())
    cleaned = await svc.clean(
        CleanTask(
            kind=kind,
            body=res.body,
            content_type=res.content_type,
            url=res.final_url,
            input_cap=svc.cfg.clean.input_cap,
        )
    )
    metrics.CLEANS.labels(kind).inc()
    content = Content(
        url=p.url,
        caller_class=caller.cls,
        final_url=res.final_url,
        kind=kind,
        content_type=res.content_type,
        title=cleaned.title,
        text=cleaned.text,
        body=res.body,
        hint=cleaned.hint,
        fallback=cleaned.fallback,
        coverage=cleaned.coverage,
        etag=res.etag,
        last_modified=res.last_modified,
        content_hash=await svc.compute(_hash, cleaned.text, cost=len(cleaned.text)),
        fetched_at=time.time(),
        page=cleaned.page,
        served=cleaned.served,
        hidden_removed=cleaned.hidden_removed,
        warning=cleaned.warning,
    )
    if res.status >= 400:
        return Document(content, status=res.status, reason=res.reason)
    if content.page == "challenge":  # a bot check is never cached as the document
        metrics.fetch_outcome("challenge")
        if p.recover and cached is not None:
            return await _stale(svc, cached, pdf_cached, trace, f"the site served {content.served}")
        return Document(content, status=res.status, reason=res.reason)
    metrics.fetch_outcome("ok")
    if p.private:
        return Document(content, status=res.status, reason=res.reason)
    if cached is not None:
        metrics.cache_event("refetched")
    if not p.store:
        return Document(content, status=res.status, reason=res.reason)
    # The answer does not wait for the write: it is sent once the answer is out, and before
    # any later store call (which thus sees it); its outcome is accounted when it comes.
    svc.hot.put((p.url, caller.cls), content)
    cap = svc.cfg.cache.max_bytes
    svc.store_later(lambda s: s.content_put(content, cap), lambda stored: account(svc, stored))
    return _uncached(svc, Document(content, status=res.status, reason=res.reason))


def _uncached(svc: Runtime, doc: Document) -> Document:
    """A live answer while the store is degraded says that it was not cached, and why."""
    reason = svc.store_health.reason
    if reason is not None:
        doc.warning = f"cache unavailable: {reason}; answered live, not cached"
    return doc


async def _cached(svc: Runtime, url: str, cls: str) -> tuple[Content | None, PdfDoc | None]:
    """The cached copy: from the loop's hot set, else one store call (a page or a PDF)."""
    hot = _hot(svc, url, cls)
    return (hot, None) if hot is not None else await _stored(svc, url, cls)


def _hot(svc: Runtime, url: str, cls: str) -> Content | None:
    """The copy in the loop's hot set; the uses seen there are written back now and then."""
    hot = svc.hot.get((url, cls))
    due = svc.hot.due()
    if due:
        now = time.time()
        svc.store_tell(lambda s: s.content_touch(due, now))
    return hot


async def _stored(svc: Runtime, url: str, cls: str) -> tuple[Content | None, PdfDoc | None]:
    """The copy in the store (a page or a PDF), put in the hot set when a page."""
    found = await svc.cache_or(None, lambda s: s.doc_get(url, cls))  # None: live, `_uncached`
    if isinstance(found, PdfDoc):
        return pdf_content(found), found
    if found is not None:
        svc.hot.put((url, cls), found)
    return found, None


async def _stale(
    svc: Runtime, cached: Content, pdf: PdfDoc | None, trace: Trace, why: str
) -> Document:
    trace.cache = "stale"
    metrics.cache_event("stale")
    doc = await recall(svc, cached, pdf)
    doc.stale = True
    doc.warning = f"live fetch failed ({why}); this is the copy of {iso(cached.fetched_at)}"
    return doc


async def shared_document(
    svc: Runtime, caller: Caller, p: FetchParams, trace: Trace, waiter: Waiter | None = None
) -> Document:
    """`fetch_document`, shared by concurrent requests of one caller class for one URL.

    The shared work runs under the server's deadlines only (never a requester's `timeout`):
    each requester holds itself to its own deadline in `within()`."""
    # A fetch with the caller's own headers is shared with nobody (a fresh key).
    private = object() if p.private else None
    key = (scope(caller, p), p.url, p.recover, p.max_age, p.store, private)
    if svc.flights.running(key):
        trace.cache = "shared"
        work = lambda: fetch_document(svc, caller, p, Trace())  # noqa: E731
    else:
        work = lambda: fetch_document(svc, caller, p, trace)  # noqa: E731
    doc, _ = await svc.flights.run(key, work, waiter)
    return doc  # type: ignore[no-any-return]


async def run(
    svc: Runtime,
    caller: Caller,
    p: FetchParams,
    trace: Trace,
    waiter: Waiter | None = None,
    *,
    wait_renders: bool = False,
) -> Result:
    """Fetch (or recall) the document and render the answer the request asked for.

    The browser renders it first when asked (`render`, actions, a screenshot), or after the
    static answer when that is a script-only page (`hint: browser`) and `[render] auto` is
    on, or (`wait_renders`: Firecrawl's `waitFor`, as every Firecrawl scrape is a browser
    page) an HTML page with `wait_for` set. A render after the static answer that fails
    (busy, too) leaves the static answer, with a `warning` saying why."""
    trace.private = p.private
    if p.must_render:
        doc = await rendered_document(svc, caller, p, trace)
    else:
        doc = await shared_document(svc, caller, p, trace, waiter)
        if _rerender(svc, doc):
            doc = await _rerendered(svc, caller, p, trace, doc)
        elif wait_renders and _renders_on_wait(svc, p, doc):
            try:
                doc = await rendered_document(svc, caller, p, trace)
            except SiftError as exc:  # the static answer stands, with what went wrong
                doc = _note(doc, f"rendering in a browser failed: {exc.message}")
    if p.whole_page or p.include_tags or p.exclude_tags:
        doc = await view(svc, p, doc)
    envelope = await render(svc, p, doc)
    return Result(doc, envelope)


NOT_RENDERED = (
    "this page needs a browser, and the browser path does not send the caller's `headers` "
    "yet: this is the page as fetched with them, not rendered"
)


async def _rerendered(
    svc: Runtime, caller: Caller, p: FetchParams, trace: Trace, doc: Document
) -> Document:
    """A script-only page rendered; else its static answer, with a warning saying why not
    (a private request is never rendered without its headers: that is another page)."""
    if not p.renderable:
        return _note(doc, NOT_RENDERED)
    try:
        return await rendered_document(svc, caller, p, trace)
    except SiftError as exc:  # the static answer stands, with what went wrong
        return _note(doc, f"rendering in a browser failed: {exc.message}")


def _note(doc: Document, note: str) -> Document:
    return replace(doc, warning="; ".join(w for w in (doc.warning, note) if w))


def _rerender(svc: Runtime, doc: Document) -> bool:
    c = doc.content
    return (
        svc.browser.available and svc.cfg.render.auto and c.kind == "html"
        and c.hint == "browser" and c.page == "content" and doc.status < 400
    )  # fmt: skip


def _renders_on_wait(svc: Runtime, p: FetchParams, doc: Document) -> bool:
    """`wait_for` asks for the page a browser shows: an HTML page, where a browser is
    installed, never with the caller's own `headers` (the browser does not send them)."""
    c = doc.content
    return (
        bool(p.wait_for) and svc.browser.available and not p.private and c.kind == "html"
        and doc.status < 400
    )  # fmt: skip


async def rendered_document(svc: Runtime, caller: Caller, p: FetchParams, trace: Trace) -> Document:
    """The page as the browser shows it, cleaned like any page and cached apart from the
    static answer (class `<class>/render`). A render with actions or a screenshot is live."""
    target = svc.guard.precheck(p.url)
    trace.host = target.host
    cls = f"{caller.cls}/render"
    plain = not (p.actions or p.screenshot)
    if plain:
        cached, _ = await _cached(svc, p.url, cls)
        if cached is not None and _fresh(cached, svc.cfg.cache.ttl, p.max_age):
            trace.cache = "hit"
            metrics.cache_event("hit")
            return Document(_as_rendered(cached), cached=True, rendered=True)
    trace.cache = "miss"
    started = time.monotonic()
    try:
        async with svc.gate(target.host, caller.name):
            r = await svc.browser.render(
                p.url, caller.name, budget=p.timeout, wait_for=p.wait_for or 0,
                actions=p.actions, screenshot=p.screenshot,
            )  # fmt: skip
    except SiftError as exc:
        trace.outcome = exc.outcome
        metrics.render_outcome(exc.outcome)
        raise
    finally:
        trace.fetch_ms = (time.monotonic() - started) * 1000
        metrics.RENDER_SECONDS.observe(trace.fetch_ms / 1000)
    metrics.render_outcome("blocked_some" if r.blocked else "ok")
    trace.upstream_status = r.status
    body = r.html.encode()
    trace.bytes = len(body)
    cleaned = await svc.clean(
        CleanTask(kind="html", body=body, content_type="text/html; charset=utf-8",
                  url=r.final_url, input_cap=svc.cfg.clean.input_cap)
    )  # fmt: skip
    content = Content(
        url=p.url, caller_class=cls, final_url=r.final_url, kind="html",
        content_type="text/html; charset=utf-8", title=cleaned.title, text=cleaned.text,
        body=body, hint=cleaned.hint, fallback=cleaned.fallback, coverage=cleaned.coverage,
        etag=None, last_modified=None,
        content_hash=await svc.compute(_hash, cleaned.text, cost=len(cleaned.text)),
        fetched_at=time.time(), page=cleaned.page, served=cleaned.served,
        hidden_removed=cleaned.hidden_removed, warning=cleaned.warning,
    )  # fmt: skip
    content = _as_rendered(content)
    doc = Document(content, status=r.status, warning=r.warning, rendered=True,
                   screenshot=r.screenshot)  # fmt: skip
    if plain and p.store and r.status < 400 and content.page != "challenge" and not r.timed_out:
        svc.hot.put((p.url, cls), content)
        cap = svc.cfg.cache.max_bytes
        svc.store_later(lambda s: s.content_put(content, cap), lambda stored: account(svc, stored))
    return doc


def _as_rendered(c: Content) -> Content:
    """A rendered page never says `hint: browser`: the browser has had its turn."""
    return replace(c, hint=None) if c.hint == "browser" else c


async def view(svc: Runtime, p: FetchParams, doc: Document, want_html: bool = False) -> Document:
    """The document cleaned again from its body with the caller's options (whole page, tag
    selectors, the cleaned HTML). The cache keeps the page as fetched and its default clean;
    a view is derived from that body on each request and never cached, so the options cannot
    split the cache or poison it. Only HTML has a view; other kinds come back as they are."""
    c = doc.content
    if c.kind != "html":
        return doc
    body = await raw_body(svc, c)
    if body is None:
        return doc
    cleaned = await svc.clean(
        CleanTask(
            kind="html", body=body, content_type=c.content_type, url=c.final_url,
            input_cap=svc.cfg.clean.input_cap, whole_page=p.whole_page,
            include_tags=p.include_tags, exclude_tags=p.exclude_tags, want_html=want_html,
        )
    )  # fmt: skip
    text_hash = await svc.compute(_hash, cleaned.text, cost=len(cleaned.text))
    # What the page is (`page`, `served`) stays the default clean's: a selection of a page
    # is not a different page. Hidden text and injection are the view's own.
    content = replace(
        c, title=cleaned.title or c.title, text=cleaned.text, hint=c.hint or cleaned.hint,
        fallback=cleaned.fallback, coverage=cleaned.coverage, body=body,
        content_hash=f"view:{text_hash}", hidden_removed=cleaned.hidden_removed,
        warning=cleaned.warning,
    )  # fmt: skip
    if doc.rendered:
        content = _as_rendered(content)
    return replace(doc, content=content, html=cleaned.html)


async def fetch_envelope(
    svc: Runtime, caller: Caller, p: FetchParams, trace: Trace, waiter: Waiter | None = None
) -> Result:
    """What `/v1/fetch` answers (batch targets and the CLI too): `run`, with the target's own
    HTTP error (4xx/5xx) as `502 upstream N Reason` and a page that is not the content (a
    bot check, a consent or login wall, a soft 404) as 422, instead of a page."""
    result = await run(svc, caller, p, trace, waiter)
    doc = result.doc
    page = doc.content.page
    if page == "challenge" or (page != "content" and doc.status < 400):
        trace.outcome = "not_content"
        c = doc.content
        raise NotContent(page, c.served, c.hint if c.hint in ("browser", "retry") else None,
                         doc.status)  # fmt: skip
    if doc.status >= 400:
        trace.outcome = "upstream_4xx" if doc.status < 500 else "upstream_5xx"
        why = f"upstream {doc.status} {doc.reason}".strip()
        raise UpstreamError(why, upstream_status=doc.status)
    return result


async def within(
    svc: Runtime,
    caller: Caller,
    p: FetchParams,
    trace: Trace,
    budget: float,
    *,
    strict: bool = True,
    gone: asyncio.Future[None] | None = None,
    wait_renders: bool = False,
) -> Result:
    """`fetch_envelope` (`run` when not `strict`, with `wait_renders`) held to this request's
    own deadline: `budget` seconds, lowered by the request's `timeout`. Every entry point
    answers through here (/v1/fetch and /v2/scrape with `request_deadline`, a batch target
    with its own budget).

    Out of time, the shared work goes on (into the cache, when the answer is cached) and this
    request answers what is ready: the map and the pages extracted so far of a PDF in
    extraction, with a `warning`; else `OutOfTime` (504), which says whether the work goes on.
    A jq program is held to the same deadline and answers 422 at it. `gone` completes when
    the client disconnects: the request then stops waiting and, if nobody else wants the work,
    the work stops (`sift.service.flights`).

    Raises:
        OutOfTime: nothing is ready at the deadline.
        Unprocessable: the request's jq program was still running at the deadline.
        ClientGone: the client went away first.
    """
    if p.timeout:
        budget = min(budget, p.timeout)
    waiter = Waiter(keep=p.store and not p.private)
    asker = Asker(caller.pool_name, time.monotonic() + budget)
    context = contextvars.copy_context()
    context.run(ASKER.set, asker)
    coro = (
        fetch_envelope(svc, caller, p, trace, waiter)
        if strict
        else run(svc, caller, p, trace, waiter, wait_renders=wait_renders)
    )
    work = asyncio.get_running_loop().create_task(coro, context=context)
    if await _held(work, waiter, budget, gone, trace, asker):
        return work.result()
    return await _so_far(svc, (scope(caller, p), p.url), p, budget, waiter.kept)


async def _held(
    work: asyncio.Future[Any],
    waiter: Waiter,
    budget: float,
    gone: asyncio.Future[None] | None,
    trace: Trace,
    asker: Asker | None = None,
) -> bool:
    """Wait `budget` seconds for `work`: True when it is done; False out of time (shared work
    goes on when `waiter` keeps it, and the request answers what is ready).

    Raises:
        ClientGone: the client went away first.
        Unprocessable: the request's jq program was still running at the deadline.
    """
    waits: list[asyncio.Future[Any]] = [work] if gone is None else [work, gone]
    try:
        done, _ = await asyncio.wait(waits, timeout=budget, return_when=asyncio.FIRST_COMPLETED)
    except asyncio.CancelledError:
        work.cancel()  # this request is being cancelled (shutdown); shared work is kept
        raise
    jq = (
        asker.jq if asker is not None else None
    )  # the bound of the jq program running at the deadline, if one is
    if work not in done:
        waiter.gone = gone is not None and gone.done()
        work.cancel()
        await asyncio.wait([work])
    if not work.cancelled():
        return True
    if waiter.gone:
        trace.outcome = "gone"
        raise ClientGone()
    if jq is not None:  # its worker stops it now too: the answer is the worker's own 422
        raise jq_over_time(jq)
    trace.outcome = "pending"
    return False


def _snapshot(progress: Progress) -> tuple[Extraction, PagedText] | None:
    """The pages a running extraction has so far, as a document (a CPU thread's work)."""
    ex = progress.snapshot()
    return (ex, ex.document()) if ex is not None else None


async def _so_far(
    svc: Runtime, key: tuple[str, str], p: FetchParams, budget: float, goes_on: bool
) -> Result:
    """The answer of a request out of time: the pages extracted so far of the document in
    extraction under `key` (`svc.progress`), else `OutOfTime` (saying whether the work goes
    on)."""
    late = OutOfTime(budget, goes_on)
    reading = svc.progress.get(key)
    snap = await svc.compute(_snapshot, reading[0]) if reading else None
    if reading is None or snap is None:
        raise late
    ex, pages = snap
    face = replace(reading[1], title=ex.meta.title, fetched_at=time.time(),
                   content_hash=f"partial:{ex.extracted}:{p.url}")  # fmt: skip
    note = f"pages 1–{ex.extracted} of {ex.meta.pages} are ready; {late.message}"
    doc = Document(face, warning=note, pages=pages)
    if p.effective_mode == "digest":  # no model call past the deadline: the map instead
        p = msgspec.structs.replace(p, mode="clean", question=None)
    try:
        return Result(doc, await render(svc, p, doc))
    except BadRequest:  # the pages asked for are not extracted yet
        raise late from None


async def run_local(
    svc: Runtime,
    data: bytes,
    name: str,
    p: FetchParams,
    *,
    caller: Caller = local.CLI,
    progress: Progress | None = None,
) -> Result:
    """`sift extract`: the document path on a file's bytes — no fetch, no guard; a PDF's pages
    are cached by content hash (`local_pdf`) under the caller's class (`local` for `sift
    extract`). `caller` also holds the PDF pool's one-job-per-caller rule; `progress` lets the
    CLI show pages extracted so far."""
    digest = await svc.compute(local.content_hash, data, cost=len(data))
    doc = await local_document(svc, data, name, p, digest, caller=caller, progress=progress)
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
    deadline as `within` holds a fetch: out of time, the extraction goes on into the page cache
    (concurrent parses of the upload by callers of one class share it) and this request answers
    the pages so far. An upload is cached under its caller's class, never shared across classes.

    Raises:
        OutOfTime: nothing is ready at the deadline.
        ClientGone: the client went away first.
    """
    if p.timeout:
        budget = min(budget, p.timeout)
    waiter = Waiter()
    document = lambda: local_document(svc, data, name, p, digest, caller=caller)  # noqa: E731
    work = asyncio.ensure_future(svc.flights.run((caller.cls, p.url), document, waiter))
    if await _held(work, waiter, budget, gone, trace):
        doc, _ = work.result()
        return Result(doc, await render(svc, p, doc))
    return await _so_far(svc, (caller.cls, local.pdf_key(digest)), p, budget, waiter.kept)


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
    kind = await svc.compute(kinds.kind, content_type, data, cost=len(data))
    if kind == "other":
        raise Unsupported(content_type or "of this file")
    base = Content(
        url=p.url, caller_class=caller.cls, final_url=p.url, kind=kind, content_type=content_type,
        title="", text="", body=data if kind != "pdf" else None, hint=None, fallback=False,
        etag=None, last_modified=None, content_hash=digest, fetched_at=time.time(),
    )  # fmt: skip
    if kind == "pdf":
        return await local_pdf(svc, base, data, caller.pool_name, progress)
    cleaned = await svc.clean(
        CleanTask(kind=kind, body=data, content_type=content_type, url=p.url,
                  input_cap=svc.cfg.clean.input_cap)
    )  # fmt: skip
    return Document(
        replace(base, title=cleaned.title, text=cleaned.text, hint=cleaned.hint,
                page=cleaned.page, served=cleaned.served,
                hidden_removed=cleaned.hidden_removed, warning=cleaned.warning)
    )  # fmt: skip
