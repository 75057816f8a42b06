"""Rendering a document into the answer's envelope: mode, jq, digest, the output cap and the
answer's size bound. The text itself comes from `sift.documents.render` (header, cut, maps,
pages, grep)."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from sift.clean import kinds
from sift.clean.protocol import CleanTask
from sift.core.errors import BadRequest
from sift.documents import sections
from sift.documents.map import outline_entries
from sift.documents.pages import Document as Paged
from sift.documents.pages import Rendered, warning_note
from sift.documents.render import cut, header, iso
from sift.documents.render import render as render_text
from sift.service.digest import DigestAnswer, digest

if TYPE_CHECKING:
    from sift.core.request import FetchParams
    from sift.core.types import Content
    from sift.service.document import Document
    from sift.service.runtime import Runtime


# An answer's size: `content` is at most the cap; the `pdf`/`sections` outline at most
# `outline_budget(cap)` characters of JSON (entries beyond are counted in `outline_more`);
# titles at most TITLE_CAP characters each. So the JSON of an answer is within
# `answer_bound(cap)` characters plus the two URLs (the asked one and the final one, which the
# caller and the redirects chose).
TITLE_CAP = 1_000
ANSWER_ALLOWANCE = 8_192  # the other fields: names, numbers, hint, warning, digest facts


def outline_budget(cap: int) -> int:
    """A tenth of the cap, and at least 4,000 characters (some 60 entries) for small caps."""
    return max(cap // 10, 4_000)


def answer_bound(cap: int) -> int:
    """The most characters an answer's JSON has for output cap `cap`, URLs aside."""
    return cap + outline_budget(cap) + 2 * TITLE_CAP + ANSWER_ALLOWANCE


async def render(svc: Runtime, p: FetchParams, doc: Document) -> dict[str, Any]:
    c = doc.content
    cap = min(svc.cfg.out_cap, p.max_chars or svc.cfg.out_cap)
    mode = p.effective_mode
    pages = doc.pages.size if doc.pages is not None else None
    head = header(c.title, c.final_url, c.fetched_at, pages) if p.context else ""
    room = max(0, cap - len(head))
    if p.max_chars:  # the caller's cap is on the content; the short header comes on top
        room = min(p.max_chars, max(0, svc.cfg.out_cap - len(head)))
    if (p.pages or p.grep) and c.kind not in ("pdf", "html"):
        raise BadRequest(f"`pages` and `grep` need a PDF or HTML document; this one is {c.kind}")
    if mode == "raw" and c.kind == "pdf":
        raise BadRequest("mode `raw` is for HTML, JSON and text; a PDF comes back as its text")
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
            CleanTask(kind="json", body=source, content_type="application/json", url=c.final_url,
                      jq=p.jq)
        )  # fmt: skip
        text, truncated = cut(result.text, room)
    elif doc.pages is not None or p.pages or p.grep or (c.kind == "html" and len(c.text) > room):
        paged = await _pages_of(svc, doc)
        shown = await _rendered(svc, c, paged, room, p.pages, p.grep)
        text, truncated = shown.content, shown.truncated or shown.map
    else:
        text, truncated = cut(c.text, room)
    notice = not_content_notice(c)
    content = (f"{notice}\n\n" if notice else "") + (head + text)[: len(head) + room]
    if not p.max_chars:
        content = content[:cap]  # the whole answer within the output cap
    env: dict[str, Any] = {
        "success": True,
        "url": p.url,
        "final_url": c.final_url,
        "status": doc.status,
        "kind": c.kind,
        "content_type": c.content_type,
        "title": c.title[:TITLE_CAP],
        "content": content,
        "chars": len(content),
        "truncated": truncated,
        "cached": doc.cached,
        "stale": doc.stale,
        "fetched_at": iso(c.fetched_at),
        "hint": c.hint,
        "page": c.page,
        "hidden_removed": c.hidden_removed,
    }
    note = None
    if shown is not None and paged is not None:
        env[("pdf" if c.kind == "pdf" else "sections")] = _pages_envelope(paged, shown, cap)
        if shown.map and env["hint"] is None:
            env["hint"] = "pages"
        note = shown.note
        if note is None and shown.returned:
            a, b = shown.returned
            note = warning_note(paged, range(a, b + 1))
    if doc.rendered:
        env["rendered"] = True
    if doc.screenshot is not None:
        env["screenshot"] = f"data:image/png;base64,{doc.screenshot}"
    warnings = [w for w in (notice, doc.warning, note, c.warning) if w]
    if c.fallback:  # absent: the main content, as extracted
        env["extraction"] = "fallback"
        warnings.append("main content not found; this is the page's full text or description")
    if c.coverage is not None:
        env["coverage"] = c.coverage
        warnings.append(f"the main content keeps {c.coverage:.0%} of the page's article text")
    if digested is not None:
        env["digest"] = digested.envelope()
        if digested.warning:
            warnings.append(digested.warning)
    if warnings:
        env["warning"] = "; ".join(warnings)
    return env


