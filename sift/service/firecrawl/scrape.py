"""A Firecrawl document from one fetch: what /v2/scrape answers, and what each target of a
Firecrawl batch scrape or crawl stores (the same shape, so a job's `data` is a list of them).

Types follow the SDK's strict models: integers are integers, absent is absent (never null).
"""

from __future__ import annotations

import time
from dataclasses import dataclass, replace
from typing import Any

import msgspec

from sift.batch.scheduler import Attempt, from_error
from sift.clean import injection_scan, kinds
from sift.clean.links import extract_images, extract_links, markdown_links
from sift.clean.signals import MARKDOWN_TYPES
from sift.core.callers import Caller
from sift.core.envelope import Envelope, Injection
from sift.core.errors import BadRequest, SiftError
from sift.core.request import FetchParams, ScrapeTarget
from sift.core.types import Content, TargetOutcome
from sift.digest import structured
from sift.fetch.transfer import media_type
from sift.service.answer.render import raw_body, render
from sift.service.document import Document, Result, Trace
from sift.service.firecrawl import device, pdf_pages
from sift.service.parts.runtime import Runtime
from sift.service.steps import changes, pipeline
from sift.service.steps.view import view

FORMATS = {"markdown", "html", "rawHtml", "links", "images", "summary", "changeTracking"}
# What `summary` asks of the digest (extractive without a model, the model's with one).
SUMMARY_QUESTION = "Summarise this document: what it is about and its main points."


@dataclass(frozen=True)
class Options:
    """What a scrape asked beside its formats and FetchParams.

    `notes`: what the request asked that sift cannot honour (`data.warning`); `max_pages`:
    a PDF's `parsers` `maxPages` (the first pages only); `asked`: the URL as the caller
    wrote it (`sourceURL`), when it is not `params.url`; `git_diff`: `changeTracking`'s
    mode that adds the diff (`tracking_options`)."""

    notes: tuple[str, ...] = ()
    max_pages: int | None = None
    asked: str = ""
    git_diff: bool = False


NO_OPTIONS = Options()


async def document(
    svc: Runtime,
    params: FetchParams,
    result: Result,
    formats: set[str] | frozenset[str],
    options: Options = NO_OPTIONS,
) -> tuple[dict[str, Any], list[str]]:
    """The Firecrawl `data` of a fetched document, and its links (an HTML page's, else [])."""
    notes = list(options.notes)
    max_pages, asked, git_diff = options.max_pages, options.asked, options.git_diff
    doc, answer = result.doc, result.envelope
    c = doc.content
    paged = c.kind == "pdf" or c.kind in kinds.OFFICE
    if max_pages and paged and not (params.pages or params.grep or params.question):
        try:
            first = msgspec.structs.replace(params, pages=f"1-{max_pages}")
            answer = await render(svc, first, doc)
        except BadRequest:  # an answer out of time: those pages are not extracted yet
            notes.append(f"maxPages {max_pages}: the pages extracted so far are answered")
    data: dict[str, Any] = {"metadata": _metadata(params, doc, answer, asked)}
    if "changeTracking" in formats:
        cap = min(svc.cfg.out_cap, params.max_chars or svc.cfg.out_cap)
        data["changeTracking"] = await changes.tracking(svc, doc, git_diff, cap)
    if "markdown" in formats:
        data["markdown"] = answer.content
    found = list(answer.injection)
    if "summary" in formats:
        summary = await _summary(svc, params, result.doc, answer)
        data["summary"] = summary.content
        found += [
            msgspec.structs.replace(f, where="summary")
            for f in summary.injection
            if summary is not answer
        ]
    report_injection(data, found)
    if (params.whole_page or params.include_tags or params.exclude_tags) and c.kind != "html":
        notes.append(f"onlyMainContent/includeTags/excludeTags apply to HTML; this is {c.kind}")
    if "html" in formats:
        if c.kind == "html":
            data["html"] = (await view(svc, params, doc, want_html=True)).html
        else:
            notes.append(f"format `html` is for HTML pages; this is {c.kind}")
    links = await _from_raw(svc, params, c, formats, data)
    if "screenshot" in formats and answer.screenshot:
        data["screenshot"] = answer.screenshot
    if answer.warning:
        notes.insert(0, answer.warning)
    script_only = answer.hint == "browser" and answer.page == "content"
    if script_only and not answer.rendered:
        notes.insert(0, "this page needs a browser (script-rendered); text may be missing")
    if notes:
        data["warning"] = "; ".join(notes)
    return data, links


def _metadata(params: FetchParams, doc: Document, answer: Envelope, asked: str) -> dict[str, Any]:
    """Firecrawl's `metadata` of a document: what it is, where from, its pages, its usage."""
    c = doc.content
    metadata: dict[str, Any] = {
        "title": c.title,
        "sourceURL": asked or params.url,
        "url": c.final_url,
        "statusCode": int(doc.status),
        "contentType": c.content_type.split(";")[0].strip() or "application/octet-stream",
    }
    if answer.paged:  # an office file's parts count as its pages
        metadata["numPages"] = answer.paged.pages
    _usage_metadata(metadata, answer)
    if answer.metadata is not None:
        for key, name in _STATED:
            if said := getattr(answer.metadata, key):
                metadata[name] = said
    return metadata


