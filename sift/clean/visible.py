"""Remove from a parsed page what a person cannot see, before extraction.

Hidden text is where a page can address the agent behind the reader ("ignore previous
instructions…") without the reader ever seeing it, so it never reaches the extractor:
elements with the `hidden` attribute, `<template>`, HTML comments, and elements hidden by their inline style or by a rule
of the page's own `<style>` blocks: `display:none`, `visibility:hidden`, a zero font size,
off-screen positioning, and the clip-to-1px "visually hidden" pattern.

Kept on purpose: `aria-hidden` (it hides from screen readers, not from eyes; decorative icons
and duplicated labels are visible), `hidden="until-found"` (shown by find-in-page), `<html>`
and `<body>` (often hidden until a script reveals them), and anything a `<style>` rule shows
again (`.tab.active{display:block}` after `.tab{display:none}`; specificity is not weighed,
so a doubt keeps the text). `<style>` rules inside `@media` and other at-rules are skipped:
they hide for one screen size or for print. External stylesheets are not fetched.
`<noscript>` stays in the tree: a browser runs scripts and never shows it, and no extractor
reads it (trafilatura and `text.visible_text` drop it), but `text.script_only` reads it to
tell a page that needs a browser.
"""

from __future__ import annotations

import re
from collections.abc import Iterator

from cssselect import GenericTranslator, SelectorError
from lxml.etree import XPath, XPathError
from lxml.html import HtmlElement

_NEVER_SHOWN = ("template",)
_KEEP = frozenset({"html", "body", "head"})
_CSS_COMMENT = re.compile(r"/\*.*?\*/", re.S)
_RULE = re.compile(r"([^{}]+)\{([^{}]*)\}")
_NONE = re.compile(r"^none\b")
_ZERO = re.compile(r"^-?0*\.?0+(?:px|pt|em|rem|%|vw|vh)?(?:\s*!important)?$")
_FAR = re.compile(r"^-(\d{3,})(?:\.\d+)?(?:px|pt|em|rem|vw|vh|%)")
_CLIP = re.compile(r"^(?:rect\(\s*0(?:px)?[\s,]+0(?:px)?[\s,]+0(?:px)?[\s,]+0(?:px)?\s*\)|inset\(\s*50%)")
_RULES_MAX = 5000  # a stylesheet longer than this is read up to here
_translator = GenericTranslator()


def declarations(style: str) -> dict[str, str]:
    """`prop: value; …` as a dict, lower-cased, `!important` kept in the value."""
    out: dict[str, str] = {}
    for decl in style.split(";"):
        prop, sep, value = decl.partition(":")
        if sep:
            out[prop.strip().lower()] = " ".join(value.lower().split())
    return out


def hides(decls: dict[str, str]) -> bool:
    """True when these declarations make an element invisible to a person."""
    if _NONE.match(decls.get("display", "")):
        return True
    if decls.get("visibility", "").startswith(("hidden", "collapse")):
        return True
    if _ZERO.match(decls.get("font-size", "")):
        return True
    if decls.get("position", "").startswith(("absolute", "fixed")):
        for side in ("left", "top", "right"):
            m = _FAR.match(decls.get(side, ""))
            if m and int(m.group(1)) >= 999:
                return True
        if _CLIP.match(decls.get("clip", "") or decls.get("clip-path", "")):
            return True
    m = _FAR.match(decls.get("text-indent", ""))
    return bool(m and int(m.group(1)) >= 999)


def shows(decls: dict[str, str]) -> bool:
    """True when these declarations make an element visible again."""
    display = decls.get("display", "")
    return bool(display and not _NONE.match(display)) or decls.get("visibility") == "visible"


def _top_level(css: str) -> str:
    """The stylesheet without comments and without at-rule blocks (`@media …{…}`)."""
    css = _CSS_COMMENT.sub("", css)
    out, depth, skip_from = [], 0, -1
    i = 0
    while i < len(css):
        ch = css[i]
        if ch == "@" and depth == 0:
            j = i
            while j < len(css) and css[j] not in "{;":
                j += 1
            if j < len(css) and css[j] == ";":  # @import …; @charset …;
                i = j + 1
                continue
            skip_from, depth, i = len(out), 1, j + 1
            continue
        if skip_from >= 0:
            depth += ch == "{"
            depth -= ch == "}"
            if depth == 0:
                skip_from = -1
        else:
            out.append(ch)
        i += 1
    return "".join(out)


def _xpaths(selectors: str) -> Iterator[XPath]:
    for selector in selectors.split(","):
        selector = selector.strip()
        if not selector or ":" in selector:  # :hover, ::before… depend on state or add text
            continue
        try:
            yield XPath(_translator.css_to_xpath(selector))
        except (SelectorError, XPathError, ValueError):
            continue


def _style_rules(tree: HtmlElement) -> tuple[list[XPath], list[XPath]]:
    """(selectors that hide, selectors that show) from the page's `<style>` blocks."""
    hide: list[XPath] = []
    show: list[XPath] = []
    for style in tree.iter("style"):
        css = _top_level(style.text or "")
        for n, m in enumerate(_RULE.finditer(css)):
            if n >= _RULES_MAX:
                break
            decls = declarations(m.group(2))
            if hides(decls):
                hide.extend(_xpaths(m.group(1)))
            elif shows(decls):
                show.extend(_xpaths(m.group(1)))
    return hide, show


def _chars(el: HtmlElement) -> int:
    return len(" ".join(el.text_content().split()))


def _remove(el: HtmlElement) -> int:
    """Remove `el` (its tail text stays); the characters of text it held."""
    if el.getparent() is None or el.tag in _KEEP:
        return 0
    n = _chars(el)
    el.drop_tree()
    return n


def strip_hidden(tree: HtmlElement) -> int:
    """Remove hidden elements and comments from `tree`, in place.

    Returns:
        How many characters of text (white space collapsed) were removed.
    """
    removed = 0
    for node in list(tree.iter()):
        if not isinstance(node.tag, str) and node.getparent() is not None:  # comments, PIs
            removed += len(" ".join((node.text or "").split()))
            node.drop_tree()
    hide, show = _style_rules(tree)
    shown: set[HtmlElement] = set()
    for xp in show:
        shown.update(el for el in xp(tree) if isinstance(el, HtmlElement))
    doomed: list[HtmlElement] = []
    for el in tree.iter():
        if not isinstance(el.tag, str) or el.tag in _KEEP:
            continue
        style = el.get("style")
        inline = declarations(style) if style else {}
        if el.tag in _NEVER_SHOWN or (
            "hidden" in el.attrib and el.get("hidden", "").lower() != "until-found"
        ):
            doomed.append(el)
        elif inline and hides(inline):
            doomed.append(el)
    for xp in hide:
        for el in xp(tree):
            if isinstance(el, HtmlElement) and el.tag not in _KEEP and el not in shown:
                style = el.get("style")
                if not (style and shows(declarations(style))):
                    doomed.append(el)
    seen: set[HtmlElement] = set(doomed)
    for el in doomed:
        if any(a in seen for a in el.iterancestors()):
            continue  # its ancestor goes, and counts it
        removed += _remove(el)
    return removed
