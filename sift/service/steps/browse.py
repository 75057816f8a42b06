"""The browser path of the pipeline: the page as a browser shows it, cleaned like any page and
cached apart from the static answer (class `<class>/render`), and when a static answer calls
for it instead."""

from __future__ import annotations

import time

import msgspec

from sift.browser.engine import Page, Rendered
from sift.clean.protocol import CleanTask
from sift.core import metrics
from sift.core.callers import Caller
from sift.core.errors import SiftError
from sift.core.request import FetchParams
from sift.service.document import Document, Trace
from sift.service.parts.runtime import Runtime
from sift.service.steps import recall
from sift.service.steps.content import as_rendered, content, text_hash

HTML = "text/html; charset=utf-8"


async def rendered_instead(
    svc: Runtime, caller: Caller, p: FetchParams, trace: Trace, doc: Document, wait: bool
) -> Document:
    """The static answer `doc`, or the page rendered instead when `doc` is a script-only page
    (`hint: browser`) and `[render] auto` is on, or (`wait`: Firecrawl's `waitFor`) an HTML
    page with `wait_for` set. A render that fails (busy, too) leaves the static answer, with
    a `warning` saying why. A private request's page is rendered with its headers."""
    if not _script_only(svc, doc) and not (wait and _renders_on_wait(svc, p, doc)):
        return doc
    try:
        return await rendered_document(svc, caller, p, trace)
    except SiftError as exc:  # the static answer stands, with what went wrong
        return _note(doc, f"rendering in a browser failed: {exc.message}")


def _note(doc: Document, note: str) -> Document:
    return msgspec.structs.replace(doc, warning="; ".join(w for w in (doc.warning, note) if w))


def _script_only(svc: Runtime, doc: Document) -> bool:
    c = doc.content
    return (
        svc.browser.available
        and svc.cfg.render.auto
        and c.kind == "html"
        and c.hint == "browser"
        and c.page == "content"
        and doc.status < 400
    )


def _renders_on_wait(svc: Runtime, p: FetchParams, doc: Document) -> bool:
    """`wait_for` (and Firecrawl's `mobile` and `location` languages, which only a browser
    honours) asks for the page a browser shows: an HTML page, where a browser is
    installed."""
    c = doc.content
    return (
        bool(p.wait_for or p.mobile or p.languages)
        and svc.browser.available
        and c.kind == "html"
        and doc.status < 400
    )


async def rendered_document(svc: Runtime, caller: Caller, p: FetchParams, trace: Trace) -> Document:
    """The page as the browser shows it, cleaned like any page and cached apart from the
    static answer (class `<class>/render`). A render with actions, a screenshot, or a phone's
    or a language's view (Firecrawl's `mobile`, `location`) is live, and one with the
    caller's own `headers` is private: sent on its own browser context only, neither read
    from nor put in the cache."""
    target = svc.guard.precheck(p.url)
    trace.host = target.host
    cls = f"{caller.cls}/render"
    plain = not (p.actions or p.screenshot or p.mobile or p.languages or p.private)
    if plain:
        cached, _ = await recall.cached(svc, p.url, cls)
        if cached is not None and recall.fresh(cached, svc.cfg.cache.ttl, p.max_age, svc.clock()):
            trace.cache = "hit"
            metrics.cache_event("hit")
            return Document(as_rendered(cached), cached=True, rendered=True)
    trace.cache = "miss"
    r = await _render(svc, caller, p, trace, target.host)
    body = r.html.encode()
    trace.bytes = len(body)
    cleaned = await svc.cleaners.clean(
        CleanTask(
            kind="html",
            body=body,
            content_type=HTML,
            url=r.final_url,
            input_cap=svc.cfg.clean.input_cap,
        )
    )
    page = as_rendered(
        content(
            p.url,
            cls,
            r.final_url,
            "html",
            HTML,
            cleaned=cleaned,
            body=body,
            content_hash=await text_hash(svc, cleaned.text, cleaned.content_hash),
        )
    )
    if plain and p.store and r.status < 400 and page.page != "challenge" and not r.timed_out:
        recall.keep(svc, page)
    return Document(
        page,
        status=r.status,
        warning=r.warning,
        rendered=True,
        screenshot=r.screenshot,
        shots=tuple(r.shots),
    )


async def _render(
    svc: Runtime, caller: Caller, p: FetchParams, trace: Trace, host: str
) -> Rendered:
    """The browser's render of `p.url`, under the host's gate, timed and counted."""
    started = time.monotonic()
    try:
        async with svc.gates.gate(host, caller.name):
            page = Page(
                p.url,
                budget=p.timeout,
                wait_for=p.wait_for or 0,
                actions=tuple(p.actions or ()),
                screenshot=p.screenshot,
                headers=p.headers,
                mobile=p.mobile,
                languages=tuple(p.languages),
            )
            r = await svc.browser.render(caller.name, page)
    except SiftError as exc:
        trace.outcome = exc.outcome
        metrics.render_outcome(exc.outcome)
        raise
    finally:
        trace.fetch_ms = (time.monotonic() - started) * 1000
        metrics.RENDER_SECONDS.observe(trace.fetch_ms / 1000)
    metrics.render_outcome("blocked_some" if r.blocked else "ok")
    trace.upstream_status = r.status
    return r
