"""Link targets in the markdown: made safe before extraction, resolved after it.

trafilatura wraps a target holding a space, `<`, `>` or a parenthesis in `<…>`, and resolves
relative targets against the site root: targets are percent-encoded in the tree first, and
the ones that survive extraction are resolved against the page URL or its `<base href>`.
"""

from __future__ import annotations

import re
from urllib.parse import urldefrag, urljoin, urlsplit

from lxml.html import HtmlElement

from sift.clean.parsing import NOT_XML

_FENCES = re.compile(r"^ {0,3}(`{3,}|~{3,})", re.MULTILINE)
# Link text holds no brackets, so a line of many "[" costs linear time, not quadratic. The
# "[" comes first and the character before it is checked after it: a literal first lets the
# regex engine skip to each "[" instead of trying every position (7× faster on a long line).
_MD_LINK = re.compile(r"\[(?<![`\\]\[)((?:[^\[\]\n\\]|\\.)*)\]\(([^()\s]+)\)")
# A path from the root that `urljoin` keeps as it is: no dot segment, query, fragment or params
# (nor anything `urlsplit` strips); most relative links on a page are these.
_ROOTED = re.compile(r"(?!.*/\.)/(?!/)[^?#;\x00-\x20\x7f]*\Z")
_SCHEME = re.compile(r"^[a-zA-Z][a-zA-Z0-9+.-]*:")
_SET_ASIDE = re.compile(r"(?i)(?:data|javascript):")  # base URLs HTML does not take
# Markdown link targets cannot hold these bare; tabs and newlines in a URL are dropped.
_UNSAFE = re.compile(r"[\s<>()]+")
_URL_WS = re.compile(r"[\t\n\r]")


def base_url(tree: HtmlElement, url: str) -> str:
    """The URL relative links resolve against: `<base href>` (itself resolved) or the page,
    also in place of a `data:` or `javascript:` base, which HTML sets aside the same way."""
    base = tree.find(".//base[@href]")
    href = str(base.get("href") or "").strip() if base is not None else ""
    if not href:
        return url
    try:
        joined = urljoin(url, href)
    except ValueError:
        return url
    return url if _SET_ASIDE.match(joined) else joined


def _join(base: str, target: str) -> str:
    if not base or _SCHEME.match(target):
        return target
    try:
        return urljoin(base, target)
    except ValueError:  # e.g. a malformed IPv6 host
        return target


def _root(base: str) -> str:
    """`scheme://host` of an http(s) `base` with a host, which `urljoin(base, path)` puts
    before a `_ROOTED` path as it is; else ""."""
    try:
        parts = urlsplit(base)
    except ValueError:
        return ""
    if parts.scheme not in ("http", "https") or not parts.netloc:
        return ""
    return f"{parts.scheme}://{parts.netloc}"


def encode_links(tree: HtmlElement) -> None:
    """Percent-encode what a markdown link target cannot hold bare, in every `<a href>`.

    trafilatura wraps a target with a space, `<`, `>` or a parenthesis in `<…>`, which many
    renderers and agents misread; tabs and newlines in a URL are dropped, as browsers do.
    Relative targets stay relative here and are resolved in the markdown (`resolve_markdown_
    links`): only the links that survive extraction are worth an urljoin.
    """
    for el in tree.iter("a", "area"):  # faster than an XPath predicate on every link
        href = el.get("href")
        if href is not None and _UNSAFE.search(href):  # (a reference may put a NOT_XML in)
            href = NOT_XML.sub("", _URL_WS.sub("", href.strip()))
            el.set("href", _UNSAFE.sub(_percent, href))


def _percent(m: re.Match[str]) -> str:
    return "".join(f"%{b:02X}" for b in m.group().encode("utf-8"))


def resolve_markdown_links(markdown: str, base: str, page: str = "") -> str:
    """Resolve any link target still relative; unlink links into the page itself.

    A link to a fragment of the same page (a heading's permalink, a table of contents) tells
    an agent nothing it does not already have, and a resolved one costs ~60 characters, so
    it keeps only its text. Code blocks are left alone.
    """
    if "](" not in markdown:
        return markdown
    here = urldefrag(page).url
    root = _root(base)

    def fix(m: re.Match[str]) -> str:
        text, target = m.group(1), m.group(2)
        if target.startswith("#"):
            return text
        if not _SCHEME.match(target):
            target = root + target if root and _ROOTED.match(target) else _join(base, target)
        if here and "#" in target and urldefrag(target).url == here:
            return text
        return f"[{text}]({target})"

    # The text between fenced code blocks is rewritten whole (a link stays within its line).
    # (`_FENCES` tries every position: it runs only where a fence can be.)
    fences = _FENCES.finditer(markdown) if "```" in markdown or "~~~" in markdown else ()
    parts, fence, start = [], None, 0  # `start`: where the text not yet in `parts` begins
    for m in fences:
        if fence is None:
            parts.append(_MD_LINK.sub(fix, markdown[start : m.start()]))
            fence, start = m.group(1), m.start()
        elif m.group(1).startswith(fence):
            fence, end = None, markdown.find("\n", m.end())
            start_next = len(markdown) if end < 0 else end
            parts.append(markdown[start:start_next])
            start = start_next
    rest = markdown[start:]
    parts.append(rest if fence is not None else _MD_LINK.sub(fix, rest))
    return "".join(parts)
