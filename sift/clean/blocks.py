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
from collections.abc import Iterator
from dataclasses import dataclass, field
from typing import Any

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
_ANCESTOR_BITS = {tag: 1 << i for i, tag in enumerate(ANCESTOR_TAGS)}
_CLASS_RES = tuple(re.compile(p) for _, p in CLASS_WORDS)


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
    get = el.get
    classes, ident, role = get("class"), get("id"), get("role")
    if classes is None and ident is None and role is None:
        return 0
    return _flags_of(f"{classes or ''} {ident or ''} {role or ''}")


@functools.lru_cache(maxsize=4096)
def _flags_of(words: str) -> int:
    """CLASS_WORDS flags of a class/id/role string (pages repeat a few hundred of them): its
    words' (no pattern matches white space, and white space is no letter to a lookaround)."""
    flags = 0
    for word in words.lower().split():
        flags |= _word_flags(word)
    return flags


@functools.lru_cache(maxsize=16384)
def _word_flags(word: str) -> int:
    """CLASS_WORDS flags of one lower-cased word (sites share most: `container`, `row`…)."""
    flags = 0
    for i, pattern in enumerate(_CLASS_RES):
        if pattern.search(word):
            flags |= 1 << i
    return flags


def _flush(blocks: list[Block], cur: _Open) -> None:
    """The text `cur` holds so far, as a block (none where it is only white space)."""
    if not cur.parts:  # (most flushes: a block element right after another)
        cur.link_chars = 0
        return
    text = " ".join("".join(cur.parts).split())  # (`split`'s white space is `\s`'s)
    cur.parts = []
    if not text:
        cur.link_chars = 0
        return
    level = int(cur.tag[1]) if len(cur.tag) == 2 and cur.tag[0] == "h" else 0
    blocks.append(
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


def _open(el: HtmlElement, tag: str, cur: _Open, flags: int, own: int) -> _Open:
    """The block a block element `el` starts inside `cur`."""
    ancestors = cur.ancestors | _ANCESTOR_BITS.get(tag, 0)
    lists = cur.list_depth + (tag in ("ul", "ol"))
    inner = _Open(tag, cur.depth + 1, ancestors, cur.classes | flags, own, lists)
    if tag == "pre" and not cur.ancestors & _IN_PRE:
        inner.code = (code.language(el), el.text_content().strip("\n"))
    return inner


def segment(root: HtmlElement) -> list[Block]:
    """The visible text blocks of `root`'s `<body>` (or of `root`), in document order.

    The walk is a loop over a stack (a frame per open element: its children still to see,
    the block its text goes to, whether it is in a link, the class flags of it and its two
    nearest ancestors), not a recursion: a page's thousands of elements cost no calls."""
    body = root.find(".//body")
    start = body if body is not None else root
    found: list[Block] = []
    top = _Open("body", 0, 0, 0, 0, 0)
    frames: list[tuple[Iterator[HtmlElement], _Open, bool, tuple[int, ...], _Open | None, Any]]
    frames = [(iter((start,)), top, False, (), None, None)]
    while frames:
        children, cur, link, chain, opened, _ = frames[-1]
        for el in children:
            tag = el.tag
            if tag.__class__ is str and tag and tag not in SKIP_TAGS:
                flags = _class_flags(el)
                inner_chain = (*chain[-2:], flags)
                own = flags | chain[-2] | chain[-1] if len(chain) >= 2 else flags
                inner_link = link or tag == "a"
                inner = None
                if tag in BLOCK_TAGS:
                    _flush(found, cur)
                    inner = _open(el, tag, cur, flags, own)
                into = cur if inner is None else inner
                if el.text:
                    into.parts.append(el.text)
                    into.link_chars += len(el.text.strip()) if inner_link else 0
                frames.append((iter(el), into, inner_link, inner_chain, inner, el))
                break
            if el.tail:  # (a skipped element's, or a comment's)
                cur.parts.append(el.tail)
                cur.link_chars += len(el.tail.strip()) if link else 0
        else:
            el = frames.pop()[5]
            if opened is not None:
                _flush(found, opened)
            if el is not start and el is not None and el.tail:  # (the parent's frame is last)
                parent = frames[-1]
                parent[1].parts.append(el.tail)
                parent[1].link_chars += len(el.tail.strip()) if parent[2] else 0
    _flush(found, top)
    return found
