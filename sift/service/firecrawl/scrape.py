"""A Firecrawl document from one fetch: what /v2/scrape answers, and what each target of a
Firecrawl batch scrape or crawl stores (the same shape, so a job's `data` is a list of them).

Types follow the SDK's strict models: integers are integers, absent is absent (never null).
"""

from __future__ import annotations

import time
from dataclasses import replace
from typing import Any

import msgspec

from sift.batch.scheduler import Attempt, from_error
from sift.clean import kinds
from sift.clean.links import extract_images, extract_links
from sift.core.callers import Caller
from sift.core.errors import BadRequest, SiftError
from sift.core.request import FetchParams, ScrapeTarget
from sift.core.types import Content, TargetOutcome
from sift.service import pipeline
from sift.service.document import Result, Trace
from sift.service.render import raw_body, render
from sift.service.runtime import Runtime
from sift.service.view import view

FORMATS = {"markdown", "html", "rawHtml", "links", "images", "summary"}
# What `summary` asks of the digest (extractive without a model, the model's with one).
SUMMARY_QUESTION = "Summarise this document: what it is about and its main points."


async def document(
    svc: Runtime,
    params: FetchParams,
    result: Result,
    formats: set[str] | frozenset[str],
    *,
    notes: list[str] | None = None,
    max_pages: int | None = None,
) -> tuple[dict[str, Any], list[str]]:
    """The Firecrawl `data` of a fetched document, and its links (an HTML page's, else []).

    `notes`: what the request asked that sift cannot honour (`data.warning`); `max_pages`:
    a PDF's `parsers` `maxPages` (the first pages only)."""
    notes = list(notes or ())
    doc, env = result.doc, result.envelope
    c = doc.content
    paged = c.kind == "pdf" or c.kind in kinds.OFFICE
    if max_pages and paged and not (params.pages or params.grep or params.question):
        try:
            env = await render(svc, msgspec.structs.replace(params, pages=f"1-{max_pages}"), doc)
        except BadRequest:  # an answer out of time: those pages are not extracted yet
            notes.append(f"maxPages {max_pages}: the pages extracted so far are answered")
    metadata: dict[str, Any] = {
        "title": c.title,
        "sourceURL": params.url,
        "url": c.final_url,
        "statusCode": int(doc.status),
        "contentType": c.content_type.split(";")[0].strip() or "application/octet-stream",
    }
    pdf = env.get("pdf") or env.get("parts")  # an office file's parts count as its pages
    if pdf:
        metadata["numPages"] = int(pdf["pages"])
    data: dict[str, Any] = {"metadata": metadata}
    if "markdown" in formats:
        data["markdown"] = env["content"]
    if "summary" in formats:
        data["summary"] = await _summary(svc, params, result.doc, env)
    if (params.whole_page or params.include_tags or params.exclude_tags) and c.kind != "html":
        notes.append(f"onlyMainContent/includeTags/excludeTags apply to HTML; this is {c.kind}")
    if "html" in formats:
        if c.kind == "html":
            data["html"] = (await view(svc, params, doc, want_html=True)).html
        else:
            notes.append(f"format `html` is for HTML pages; this is {c.kind}")
    links = await _from_raw(svc, params, c, formats, data)
    if "screenshot" in formats and env.get("screenshot"):
        data["screenshot"] = env["screenshot"]
    if env.get("warning"):
        notes.insert(0, env["warning"])
    script_only = env.get("hint") == "browser" and env.get("page", "content") == "content"
    if script_only and not env.get("rendered"):
        notes.insert(0, "this page needs a browser (script-rendered); text may be missing")
    if notes:
        data["warning"] = "; ".join(notes)
    return data, links


async def _from_raw(
    svc: Runtime,
    params: FetchParams,
    c: Content,
    formats: set[str] | frozenset[str],
    data: dict[str, Any],
) -> list[str]:
    """The formats read from the raw body (`rawHtml`, `links`, `images`) into `data`; and the
    page's links, when asked for or to `discover` them (an HTML page's, else [])."""
    find_links = "links" in formats or (isinstance(params, ScrapeTarget) and params.discover)
    wanted = find_links or bool(formats & {"rawHtml", "images"})
    raw_bytes = await raw_body(svc, c) if wanted else None
    raw = None
    if raw_bytes is not None:
        raw = await svc.compute(kinds.decode, raw_bytes, c.content_type, cost=len(raw_bytes))
    if "rawHtml" in formats and raw is not None:
        data["rawHtml"] = raw
    links: list[str] = []
    if find_links and raw is not None and c.kind == "html":
        links = await svc.compute(extract_links, raw, c.final_url, cost=len(raw))
    if "links" in formats:
        data["links"] = links
    if "images" in formats:
        data["images"] = []
        if raw is not None and c.kind == "html":
            data["images"] = await svc.compute(extract_images, raw, c.final_url, cost=len(raw))
    return links


async def _summary(svc: Runtime, params: FetchParams, doc: Any, env: Any) -> str:
    """The digest's answer to a summary question (extractive without a model)."""
    if params.effective_mode == "digest":
        return str(env["content"])
    asked = msgspec.structs.replace(
        params, mode="digest", question=SUMMARY_QUESTION, pages=None, grep=None
    )
    summary = await render(svc, asked, doc)
    return str(summary["content"])


async def execute(svc: Runtime, caller: Caller, p: ScrapeTarget, budget: float) -> Attempt:
    """One Firecrawl job target: the document stored as its result, as /v2/scrape answers it
    (the target's own HTTP error is a document with its `statusCode`, not a failure)."""
    started = time.monotonic()
    try:
        result = await pipeline.within(
            svc, replace(caller, batch=True), p, Trace(), budget, strict=False
        )
        data, links = await document(svc, p, result, frozenset(p.formats))
    except SiftError as exc:
        return from_error(exc, time.monotonic() - started)
    body = msgspec.json.encode(data)
    seconds = time.monotonic() - started
    found = tuple(links) if p.discover and result.doc.status < 400 else ()
    return Attempt(TargetOutcome("done", result=body, code=200), "ok", seconds, links=found)
