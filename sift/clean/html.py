"""HTML → the page's main content as markdown, with trafilatura and three measured fixes.

trafilatura gives the best main-content F1 of the Python extractors with its default settings
(DESIGN §3), so it is called with those: markdown output, tables, formatting and links on,
images and comments off, and it is handed a parsed tree so that it never fetches anything.
Its three flaws are fixed here: link targets are resolved against the page URL or
`<base href>` before extraction (it resolves them against the site root), and links into the
page itself keep only their text; tables are rewritten as valid GFM (`tables.py`); and a page
it answers empty for gets its full visible text, flagged `fallback` (`text.py`). A page that
is nearly empty but mostly script gets `hint="browser"`.
"""

from __future__ import annotations

import logging
import re
from typing import Any
from urllib.parse import urldefrag, urljoin

import lxml.html
import trafilatura
from lxml.etree import ParserError
from lxml.html import HtmlElement
from trafilatura.metadata import examine_meta, extract_meta_json, extract_title
from trafilatura.utils import load_html

from sift import kinds
from sift.clean import honest, tables
from sift.clean.protocol import CleanResult
from sift.clean.text import script_only, visible_text

log = logging.getLogger("sift.clean")

# trafilatura and its helpers log the page URL on ordinary outcomes ("discarding data: <url>");
# sift's logs must not carry URLs of restricted callers, and these lines are not actionable.
for _name in ("trafilatura", "htmldate", "courlan", "justext", "readability"):
    logging.getLogger(_name).setLevel(logging.CRITICAL)

_FENCE = re.compile(r"^ {0,3}(`{3,}|~{3,})")
# Link text holds no brackets, so a line of many "[" costs linear time, not quadratic.
_MD_LINK = re.compile(r"(?<![`\\])\[([^\[\]\n]*)\]\(([^()\s]+)\)")
_SCHEME = re.compile(r"^[a-zA-Z][a-zA-Z0-9+.-]*:")
_TITLE_MAX = 300
# How sift calls trafilatura (bench/ calls it the same way for its baseline).
EXTRACT_OPTIONS: dict[str, Any] = {
    "output_format": "markdown",
    "include_tables": True,
    "include_formatting": True,
    "include_links": True,
    "include_images": False,
    "include_comments": False,
    "with_metadata": False,
}


def clean_html(body: bytes, content_type: str, url: str, input_cap: int) -> CleanResult:
    """The main content of an HTML page as markdown, with its title.

    Args:
        body: the page as fetched; only its first `input_cap` bytes are read.
        content_type: the response's Content-Type, for its charset.
        url: the final URL of the page, against which relative links are resolved.
        input_cap: how many bytes of `body` to read at most.

    Returns:
        A CleanResult with `fallback=True` when the text is the page's full visible text
        (main-content extraction found nothing), and `hint="browser"` for script-only pages.
    """
    html = kinds.decode(body[:input_cap], content_type)
    tree = parse(html)
    if tree is None:  # not even a fragment lxml can read: strip the tags
        text = " ".join(re.sub(r"<[^>]*>", " ", html).split())
        return CleanResult(title="", text=text, fallback=bool(text))
    removed = honest.prepare(tree)
    base = base_url(tree, url)
    resolve_links(tree, base)
    markdown, fallback = _extract(tree, url), False
    if not markdown:
        markdown, fallback = _extract(tree, url, favor_recall=True), True
    if not markdown:
        markdown = visible_text(tree)
    markdown = tables.normalise(markdown)
    markdown = resolve_markdown_links(markdown, base, url)
    markdown = re.sub(r"\n{3,}", "\n\n", markdown).strip()
    hint = "browser" if script_only(tree, len(html), markdown) else None
    result = CleanResult(title=page_title(tree), text=markdown, hint=hint, fallback=fallback)
    return honest.finish(result, html, tree, removed)


def parse(html: str) -> HtmlElement | None:
    """The document tree as trafilatura would build it; fragments are parsed too."""
    tree = load_html(html) if html.strip() else None
    if tree is None and html.strip():
        try:
            parser = lxml.html.HTMLParser(encoding="utf-8")
            tree = lxml.html.document_fromstring(html.encode("utf-8", "replace"), parser=parser)
        except (ParserError, ValueError):
            return None
    return tree


def base_url(tree: HtmlElement, url: str) -> str:
    """The URL relative links resolve against: `<base href>` (itself resolved) or the page."""
    base = tree.find(".//base[@href]")
    href = str(base.get("href") or "").strip() if base is not None else ""
    if not href:
        return url
    try:
        return urljoin(url, href)
    except ValueError:
        return url


def _join(base: str, target: str) -> str:
    if not base or _SCHEME.match(target):
        return target
    try:
        return urljoin(base, target)
    except ValueError:  # e.g. a malformed IPv6 host
        return target


def resolve_links(tree: HtmlElement, base: str) -> None:
    """Make every `<a href>` absolute, in place."""
    for el in tree.iter("a", "area"):
        href = el.get("href")
        if href is not None and href.strip():
            el.set("href", _join(base, href.strip()))


def resolve_markdown_links(markdown: str, base: str, page: str = "") -> str:
    """Resolve any link target still relative; unlink links into the page itself.

    A link to a fragment of the same page (a heading's permalink, a table of contents) tells
    an agent nothing it does not already have, and a resolved one costs ~60 characters, so
    it keeps only its text. Code blocks are left alone.
    """
    if "](" not in markdown:
        return markdown
    here = urldefrag(page).url

    def fix(m: re.Match[str]) -> str:
        text, target = m.group(1), m.group(2)
        if target.startswith("#"):
            return text
        if not _SCHEME.match(target):
            target = _join(base, target)
        if here and "#" in target and urldefrag(target).url == here:
            return text
        return f"[{text}]({target})"

    out, fence = [], None
    for line in markdown.split("\n"):
        m = _FENCE.match(line)
        if fence is None and m:
            fence = m.group(1)
        elif fence is not None and m and m.group(1).startswith(fence):
            fence = None
        elif fence is None and "](" in line:
            line = _MD_LINK.sub(fix, line)
        out.append(line)
    return "\n".join(out)


def _extract(tree: HtmlElement, url: str, favor_recall: bool = False) -> str:
    try:
        text = trafilatura.extract(  # works on a copy of the tree
            tree, url=url or None, favor_recall=favor_recall, **EXTRACT_OPTIONS
        )
    except Exception:  # a bug in the extractor must not cost the page: fall back
        log.warning("trafilatura failed; using the page's full text", exc_info=True)
        return ""
    return (text or "").strip()


def page_title(tree: HtmlElement) -> str:
    """The title as trafilatura's metadata sees it (og/meta, JSON-LD, h1), else `<title>`."""
    title: str | None = None
    try:
        meta = examine_meta(tree)
        title = meta.title or extract_meta_json(tree, meta).title or extract_title(tree)
    except Exception:  # metadata is a nicety: never fail a page over it
        title = None
    if not title:
        el = tree.find(".//title")
        title = el.text_content() if el is not None else ""
    return " ".join(title.split())[:_TITLE_MAX]
