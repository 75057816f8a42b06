"""The site's own markdown of a page, answered instead of sift's extraction when it is the
same document (`source: "site-markdown"`).

Two ways a site offers it: it answers the URL itself in markdown (sift's `Accept` prefers
`text/markdown`), or the page names it (`<link rel="alternate" type="text/markdown">`). The
same-document rule, so that neither a site that answers markdown for everything nor an
unrelated alternate replaces a page:

- a markdown answer to the URL itself is the document when the site says it chose it by
  `Accept` (`Vary: Accept`) or the URL names a markdown file (`.md`, `.markdown`); else sift
  asks again for HTML and keeps the markdown only when it matches that page (below), or when
  the site answers markdown to that too (then markdown is all the URL has);
- an alternate is followed only on the page's own host, never to a site index (`llms.txt`,
  `llms-full.txt`), never for a request with the caller's own headers, and kept only when it
  matches the page: at least half of the page's word pairs (two words in a row, so that
  common words alone match nothing) are in it and at least a third of its pairs are on the
  page (so a whole site's dump does not pass); a page whose extraction is nearly empty (a
  script-only shell) is matched by its title's words instead.

Both fetches go through the guard, the gates and the body caps like any fetch, and the
answer is cached as the page's.
"""

from __future__ import annotations

import itertools
import re
import urllib.parse
from typing import TYPE_CHECKING

import msgspec

from sift.clean import kinds
from sift.clean.protocol import CleanTask
from sift.clean.signals import MARKDOWN_TYPES
from sift.core.errors import SiftError
from sift.core.types import Content
from sift.fetch.headers import check_headers
from sift.fetch.transfer import FetchResult, media_type
from sift.service.steps.content import text_hash

if TYPE_CHECKING:
    from collections.abc import Awaitable, Callable

    from sift.core.callers import Caller
    from sift.core.request import FetchParams
    from sift.service.parts.runtime import Runtime

    Clean = Callable[[Runtime, Caller, FetchParams, FetchResult, str], Awaitable[Content]]

SITE_MARKDOWN = "site-markdown"
HTML_FIRST = "text/html,application/xhtml+xml;q=0.9,*/*;q=0.5"
INDEXES = ("/llms.txt", "/llms-full.txt")
WAIT = 5.0  # seconds the answer waits for the one more fetch
MIN_WORDS = 20  # fewer words on the page: match by title
_WORD = re.compile(r"[^\W\d_]{3,}")
_LINK_TARGET = re.compile(r"\]\([^)]*\)|https?://\S+")


def is_markdown(res: FetchResult) -> bool:
    return media_type(res.content_type) in MARKDOWN_TYPES


def declared(res: FetchResult) -> bool:
    """The site says this markdown is the URL's: chosen by `Accept`, or a markdown file."""
    vary = {v.strip().lower() for v in res.vary.split(",")}
    path = urllib.parse.urlsplit(res.final_url).path.lower()
    return "accept" in vary or "*" in vary or path.endswith((".md", ".markdown"))


def same_document(markdown: str, page_text: str, title: str) -> bool:
    """Whether `markdown` is the page whose extracted text is `page_text` (rule above)."""
    ours, theirs = _pairs(page_text), _pairs(markdown)
    if len(ours) < MIN_WORDS:
        named = set(_words(title))
        return bool(named) and len(named & set(_words(markdown))) * 2 >= len(named)
    shared = len(ours & theirs)
    return shared * 2 >= len(ours) and shared * 3 >= len(theirs)


def _words(text: str) -> list[str]:
    return _WORD.findall(_LINK_TARGET.sub(" ", text).lower())


def _pairs(text: str) -> set[tuple[str, str]]:
    words = _words(text)
    return set(itertools.pairwise(words))


def title_of(markdown: str) -> str:
    """The first heading of a markdown text (its title), else ""."""
    for line in markdown.splitlines()[:50]:
        if line.startswith("# "):
            return line[2:].strip()[:1000]
    return ""


async def preferred(
    svc: Runtime, caller: Caller, p: FetchParams, res: FetchResult, page: Content, clean: Clean
) -> Content:
    """The page as answered: the site's own markdown when it is the same document, else
    `page` (sift's extraction). `clean` cleans a response as the pipeline does."""
    if is_markdown(res):
        return await _negotiated(svc, caller, p, res, page, clean)
    link = page.facts.markdown_link
    if link is None or page.kind != "html" or page.page != "content" or p.private:
        return page
    if not _on_site(link, res.final_url):
        return page
    alternate = await _fetched(svc, caller, link, ())
    if alternate is None or not is_markdown(alternate):
        return page
    text = await _text(svc, alternate)
    if not await svc.cpu.compute(same_document, text, page.text, page.title, cost=len(text)):
        return page
    return await _as_site_markdown(svc, page, text, page.title or title_of(text))


async def _negotiated(
    svc: Runtime, caller: Caller, p: FetchParams, res: FetchResult, page: Content, clean: Clean
) -> Content:
    """A markdown answer to the URL itself: the document when the site says so; else checked
    against the page the site serves when asked for HTML."""
    text = page.text
    if not declared(res):
        own = check_headers(p.headers) if p.headers else ()
        html = await _fetched(svc, caller, p.url, (("Accept", HTML_FIRST), *own))
        if html is not None and kinds.kind(html.content_type, html.body[:1024]) == "html":
            other = await clean(svc, caller, p, html, "html")
            if not await svc.cpu.compute(same_document, text, other.text, other.title):
                return other
    return await _as_site_markdown(
        svc, msgspec.structs.replace(page, kind="html"), text, title_of(text)
    )


async def _as_site_markdown(svc: Runtime, page: Content, text: str, title: str) -> Content:
    facts = msgspec.structs.replace(page.facts, source=SITE_MARKDOWN)
    digest = await text_hash(svc, text)
    return msgspec.structs.replace(
        page,
        text=text,
        title=title,
        content_hash=digest,
        facts=facts,
        fallback=False,
        coverage=None,
        hint=None,
    )


def _on_site(link: str, page_url: str) -> bool:
    there, here = urllib.parse.urlsplit(link), urllib.parse.urlsplit(page_url)
    return (
        there.scheme in ("http", "https")
        and there.hostname == here.hostname
        and not there.path.lower().endswith(INDEXES)
    )


async def _fetched(
    svc: Runtime, caller: Caller, url: str, headers: tuple[tuple[str, str], ...]
) -> FetchResult | None:
    """One more fetch for the page (its alternate, or its HTML): guard, gate and caps as
    any; None when it fails or takes over `WAIT` (the page as extracted stands)."""
    try:
        res = await svc.upstream.fetch(caller.name, url, headers=headers, within=WAIT)
    except (SiftError, TimeoutError):
        return None
    return res if 200 <= res.status < 300 else None


async def _text(svc: Runtime, res: FetchResult) -> str:
    cleaned = await svc.cleaners.clean(
        CleanTask(
            kind="text",
            body=res.body,
            content_type=res.content_type,
            url=res.final_url,
            input_cap=svc.cfg.clean.input_cap,
        )
    )
    return cleaned.text