# What the page states about itself (sift/clean/meta.py), by Firecrawl's metadata names.
_STATED = (
    ("description", "description"),
    ("language", "language"),
    ("canonical", "canonicalUrl"),
    ("site_name", "ogSiteName"),
    ("authors", "author"),
    ("published", "publishedTime"),
    ("modified", "modifiedTime"),
)


def _usage_metadata(metadata: dict[str, Any], answer: Envelope) -> None:
    """What the site says about automated use, in Firecrawl's metadata: `robots` (the page's
    meta robots, as Firecrawl reports it), sift's `usage`, and the text's `source`."""
    said = answer.usage
    if said.meta_robots:
        metadata["robots"] = said.meta_robots
    if said.says():
        metadata["usage"] = said
    if answer.source:
        metadata["source"] = answer.source


def tracking_options(raw: Any) -> tuple[bool, list[str]]:
    """`changeTracking`'s options in a `formats` list: whether its `modes` ask `git-diff`,
    and notes for what sift does not do (`json` mode: a model's comparison; `tag`: sift
    compares with the copy it cached last, whatever its tag)."""
    for item in raw if isinstance(raw, list) else ():
        if not isinstance(item, dict) or item.get("type") != "changeTracking":
            continue
        said = item.get("modes")
        modes: list[Any] = said if isinstance(said, list) else []
        notes = []
        if "json" in modes:
            notes.append("changeTracking `json` mode: sift compares the text (git-diff) only")
        if item.get("tag"):
            notes.append("changeTracking `tag`: sift compares with the copy it cached last")
        return "git-diff" in modes, notes
    return False, []


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
        raw = await svc.cpu.compute(kinds.decode, raw_bytes, c.content_type, cost=len(raw_bytes))
    if "rawHtml" in formats and raw is not None:
        data["rawHtml"] = raw
    links: list[str] = []
    if find_links and raw is not None and c.kind == "html":
        # the site's own markdown answered in place of the HTML: its links are markdown's
        read = markdown_links if media_type(c.content_type) in MARKDOWN_TYPES else extract_links
        links = await svc.cpu.compute(read, raw, c.final_url, cost=len(raw))
    if "links" in formats:
        data["links"] = links
    if "images" in formats:
        data["images"] = []
        if raw is not None and c.kind == "html":
            data["images"] = await svc.cpu.compute(extract_images, raw, c.final_url, cost=len(raw))
    return links


async def _summary(svc: Runtime, params: FetchParams, doc: Document, answer: Envelope) -> Envelope:
    """The digest's answer to a summary question (extractive without a model)."""
    if params.effective_mode == "digest":
        return answer
    asked = msgspec.structs.replace(
        params, mode="digest", question=SUMMARY_QUESTION, pages=None, grep=None
    )
    return await render(svc, asked, doc)


def report_injection(data: dict[str, Any], found: list[Injection], json_output: Any = None) -> None:
    """`metadata.injection`: what addresses an AI reader or is invisible in the document, its
    `summary` and its `json` output (a model's: it may repeat the page), at most
    `injection_scan.FOUND_MAX` places."""
    if json_output is not None:
        text = msgspec.json.encode(json_output).decode()
        found = found + injection_scan.scan([("json", text)]).kept
    if found:
        data["metadata"]["injection"] = msgspec.to_builtins(found[: injection_scan.FOUND_MAX])


async def execute(svc: Runtime, caller: Caller, p: ScrapeTarget, budget: float) -> Attempt:
    """One Firecrawl job target: the document stored as its result, as /v2/scrape answers it
    (the target's own HTTP error is a document with its `statusCode`, not a failure)."""
    started = time.monotonic()
    if "changeTracking" in p.formats:  # compared with what the site serves now
        p = msgspec.structs.replace(p, max_age=0)
    try:
        result = await pipeline.within(
            svc, replace(caller, batch=True), p, Trace(), budget, strict=False
        )
        said = (*p.notes, *device.notes(p, result.doc))
        options = Options(notes=said, max_pages=p.max_pages, asked=p.asked, git_diff=p.git_diff)
        data, links = await document(svc, p, result, frozenset(p.formats), options)
        if (shots := device.actions(result.doc)) is not None:
            data["actions"] = shots
        parser = pdf_pages.PdfParser(p.max_pages, p.page_list, p.page_markers)
        pdf_pages.apply(data, result.doc, parser, svc.cfg.out_cap)
        if p.json_prompt is not None or p.json_schema is not None:  # the `json` format
            content = result.envelope.content
            data["json"] = await structured.extract(
                svc.cfg.digest, content, p.json_prompt, p.json_schema
            )
    except SiftError as exc:
        return from_error(exc, time.monotonic() - started)
    body = msgspec.json.encode(data)
    seconds = time.monotonic() - started
    found = tuple(links) if p.discover and result.doc.status < 400 else ()
    return Attempt(TargetOutcome("done", result=body, code=200), "ok", seconds, links=found)