def _raw_text(body: bytes | None, c: Content, room: int) -> tuple[str, bool]:
    return cut(kinds.decode(body or c.text.encode(), c.content_type), room)


def not_content_notice(c: Content) -> str | None:
    """One line for a page that is not the content, so an agent that reads only the text is
    told too (`/v2/scrape` puts it atop the markdown)."""
    if c.page == "content":
        return None
    what = c.served or f"a {c.page} page"
    return f"[sift: this is not the page's content: the site served {what} (page: {c.page})]"


async def raw_body(svc: Runtime, c: Content) -> bytes | None:
    """The raw body of a document: at hand when just fetched, else read from the store."""
    if c.body is not None or c.kind not in ("html", "json", "text"):
        return c.body
    return await svc.store(lambda s: s.content_body(c.url, c.caller_class))


async def _rendered(
    svc: Runtime, c: Content, paged: Paged, room: int, pages: str | None, grep: str | None
) -> Rendered:
    """`render_text` on a CPU thread, remembered (within `[cache] render_memory`) for the
    most recent (document, cap, pages, grep): agents ask for the same map and pages again."""
    key = (c.content_hash, c.caller_class, c.kind, c.title, room, pages, grep, c.url)
    found: Rendered | None = svc.renders.get(key)
    if found is None:
        found = await svc.compute(
            render_text, paged, out_cap=room, pages=pages, grep=grep, url=c.url, cost=paged.chars
        )
        svc.renders.put(key, found, len(found.content) + len(found.note or "") + 256)
    return found


async def _pages_of(svc: Runtime, doc: Document) -> Paged:
    """The document as pages: a PDF's own, or an HTML page's sections split at headings.

    Splitting a long page is CPU work, done on a CPU thread; the split of the most recently
    used pages is remembered within `[cache] sections_memory` (keyed by content hash).
    """
    if doc.pages is not None:
        return doc.pages
    c = doc.content
    key = (c.content_hash, c.caller_class, c.title)
    found: Paged | None = svc.sections.get(key)
    if found is None:
        found = await svc.compute(sections.html_document, c.text, title=c.title, cost=len(c.text))
        size = sum(map(len, found.pages)) + 128 * (len(found.outline) + len(found.pages))
        svc.sections.put(key, found, size)
    return found


def _pages_envelope(pages: Paged, shown: Rendered, cap: int) -> dict[str, Any]:
    """The `pdf` / `sections` object. Its outline is cut to `outline_budget(cap)` (see
    `answer_bound`); `outline_more` says how many entries were left out."""
    outline, more = outline_entries(pages.outline, outline_budget(cap))
    env: dict[str, Any] = {
        "pages": pages.size,
        "title": pages.title[:TITLE_CAP],
        "outline": [{"title": o.title, "page": o.page, "level": o.level} for o in outline],
        "returned": list(shown.returned) if shown.returned else None,
        "map": shown.map,
        "grep_hits": shown.grep_hits,
    }
    if more:
        env["outline_more"] = more
        env["outline_note"] = (
            f"{more} more outline entries not listed; find a part with grep, or read it with pages"
        )
    return env


async def _digest(svc: Runtime, p: FetchParams, doc: Document, cap: int) -> DigestAnswer:
    """The answer to `p.question`, citing pages; the model's, or extractive without one."""
    c = doc.content
    pages = list((await _pages_of(svc, doc)).pages) if c.kind in ("pdf", "html") else [c.text]
    return await digest(
        svc, c.caller_class, content_hash=c.content_hash, pages=pages, kind=c.kind,
        title=c.title, question=p.question or "", out_cap=cap,
    )  # fmt: skip
