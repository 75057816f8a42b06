"""A page's text blocks in document order, each with what the combination reads of it.

One walk of the parsed page (the tree the honest passes prepared: hidden text and consent
banners are already gone) cuts its visible text into blocks the way a reader sees paragraphs:
a block element (`<p>`, `<li>`, a heading, a cell, a `<div>` with text of its own…) starts one,
and the text after it (its tail) starts the next. Each block keeps its text, how much of it is
link text, its own tag, its depth, and the words of the classes and ids around it (`nav`,
`footer`, `comment`…) as flags: what the combination (`combine.py`) weighs, with what each
extractor kept, to decide per block what is main content.
"""

from __future__ import annotations

import functools
import re
from dataclasses import dataclass, field

from lxml.html import HtmlElement

from sift.clean import code

_BLOCK = (
    "p div li h1 h2 h3 h4 h5 h6 td th pre blockquote dd dt section article header footer nav "
    "aside main ul ol dl table tr form figure figcaption caption body address details summary "
    "fieldset legend center menu hr br"
)
_SKIP = (
    "script style noscript template svg iframe head select option textarea input button "
    "object embed canvas"
)
BLOCK_TAGS = frozenset(_BLOCK.split())
SKIP_TAGS = frozenset(_SKIP.split())
# Structural ancestors, as flags (bit i for the i-th).
ANCESTOR_TAGS = (
    "nav",
    "header",
    "footer",
    "aside",
    "article",
    "main",
    "form",
    "li",
    "table",
    "blockquote",
    "a",
    "pre",
)
# Words of class and id attributes, as flags: a pattern each (bit i for the i-th).
CLASS_WORDS = (
    ("nav", r"nav|menu|topbar|toolbar"),
    ("footer", r"foot"),
    ("header", r"header|masthead|banner"),
    ("side", r"side|aside|rail|widget"),
    ("comment", r"comment|reply|discuss|respon"),
    ("share", r"share|social|follow|sharing"),
    ("related", r"related|recommend|more|popular|trending|teaser"),
    ("crumb", r"crumb|breadcrumb"),
    ("ad", r"(?<![a-z])ads?(?![a-z])|advert|sponsor|promo|banner-ad"),
    ("cookie", r"cookie|consent|gdpr|newsletter|subscribe|signup"),
    ("content", r"content|article|post|entry|story|body|text|main"),
    ("meta", r"author|byline|date|time|meta|tags?(?![a-z])|categor"),
    ("title", r"title|headline|heading"),
    ("pager", r"pag(er|ination)|prev|next"),
    ("hidden", r"hidden|collapse|modal|popup|overlay"),
    ("product", r"product|price|cart|buy|offer|review"),
    ("question", r"question|answer|thread|forum|message"),
    ("doc", r"doc|code|highlight|syntax|api|markdown|prose"),
)
_IN_PRE = 1 << ANCESTOR_TAGS.index("pre")
_CLASS_RES = tuple(re.compile(p) for _, p in CLASS_WORDS)
_SPACE = re.compile(r"\s+")


@dataclass
class Block:
    """One block of the page's visible text."""

    text: str
    tag: str  # the block element that holds it
    depth: int
    link_chars: int
    ancestors: int  # ANCESTOR_TAGS flags
    classes: int  # CLASS_WORDS flags of the element and its ancestors
    own_classes: int  # CLASS_WORDS flags of the nearest few levels only
    heading_level: int = 0
    list_depth: int = 0
    code: tuple[str, str] | None = None  # a `<pre>`'s (language, text), whitespace kept


@dataclass
class _Open:
    """The block being filled: its element's traits and its text so far."""

    tag: str
    depth: int
    ancestors: int
    classes: int
    own: int
    list_depth: int
    parts: list[str] = field(default_factory=list)
    link_chars: int = 0
    code: tuple[str, str] | None = None  # a `<pre>`'s, for its first block


def _class_flags(el: HtmlElement) -> int:
    attrib = el.attrib
    if "class" not in attrib and "id" not in attrib and "role" not in attrib:
        return 0
    return _flags_of(f"{el.get('class') or ''} {el.get('id') or ''} {el.get('role') or ''}")


@functools.lru_cache(maxsize=4096)
def _flags_of(words: str) -> int:
    """CLASS_WORDS flags of a class/id/role string (pages repeat a few hundred of them)."""
    words = words.lower()
    flags = 0
    for i, pattern in enumerate(_CLASS_RES):
        if pattern.search(words):
            flags |= 1 << i
    return flags


class _Walk:
    """The walk of one page: a stack of open blocks, the finished ones in order."""

    def __init__(self) -> None:
        self.blocks: list[Block] = []

    def flush(self, cur: _Open) -> None:
        text = _SPACE.sub(" ", "".join(cur.parts)).strip()
        cur.parts = []
        if not text:
            cur.link_chars = 0
            return
        level = int(cur.tag[1]) if len(cur.tag) == 2 and cur.tag[0] == "h" else 0
        self.blocks.append(
            Block(
                text=text,
                tag=cur.tag,
                depth=cur.depth,
                link_chars=min(cur.link_chars, len(text)),
                ancestors=cur.ancestors,
                classes=cur.classes,
                own_classes=cur.own,
                heading_level=level if cur.tag[0] == "h" and cur.tag[1:].isdigit() else 0,
                list_depth=cur.list_depth,
                code=cur.code,
            )
        )
        cur.link_chars, cur.code = 0, None

    def visit(self, el: HtmlElement, cur: _Open, in_link: bool, chain: tuple[int, ...]) -> None:
        tag = el.tag if isinstance(el.tag, str) else ""
        if tag in SKIP_TAGS or not tag:
            return
        flags = _class_flags(el)
        chain = (*chain[-2:], flags)
        bit = ANCESTOR_TAGS.index(tag) if tag in ANCESTOR_TAGS else -1
        ancestors = cur.ancestors | (1 << bit) if bit >= 0 else cur.ancestors
        link = in_link or tag == "a"
        own = chain[0] | chain[1] | chain[2] if len(chain) == 3 else flags
        if tag in BLOCK_TAGS:
            self.flush(cur)
            lists = cur.list_depth + (tag in ("ul", "ol"))
            inner = _Open(tag, cur.depth + 1, ancestors, cur.classes | flags, own, lists)
            if tag == "pre" and not cur.ancestors & _IN_PRE:
                inner.code = (code.language(el), el.text_content().strip("\n"))
            self._children(el, inner, link, chain)
            self.flush(inner)
        else:
            self._children(el, cur, link, chain)

    def _children(self, el: HtmlElement, cur: _Open, link: bool, chain: tuple[int, ...]) -> None:
        if el.text:
            cur.parts.append(el.text)
            cur.link_chars += len(el.text.strip()) if link else 0
        for child in el:
            self.visit(child, cur, link, chain)
            if child.tail:
                cur.parts.append(child.tail)
                cur.link_chars += len(child.tail.strip()) if link else 0


def segment(root: HtmlElement) -> list[Block]:
    """The visible text blocks of `root`'s `<body>` (or of `root`), in document order."""
    body = root.find(".//body")
    start = body if body is not None else root
    walk = _Walk()
    top = _Open("body", 0, 0, 0, 0, 0)
    walk.visit(start, top, False, ())
    walk.flush(top)
    return walk.blocks
