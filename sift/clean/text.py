"""The page's full visible text, and whether a page is only a shell for scripts.

Both are last resorts for `sift.clean.html`: when main-content extraction finds nothing
(~0.6 % of pages), the agent gets the visible text, page chrome dropped when anything is left
without it; and a page whose text is nearly empty while its HTML is mostly script (or an empty
single-page-app mount point) gets the hint "browser", because no cleaner can read it.
"""

from __future__ import annotations

import re
from copy import deepcopy

from lxml.html import HtmlElement

# Never visible.
_INVISIBLE = (
    "script",
    "style",
    "noscript",
    "template",
    "svg",
    "math",
    "head",
    "iframe",
    "object",
    "embed",
    "canvas",
    "select",
    "option",
    "datalist",
)
# Visible but not content; dropped unless nothing is left without them.
_CHROME = ("nav", "header", "footer", "aside", "form", "button", "dialog")
_BLOCKS = frozenset(
    {
        "address",
        "article",
        "blockquote",
        "br",
        "caption",
        "dd",
        "details",
        "div",
        "dl",
        "dt",
        "fieldset",
        "figcaption",
        "figure",
        "h1",
        "h2",
        "h3",
        "h4",
        "h5",
        "h6",
        "hr",
        "li",
        "main",
        "ol",
        "p",
        "pre",
        "section",
        "summary",
        "table",
        "td",
        "th",
        "tr",
        "ul",
    }
)
_HEADINGS = {f"h{n}": "#" * n + " " for n in range(1, 7)}

# Below this many characters of clean text a page may be a script shell.
NEARLY_EMPTY = 200
SCRIPT_SHARE = 0.5
_MOUNT_IDS = frozenset(
    {
        "root",
        "app",
        "__next",
        "__nuxt",
        "___gatsby",
        "svelte",
        "main-app",
        "application",
        "react-root",
    }
)
_MOUNT_TAGS = frozenset({"app-root", "ion-app"})
_NEEDS_JS = re.compile(r"\b(enable|requires?|needs?|turn on)\b.{0,40}\bjavascript\b", re.I | re.S)


def _lines(root: HtmlElement) -> str:
    for el in root.iter():
        if not isinstance(el.tag, str):
            continue
        if el.tag in ("br", "hr"):
            el.tail = "\n" + (el.tail or "")
        elif el.tag in _BLOCKS:
            el.tail = "\n" + (el.tail or "")
            el.text = "\n" + _HEADINGS.get(el.tag, "") + (el.text or "")
        elif el.tag in ("td", "th"):
            el.tail = " " + (el.tail or "")
    text = root.text_content()
    lines = (" ".join(line.split()) for line in text.split("\n"))
    return "\n\n".join(line for line in lines if line.strip("# "))


def _drop(root: HtmlElement, tags: tuple[str, ...]) -> None:
    for el in list(root.iter(*tags)):
        if el.getparent() is not None:
            el.drop_tree()  # keeps the tail text


def visible_text(tree: HtmlElement) -> str:
    """The text a reader sees, one block per paragraph, headings marked; chrome dropped if
    anything remains without it. The tree is not modified."""
    root = deepcopy(tree)
    for el in list(root.iter()):  # comments and processing instructions
        if not isinstance(el.tag, str) and el.getparent() is not None:
            el.drop_tree()
    _drop(root, _INVISIBLE)
    body = root.find("body")
    root = body if body is not None else root
    bare = deepcopy(root)
    _drop(bare, _CHROME)
    return _lines(bare) or _lines(root)


def _mount_point(tree: HtmlElement) -> bool:
    for el in tree.iter():
        if not isinstance(el.tag, str):
            continue
        mount = el.tag in _MOUNT_TAGS or el.get("id", "").lower() in _MOUNT_IDS
        if (mount or "ng-app" in el.attrib) and len(el.text_content().strip()) < 50:
            return True
    return False


def script_only(tree: HtmlElement, html_len: int, clean_text: str) -> bool:
    """True for a page that needs a browser: nearly no text, and mostly script or an empty
    app mount point (or a `<noscript>` asking for JavaScript)."""
    if len(clean_text.strip()) >= NEARLY_EMPTY:
        return False
    scripts = list(tree.iter("script"))
    script_len = sum(len(s.text or "") for s in scripts)
    if html_len and script_len / html_len >= SCRIPT_SHARE:
        return True
    if any(_NEEDS_JS.search(n.text_content()) for n in tree.iter("noscript")):
        return True
    return bool(scripts) and _mount_point(tree)
