"""A caller's view of a page: the page cleaned again from its body with the caller's options
(the whole page, tag selectors, the cleaned HTML)."""

from __future__ import annotations

import msgspec

from sift.clean.protocol import CleanTask
from sift.core.request import FetchParams
from sift.service.answer.render import raw_body
from sift.service.document import Document
from sift.service.parts.runtime import Runtime
from sift.service.steps.content import as_rendered, text_hash


async def view(svc: Runtime, p: FetchParams, doc: Document, want_html: bool = False) -> Document:
    """The document cleaned again from its body with the caller's options. The cache keeps
    the page as fetched and its default clean; a view is derived from that body on each
    request and never cached, so the options cannot split the cache or poison it. Only HTML
    has a view; other kinds come back as they are."""
    c = doc.content
    if c.kind != "html":
        return doc
    body = await raw_body(svc, c)
    if body is None:
        return doc
    cleaned = await svc.cleaners.clean(
        CleanTask(
            kind="html",
            body=body,
            content_type=c.content_type,
            url=c.final_url,
            input_cap=svc.cfg.clean.input_cap,
            whole_page=p.whole_page,
            include_tags=p.include_tags,
            exclude_tags=p.exclude_tags,
            want_html=want_html,
        )
    )
    digest = await text_hash(svc, cleaned.text, cleaned.content_hash)
    # What the page is (`page`, `served`) stays the default clean's: a selection of a page
    # is not a different page. Hidden text and injection are the view's own.
    content = msgspec.structs.replace(
        c,
        title=cleaned.title or c.title,
        text=cleaned.text,
        hint=c.hint or cleaned.hint,
        fallback=cleaned.fallback,
        coverage=cleaned.coverage,
        body=body,
        content_hash=f"view:{digest}",
        hidden_removed=cleaned.hidden_removed,
        warning=cleaned.warning,
        facts=msgspec.structs.replace(c.facts, source=None),  # sift's text, not the site's
    )
    if doc.rendered:
        content = as_rendered(content)
    return msgspec.structs.replace(doc, content=content, html=cleaned.html)
