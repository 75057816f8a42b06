"""Firecrawl's cleaning options for HTML: tag selectors, the whole page, the cleaned HTML.

Hidden text and consent banners are removed first, and the result classified and checked for
text addressed to an AI, as in the default clean (`sift.clean.honest`).
`exclude_tags` drops the elements matching any CSS selector, `include_tags` keeps only those
matching one (in document order), both before cleaning. What the caller picked with
`include_tags` is what they want, so it is converted whole, as is the whole page for
`whole_page` (Firecrawl's `onlyMainContent: false`): markdownify on the page with what is never
visible (scripts, styles, frames, forms' inner workings) removed by lxml_html_clean. Otherwise
the main content is trafilatura's, as in `sift.clean.html`. The cleaned HTML (`want_html`,
Firecrawl's `html` format) is the same content as HTML, links resolved against the page.
"""

from __future__ import annotations

import dataclasses

import lxml.html
import msgspec
import trafilatura
from lxml.html import HtmlElement
from lxml_html_clean import Cleaner
from markdownify import markdownify

from sift.clean import honest, kinds, meta, tables
from sift.clean.html import EXTRACT_OPTIONS, clean_html, clean_tree, tidy
from sift.clean.markdown_links import base_url, resolve_markdown_links
from sift.clean.parsing import parse, xml_safe
from sift.clean.protocol import CleanResult, CleanTask

_CLEANER = Cleaner(
    scripts=True,
    javascript=True,
    comments=True,
    style=True,
    inline_style=True,
    meta=True,
    page_structure=False,
    processing_instructions=True,
    embedded=True,
    frames=True,
    forms=False,
    annoying_tags=True,
    remove_unknown_tags=False,
    safe_attrs_only=True,
)


def clean_view(task: CleanTask) -> CleanResult:
    """The page cleaned as the task's options ask (see the module docstring)."""
    html = xml_safe(kinds.decode(task.body[: task.input_cap], task.content_type))
    tree = parse(html)
    if tree is None:  # not even a fragment lxml can read: as the default clean answers it
        return clean_html(task.body, task.content_type, task.url, task.input_cap)
    removed = honest.prepare(tree)  # hidden text and consent banners go first, as always
    base = base_url(tree, task.url)
    title = meta.page_title(tree)
    if task.include_tags or task.exclude_tags:
        tree = select(tree, task.include_tags, task.exclude_tags)
        removed = dataclasses.replace(removed, split=None)  # the extractor reads the selection
    if task.whole_page or task.include_tags:
        body = _visible(tree, base)
        markup = lxml.html.tostring(body, encoding="unicode")
        text = markdownify(markup, heading_style="ATX", bullets="-", strip=["img"])
        text = resolve_markdown_links(tidy(tables.normalise(text)), base, task.url)
        whole = CleanResult(title=title, text=text, html=markup if task.want_html else None)
        return honest.finish(whole, html, tree, removed)
    markup = lxml.html.tostring(tree, encoding="unicode")
    result = clean_tree(tree, markup, task.url, title, removed, keep_tree=task.want_html)
    if not task.want_html:
        return result
    return msgspec.structs.replace(result, html=_main_html(tree, base))


def select(tree: HtmlElement, include: tuple[str, ...], exclude: tuple[str, ...]) -> HtmlElement:
    """The tree without the `exclude` matches; then only the `include` matches (outermost
    ones, in document order) in a new body, the head kept for the title."""
    for sel in exclude:
        for el in tree.cssselect(sel, translator="html"):
            if el.getparent() is not None:
                el.drop_tree()
    if not include:
        return tree
    picked = {el for sel in include for el in tree.cssselect(sel, translator="html")}
    root = lxml.html.document_fromstring("<html><head></head><body></body></html>")
    head = tree.find("head")
    if head is not None:
        root.replace(root.find("head"), head)
    body = root.find("body")
    for el in tree.iter():
        if el in picked and not any(a in picked for a in el.iterancestors()):
            el.tail = None
            body.append(el)
    return root


def _visible(tree: HtmlElement, base: str) -> HtmlElement:
    """The page's body with what is never visible removed, links resolved."""
    cleaned = _CLEANER.clean_html(tree)
    cleaned.make_links_absolute(base, resolve_base_href=False, handle_failures="ignore")
    body = cleaned.find("body")
    return body if body is not None else cleaned


def _main_html(tree: HtmlElement, base: str) -> str:
    """trafilatura's main content as HTML, links resolved against the page."""
    options = {**EXTRACT_OPTIONS, "output_format": "html"}
    try:
        out = trafilatura.extract(tree, **options) or ""
    except Exception:  # the markdown already has what matters; the HTML is a nicety
        return ""
    if not out.strip():
        return ""
    frag = lxml.html.fromstring(out)
    frag.make_links_absolute(base, handle_failures="ignore")
    body = frag.find("body")
    return str(lxml.html.tostring(body if body is not None else frag, encoding="unicode"))
