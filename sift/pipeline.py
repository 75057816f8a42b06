"""The one per-target pipeline: guard → cache → gates → fetch → kind → clean → render.

`/v1/fetch`, `/v2/scrape`, batch targets and the in-process CLI all call `run()`; nothing
re-implements a piece of it. It runs on the event loop and awaits actors through replies.
"""

from __future__ import annotations

import hashlib
import time
from dataclasses import dataclass, field
from typing import Any

from sift import kinds, metrics
from sift.auth import Caller
from sift.clean.protocol import CleanTask
from sift.errors import SiftError, Unsupported, UpstreamError, UpstreamTimeout
from sift.render import render
from sift.request import FetchParams
from sift.services import Services
from sift.store.content import Content


@dataclass
class Trace:
    """What the request log and metrics may know about one target (never page text)."""

    host: str = ""
    outcome: str = "ok"
    cache: str = "none"  # hit | miss | revalidated | stale | none
    bytes: int = 0
    upstream_status: int | None = None
    fetch_ms: float = 0.0


@dataclass
class Document:
    """A document ready to render: from the cache or just fetched and cleaned."""

    content: Content
    status: int = 200
    reason: str = "OK"
    cached: bool = False
    stale: bool = False
    warning: str | None = None


@dataclass
class Result:
    doc: Document
    envelope: dict[str, Any] = field(default_factory=dict)


def _hash(text: str) -> str:
    return hashlib.sha256(text.encode()).hexdigest()[:32]


def _fresh(c: Content, ttl: float) -> bool:
    return time.time() - c.fetched_at < ttl


async def fetch_document(svc: Services, caller: Caller, p: FetchParams, trace: Trace) -> Document:
    """The document for `p.url` as this caller's class sees it: cached, revalidated or fetched."""
    target = svc.guard.precheck(p.url)
    trace.host = target.host
    cached: Content | None = await svc.store("content_get", p.url, caller.cls)
    if cached is not None and _fresh(cached, svc.cfg.cache.ttl):
        trace.cache = "hit"
        metrics.cache_event("hit")
        return Document(cached, cached=True)
    trace.cache = "miss"
    metrics.cache_event("miss")
    started = time.monotonic()
    try:
        async with svc.gate(target.host, caller.name):
            res = await svc.fetch(
                p.url,
                etag=cached.etag if cached else None,
                last_modified=cached.last_modified if cached else None,
                timeout=p.timeout,
            )
    except (UpstreamError, UpstreamTimeout) as exc:
        trace.outcome = exc.outcome
        metrics.fetch_outcome("timeout" if isinstance(exc, UpstreamTimeout) else "error")
        if p.recover and cached is not None:
            return _stale(cached, trace, exc.message)
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
        await svc.store("content_refresh", p.url, caller.cls, res.etag, res.last_modified)
        return Document(cached, cached=True)
    if res.status >= 500:
        metrics.fetch_outcome("upstream_5xx")
        if p.recover and cached is not None:
            return _stale(cached, trace, f"upstream {res.status} {res.reason}".strip())
    elif res.status >= 400:
        metrics.fetch_outcome("upstream_4xx")
    kind = kinds.kind(res.content_type, res.body)
    if kind == "other" or kind == "pdf":
        if res.status < 400:
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
        etag=res.etag,
        last_modified=res.last_modified,
        content_hash=_hash(cleaned.text),
        fetched_at=time.time(),
    )
    if res.status >= 400:
        return Document(content, status=res.status, reason=res.reason)
    metrics.fetch_outcome("ok")
    if cached is not None:
        metrics.cache_event("refetched")
    evicted: list[int] = await svc.store("content_put", content, svc.cfg.cache.max_bytes)
    if evicted:
        metrics.cache_event("evicted", len(evicted))
        metrics.CACHE_EVICTED_BYTES.inc(sum(evicted))
    return Document(content, status=res.status, reason=res.reason)


def _stale(cached: Content, trace: Trace, why: str) -> Document:
    trace.cache = "stale"
    metrics.cache_event("stale")
    return Document(cached, cached=True, stale=True, warning=f"live fetch failed ({why})")


async def shared_document(
    svc: Services, caller: Caller, p: FetchParams, trace: Trace
) -> Document:
    """`fetch_document`, shared by concurrent requests of one caller class for one URL."""
    key = (caller.cls, p.url, p.recover)
    if svc.flights.running(key):
        trace.cache = "shared"
        doc, _ = await svc.flights.run(key, lambda: fetch_document(svc, caller, p, Trace()))
    else:
        doc, _ = await svc.flights.run(key, lambda: fetch_document(svc, caller, p, trace))
    return doc  # type: ignore[no-any-return]


async def run(svc: Services, caller: Caller, p: FetchParams, trace: Trace) -> Result:
    """Fetch (or recall) the document and render the answer the request asked for."""
    doc = await shared_document(svc, caller, p, trace)
    envelope = await render(svc, p, doc)
    return Result(doc, envelope)
