"""Markup that trafilatura misreads, rewritten before extraction."""

from __future__ import annotations

import re

import lxml.etree
from lxml.html import HtmlElement

from sift.clean import stylesheet
from sift.clean.markdown_links import encode_links

_SPACES = re.compile(r"[ \t]{2,}")
# The list items `open_items` may change, in document order: found in C (most have no `<div>`,
# and asking each costs more); none is added or taken out as it changes them.
_ITEMS_WITH_DIVS = lxml.etree.XPath("descendant-or-self::li[descendant::div]")


def for_extraction(page: HtmlElement) -> HtmlElement:
    """`page`, its link targets made safe (`encode_links`) and the markup below rewritten."""
    encode_links(page)
    unwrap_targets(page)
    flatten_code(page)
    open_items(page)
    # Underline is decoration (often of links), and trafilatura writes it as inline HTML.
    lxml.etree.strip_tags(page, "u")
    return page


def unwrap_targets(tree: HtmlElement) -> None:
    """Unwrap the `<a>`s with no target and no text (a named anchor for a fragment to point
    at): no link at all, but trafilatura keeps each as an empty link that can end the block
    it is in (measured: a chapter's index anchors cost the PostgreSQL manual its
    introductions). An icon's link stays: it counts in the weighing of a block's links."""
    for el in [el for el in tree.iter("a") if el.get("href") is None]:
        if not el.text_content().strip():
            el.drop_tag()


def flatten_code(tree: HtmlElement) -> None:
    """Leave only text in `<code>`: trafilatura's markdown loses the words after a code span
    that holds an element (`<code><i>name</i></code> is evaluated…` keeps nothing up to the
    next code span), and code is literal, so its inner emphasis means nothing to a reader.
    A line break becomes a newline; a link that is the whole code span goes around it instead.
    """
    for code in [el for el in tree.iter("code") if len(el)]:
        links = code.findall(".//a")
        parent = code.getparent()
        if (
            len(links) == 1
            and parent is not None
            and parent.tag != "pre"
            and links[0].text_content().strip() == code.text_content().strip()
        ):
            link = code.makeelement("a", dict(links[0].attrib))
            code.addprevious(link)
            link.tail, code.tail = code.tail, None
            link.append(code)
        for br in code.iter("br"):
            br.tail = "\n" + (br.tail or "")
        lxml.etree.strip_tags(code, "*")


def open_items(tree: HtmlElement) -> None:
    """Unwrap the `<div>`s inside a list item, a space on each side: trafilatura joins an
    item's blocks with nothing between them (a shop's card: `7.2 mmCushioning:Maximum`).
    Only an item with a link is a card: one without is a widget (a country selector's
    options), and its words would read as text once apart. A `<div>` its style hides stays
    whole: unwrapped, its text would show (a tooltip's, in the page as served)."""
    for item in _ITEMS_WITH_DIVS(tree):  # (an item's divs are counted again: some may be gone)
        divs = list(item.iterdescendants("div"))
        if not divs or item.find(".//a[@href]") is None or item.find(".//pre") is not None:
            continue
        hidden = {inner for div in divs if _hidden(div) for inner in div.iter("div")}
        for div in [div for div in divs if div not in hidden]:
            div.text = " " + (div.text or "")
            div.tail = " " + (div.tail or "")
            div.drop_tag()
        for node in item.iter():
            node.text = _spaces(node.text)
            node.tail = _spaces(node.tail) if node is not item else node.tail


def _hidden(el: HtmlElement) -> bool:
    style = el.get("style")
    return bool(style) and stylesheet.hides(stylesheet.declarations(style))


def _spaces(text: str | None) -> str | None:
    return _SPACES.sub(" ", text) if text else text
