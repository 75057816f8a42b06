"""Every `Content` the service makes is made here: a page fetched, rendered or read from a file
as its clean worker left it, a PDF's face (its text is in its pages), a response sift does not
read. Light to import: `sift extract`'s cached path (`service/entries/cached.py`) uses it too."""

from __future__ import annotations

import time
from typing import TYPE_CHECKING

import msgspec

from sift.core.types import NO_FACTS, Content, PageFacts
from sift.service.answer import findings

if TYPE_CHECKING:
    from sift.clean.protocol import CleanResult
    from sift.service.parts.runtime import Runtime


def content(
    url: str,
    caller_class: str,
    final_url: str,
    kind: str,
    content_type: str,
    *,
    cleaned: CleanResult | None = None,
    title: str = "",
    body: bytes | None = None,
    etag: str | None = None,
    last_modified: str | None = None,
    content_hash: str = "",
    fetched_at: float | None = None,
    facts: PageFacts = NO_FACTS,
) -> Content:
    """The document `url` as `caller_class` has it, `cleaned` (its text, title and what the
    clean found), else with no text of its own. Fetched now unless `fetched_at` says when."""
    face = Content(
        url=url,
        caller_class=caller_class,
        final_url=final_url,
        kind=kind,
        content_type=content_type,
        title=title,
        text="",
        body=body,
        hint=None,
        fallback=False,
        etag=etag,
        last_modified=last_modified,
        content_hash=content_hash,
        fetched_at=time.time() if fetched_at is None else fetched_at,
        facts=facts,
    )
    if cleaned is None:
        return face
    findings.remember(cleaned.content_hash, cleaned.said)
    return msgspec.structs.replace(
        face,
        title=cleaned.title,
        text=cleaned.text,
        hint=cleaned.hint,
        fallback=cleaned.fallback,
        coverage=cleaned.coverage,
        page=cleaned.page,
        served=cleaned.served,
        hidden_removed=cleaned.hidden_removed,
        warning=cleaned.warning,
        facts=PageFacts(
            meta_robots=cleaned.meta_robots,
            markdown_link=cleaned.markdown_link,
            meta=cleaned.meta,
            hidden_said=cleaned.hidden_said,
        ),
    )


async def text_hash(svc: Runtime, text: str, made: str | None = None) -> str:
    """The content hash of a cleaned text: `made` by the clean worker already, else hashed
    here (a CPU thread's work: the text may be long)."""
    if made is not None:
        return made
    from sift.clean.protocol import text_digest  # late: the cached `sift extract` hashes none

    return await svc.cpu.compute(text_digest, text, cost=len(text))


def as_rendered(c: Content) -> Content:
    """A rendered page never says `hint: browser`: the browser has had its turn."""
    return msgspec.structs.replace(c, hint=None) if c.hint == "browser" else c
