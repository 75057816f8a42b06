"""Markup → an lxml tree as trafilatura builds one, safe to edit and to write back.

A page of random bytes holds characters lxml refuses (control characters, non-characters,
lone surrogates), as text or as numeric character references: they are dropped before and
after parsing, so no later edit of the tree raises. The parser looks its elements up in C.
"""

from __future__ import annotations

import re

import lxml.etree
import lxml.html
from lxml.etree import ParserError
from lxml.html import HtmlElement
from trafilatura.utils import DOCTYPE_TAG, FAULTY_HTML

# Characters lxml refuses in a tree's text (control characters, NUL, non-characters, lone
# surrogates): a page of random bytes holds them, and no page means them as content.
NOT_XML = re.compile("[\x00-\x08\x0b\x0c\x0e-\x1f\ufffe\uffff\ud800-\udfff]")
_CONTROLS = bytes([*range(0x09), 0x0B, 0x0C, *range(0x0E, 0x20)])  # `NOT_XML`'s in UTF-8
# A numeric character reference, as libxml2 reads one (the `;` may be missing).
_REFERENCE = re.compile(r"&#([xX])?((?(1)[0-9a-fA-F]|[0-9])+)")

# trafilatura's parser (`trafilatura.utils.HTML_PARSER`), its elements looked up in C: lxml.html's
# lookup is Python code, run for every element object made, by sift's passes and trafilatura's.
# Form fields are plain HtmlElements here, and nothing reads them as FormElements.
_PARSER = lxml.html.HTMLParser(
    collect_ids=False,
    default_doctype=False,
    encoding="utf-8",
    remove_comments=True,
    remove_pis=True,
)
_PARSER.set_element_class_lookup(
    lxml.etree.ElementDefaultClassLookup(
        element=lxml.html.HtmlElement,
        comment=lxml.html.HtmlComment,
        pi=lxml.html.HtmlProcessingInstruction,
        entity=lxml.html.HtmlEntity,
    )
)


def xml_safe(text: str) -> str:
    """`text` without its `NOT_XML` characters."""
    return utf8_safe(text)[0]


def utf8_safe(text: str) -> tuple[str, bytes | None]:
    """`xml_safe(text)`, and its UTF-8 where that was made on the way (`parse` reads it).
    The characters are looked for before the regex runs (half its time on a page, and few
    pages hold one): the control characters in the UTF-8, U+FFFE and U+FFFF in the str (no
    search at all in one without characters past U+00FF; the UTF-8's bytes would each be
    looked at)."""
    try:
        raw = text.encode("utf-8")
    except UnicodeEncodeError:  # a lone surrogate
        return NOT_XML.sub("", text), None
    noncharacter = "\ufffe" in text or "\uffff" in text
    if not noncharacter and len(raw.translate(None, _CONTROLS)) == len(raw):
        return text, raw
    return NOT_XML.sub("", text), None


def parse(html: str, raw: bytes | None = None) -> HtmlElement | None:
    """The document tree as trafilatura would build it; fragments are parsed too. `html`
    holds no `NOT_XML` character (the callers strip them); `raw` is its UTF-8, if made."""
    blank = not html or html.isspace()  # (as `html.strip()` would say, without a copy)
    tree = _load(html, raw) if not blank else None
    if tree is None and not blank:
        try:
            parser = lxml.html.HTMLParser(encoding="utf-8")
            tree = lxml.html.document_fromstring(html.encode("utf-8", "replace"), parser=parser)
        except (ParserError, ValueError):
            return None
    if tree is not None and _REFERENCE.search(html) and _refers_to_not_xml(html):
        _settable(tree)
    return tree


def _load(html: str, raw: bytes | None = None) -> HtmlElement | None:
    """trafilatura's `load_html` on a string (`raw` its UTF-8, if made), with `_PARSER`;
    without its removal of the characters lxml refuses, which `NOT_XML` has taken out."""
    beginning = html[:50].lower()
    if "doctype" in beginning:  # (its first line, less a doctype tag, then a newline)
        end = html.find("\n")
        tag = DOCTYPE_TAG.match(html, 0, len(html) if end == -1 else end)
        cut = tag.end() if tag else 0
        if raw is not None:  # (`html` holds no surrogate: its UTF-8 is that of its parts)
            raw = raw[len(html[:cut].encode("utf-8")) :] + (b"\n" if end == -1 else b"")
        html = html[cut:] + ("\n" if end == -1 else "")
    for line in html[:4096].splitlines()[:4]:
        if "<html" in line and line.endswith("/>"):
            html, raw = FAULTY_HTML.sub(r"\1>", html, count=1), None
            break
    # Its bytes first: lxml reads UTF-8 a third faster than a str (the tree is the same).
    tree = _load_bytes(html if raw is None else raw)
    if tree is None or len(tree) < 1:
        try:
            tree = lxml.html.fromstring(html, parser=_PARSER)
        except Exception:
            tree = None
    if tree is not None and "html" not in beginning and len(tree) < 2:
        return None  # not HTML at all, as trafilatura judges it
    return tree


def _load_bytes(html: str | bytes) -> HtmlElement | None:
    try:
        raw = html if isinstance(html, bytes) else html.encode("utf8", "surrogatepass")
        return lxml.html.fromstring(raw, parser=_PARSER)
    except Exception:
        return None


def _refers_to_not_xml(html: str) -> bool:
    """Whether a numeric character reference in `html` stands for a `NOT_XML` character
    (or none at all): only then can the tree hold one."""
    for m in _REFERENCE.finditer(html):
        digits, hexa = m.group(2), bool(m.group(1))
        code = int(digits, 16 if hexa else 10) if len(digits) < 9 else 0x110000
        if code > 0x10FFFF or NOT_XML.match(chr(code)):
            return True
    return False


def _settable(tree: HtmlElement) -> None:
    """Character references can put control characters into the tree that lxml then refuses
    to write back (any later edit of a neighbour's text raises): drop them once, here."""
    for el in tree.iter():
        if el.text and NOT_XML.search(el.text):
            el.text = NOT_XML.sub("", el.text)
        if el.tail and NOT_XML.search(el.tail):
            el.tail = NOT_XML.sub("", el.tail)
