"""Markup that trafilatura misreads, rewritten before extraction."""

from __future__ import annotations

import lxml.etree
from lxml.html import HtmlElement


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
