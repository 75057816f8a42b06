"""The one per-target pipeline. A request reads as its steps: precheck (the guard) → recall
(the cache: hot set, then store) → fetch (under the host's gate) → clean or extract (by the
body's kind) → keep (in the cache), then render the answer the request asked for.

`/v1/fetch`, `/v2/scrape`, batch targets and `sift fetch` call `run()` (the first three
through `within()`, which holds each request to its own deadline); nothing re-implements a
piece of it. The browser path is `steps/browse.py`, the caller's view of a page
`steps/view.py`; a local file or an upload comes in through `entries/local_run.py`. It runs
on the event loop and awaits actors through replies.
"""

from __future__ import annotations

import asyncio
import contextvars
import hashlib
import time
from dataclasses import replace
from pathlib import Path

from sift.clean import kinds
from sift.clean.protocol import CleanTask
from sift.core import metrics
from sift.core.callers import Caller
from sift.core.errors import (
    NotContent,
    OutOfTime,
    SiftError,
    Unsupported,
    UpstreamError,
    UpstreamTimeout,
)
from sift.core.request import FetchParams
from sift.core.types import NO_FACTS, Content
from sift.documents.pdf import spool
from sift.fetch.headers import check_headers
from sift.fetch.robots import Robots
from sift.fetch.transfer import FetchResult
from sift.service.answer.render import render
from sift.service.document import Document, Result, Trace
from sift.service.parts.asker import ASKER, Asker
from sift.service.parts.flights import Waiter
from sift.service.parts.runtime import Runtime
from sift.service.steps import browse, changes, local, recall, site_markdown, usage
from sift.service.steps.content import content, text_hash
from sift.service.steps.deadline import held, so_far
from sift.service.steps.images import image_document
from sift.service.steps.ocr import read_scans
from sift.service.steps.pdf import Spooled, error_content, extract_pdf
from sift.service.steps.recall import Copy
from sift.service.steps.view import view


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
    the cache: the page behind a login is this caller's alone. A request that goes upstream
    counts its one outcome in `sift_fetch_total`, here, whichever step ends it."""
    target = svc.guard.precheck(p.url)
    trace.host = target.host
    await usage.respected(svc, caller, p.url)  # `[fetch] robots = "respect"`: may refuse
    copy = await recall.find(svc, caller, p, trace, target.host)
    if copy.content is not None and recall.fresh(
        copy.content, svc.cfg.cache.ttl, p.max_age, svc.clock()
    ):
        doc = await recall.hit(svc, copy, trace)
        usage.refuse(svc, p.url, doc.content.facts)
        return doc
    if not p.private:
        trace.cache = "miss"
        metrics.cache_event("miss")
    outcome: str | None = None  # none when the work is cancelled
    robots = usage.reading(svc, caller, p.url)  # beside the fetch, for the answer's `usage`
    try:
        outcome, doc = await _live(svc, caller, p, trace, copy, robots)
        doc.previous = copy.content
        return doc
    except SiftError as exc:
        outcome = exc.outcome
        raise
    finally:
        robots.cancel()
        if outcome is not None:
            metrics.fetch_outcome(outcome)


async def _live(
    svc: Runtime,
    caller: Caller,
    p: FetchParams,
    trace: Trace,
    copy: Copy,
    robots: asyncio.Task[Robots | None],
) -> tuple[str, Document]:
    """The fetch and what comes of it, with the fetch's outcome: the target's own error, the
    cached copy again (unchanged, or `recover`ing from a failure), the PDF extracted, the page
    cleaned (the site's own markdown preferred) with its usage signals, and kept;
    `Unsupported` for a body sift does not read."""
    try:
        res = await _fetch(svc, caller, p, trace, copy)
    except (UpstreamError, UpstreamTimeout) as exc:
        trace.outcome = exc.outcome
        if p.recover and copy.content is not None:
            return exc.outcome, await recall.stale(svc, copy, trace, exc.message)
        raise
    if res.status == 304 and copy.content is not None:
        return "ok", await recall.revalidated(svc, caller, p, copy, res, trace)
    if res.status >= 400:
        return await _upstream_error(svc, caller, p, trace, copy, res)
    kind = await svc.cpu.compute(kinds.kind, res.content_type, res.body, cost=len(res.body))
    if kind == "pdf" or kind in kinds.OFFICE:
        office = kind if kind != "pdf" else None
        facts = usage.signals(NO_FACTS, p.url, res.x_robots_tag, await robots)
        source, digest, res = await _spooled(svc, p, res)
        try:
            who = scope(caller, p)
            body = Spooled(res, source, digest, facts, office)
            doc = await extract_pdf(svc, caller, p, body, trace, who)
        finally:
            spool.remove(source)
        return "ok", recall.uncached(svc, doc)
    if kind == "image":
        return "ok", recall.uncached(svc, await _image(svc, caller, p, res))
    if kind == "other":
        trace.outcome = "unsupported"
        raise Unsupported(res.content_type.split(";")[0].strip())
    page = await _cleaned(svc, caller, p, res, kind)
    page = await site_markdown.preferred(svc, caller, p, res, page, _cleaned)
    page = usage.with_facts(page, res.x_robots_tag, await robots)
    if page.page == "challenge":  # a bot check is never cached as the document
        if p.recover and copy.content is not None:
            why = f"the site served {page.served}"
            return "challenge", await recall.stale(svc, copy, trace, why)
        return "challenge", Document(page, status=res.status, reason=res.reason)
    return "ok", _kept(svc, p, copy, Document(page, status=res.status, reason=res.reason))


async def _image(svc: Runtime, caller: Caller, p: FetchParams, res: FetchResult) -> Document:
    """An image, read by OCR as a document of its frames (`service/steps/images.py`)."""
    digest = await svc.cpu.compute(local.content_hash, res.body, cost=len(res.body))
    face = content(
        p.url,
        caller.cls,
        res.final_url,
        "image",
        res.content_type,
        etag=res.etag,
        last_modified=res.last_modified,
        content_hash=digest,
    )
    keeps = p.store and not p.private
    return await image_document(svc, caller, p, face, res.body, p.url, keeps)


async def _fetch(
    svc: Runtime, caller: Caller, p: FetchParams, trace: Trace, copy: Copy
) -> FetchResult:
    """The response, in the gate's slot asked for while the store was read, sending the
    cached copy's validators: an unchanged page answers 304."""
    c = copy.content
    started = time.monotonic()
    try:
        res = await svc.upstream.fetch(
            caller.name,
            p.url,
            ticket=copy.ticket,
            etag=c.etag if c else None,
            last_modified=c.last_modified if c else None,
            headers=check_headers(p.headers) if p.headers else (),
        )
    finally:
        trace.fetch_ms = (time.monotonic() - started) * 1000
        metrics.FETCH_SECONDS.observe(trace.fetch_ms / 1000)
    trace.upstream_status = res.status
    trace.bytes = len(res.body)
    return res


async def _upstream_error(
    svc: Runtime, caller: Caller, p: FetchParams, trace: Trace, copy: Copy, res: FetchResult
) -> tuple[str, Document]:
    """The target's own error (4xx, 5xx) as it sent it, cleaned when sift reads its kind; a
    5xx, or a bot check or rate-limit page whatever its status, answers the cached copy
    instead when the request may `recover`."""
    outcome = "upstream_5xx" if res.status >= 500 else "upstream_4xx"
    if res.status >= 500 and p.recover and copy.content is not None:
        why = f"upstream {res.status} {res.reason}".strip()
        return outcome, await recall.stale(svc, copy, trace, why)
    kind = await svc.cpu.compute(kinds.kind, res.content_type, res.body, cost=len(res.body))
    if kind in ("other", "pdf") or kind in kinds.OFFICE:  # an error page sift does not read
        page = error_content(p, caller, res)
    else:
        page = await _cleaned(svc, caller, p, res, kind)
    if page.page == "challenge" and p.recover and copy.content is not None:
        why = f"the site served {page.served or 'a bot check'} (upstream {res.status})"
        return "challenge", await recall.stale(svc, copy, trace, why)
    return outcome, Document(page, status=res.status, reason=res.reason)


async def _spooled(
    svc: Runtime, p: FetchParams, res: FetchResult
) -> tuple[bytes | Path, str, FetchResult]:
    """A PDF body's hash, and the body on disk, not in memory, while it waits for its slot (a
    private one is written to no file); and the response without it."""
    digest = await svc.cpu.compute(local.content_hash, res.body, cost=len(res.body))
    source = res.body if p.private else await svc.pdfs.spool(res.body)
    return source, digest, replace(res, body=b"")


async def _cleaned(
    svc: Runtime, caller: Caller, p: FetchParams, res: FetchResult, kind: str
) -> Content:
    """The page as a clean worker reads it (HTML, JSON, text)."""
    cleaned = await svc.cleaners.clean(
        CleanTask(
            kind=kind,
            body=res.body,
            content_type=res.content_type,
            url=res.final_url,
            input_cap=svc.cfg.clean.input_cap,
        )
    )
    metrics.CLEANS.labels(kind).inc()
    return content(
        p.url,
        caller.cls,
        res.final_url,
        kind,
        res.content_type,
        cleaned=cleaned,
        body=res.body,
        etag=res.etag,
        last_modified=res.last_modified,
        content_hash=await text_hash(svc, cleaned.text, cleaned.content_hash),
    )


def _kept(svc: Runtime, p: FetchParams, copy: Copy, doc: Document) -> Document:
    """A page fetched now, kept in the cache unless the request is private or says not to
    `store`. The answer does not wait for the store's write."""
    if p.private:
        return doc
    if copy.content is not None:
        metrics.cache_event("refetched")
    if not p.store:
        return doc
    recall.keep(svc, doc.content)
    return recall.uncached(svc, doc)


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

    The browser renders it first when asked (`render`, actions, a screenshot), or instead of
    the static answer when that calls for it (`browse.rendered_instead`; `wait_renders`:
    Firecrawl's `waitFor`, as every Firecrawl scrape is a browser page). The caller's view
    options clean the page again (`view`)."""
    trace.private = p.private
    if p.must_render:
        doc = await browse.rendered_document(svc, caller, p, trace)
    else:
        doc = await shared_document(svc, caller, p, trace, waiter)
        doc = await browse.rendered_instead(svc, caller, p, trace, doc, wait_renders)
    doc = await read_scans(svc, caller, p, doc)
    if p.whole_page or p.include_tags or p.exclude_tags:
        doc = await view(svc, p, doc)
    change = await changes.compare(svc, p, doc)
    return Result(doc, await render(svc, p, doc, change))


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
        raise NotContent(
            page, c.served, c.hint if c.hint in ("browser", "retry") else None, doc.status
        )
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
    the work stops (`sift.service.parts.flights`).

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
    if await held(work, waiter, budget, gone, trace, asker):
        return work.result()
    try:
        return await so_far(svc, (scope(caller, p), p.url), p, budget, waiter.kept)
    except OutOfTime:  # `recover`: the cached copy, if any, while the live work goes on
        if (doc := await recall.at_deadline(svc, caller, p, trace)) is None:
            raise
        return Result(doc, await render(svc, p, doc))
