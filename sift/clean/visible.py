"""Find in a parsed page what a person cannot see, to be removed before extraction.

Hidden text is where a page can address the agent behind the reader ("ignore previous
instructions…") without the reader ever seeing it, so it never reaches the answer (the
extractor reads it marked, and it is cut from what it answers: `marked.py`):
elements with the `hidden` attribute, `<template>`, HTML comments, and elements hidden by
their inline style or by a rule of the page's own `<style>` blocks: `display:none`,
`visibility:hidden`, a zero font size, off-screen positioning, and the clip-to-1px "visually
hidden" pattern.

Kept on purpose: `aria-hidden` (it hides from screen readers, not from eyes; decorative icons
and duplicated labels are visible), `hidden="until-found"` (shown by find-in-page), `<html>`
and `<body>` (often hidden until a script reveals them), and anything a `<style>` rule shows
again (`.tab.active{display:block}` after `.tab{display:none}`; specificity is not weighed,
so a doubt keeps the text; only plain compound selectors such as `.ad`,
`#note` or `p.x` hide). `<style>` rules inside `@media` and other at-rules, or in a
`<style media="…">` for some screens, do not hide: they hide for one screen size or for print.
External stylesheets are not fetched.
What the page reveals stays, since a person sees it: an element hidden until the page's own
script shows it (its id named in an inline script: React's streamed `<div hidden id="S:0">`,
`getElementById('x')`), a panel a control on the page opens (its id in an `aria-controls`, or
labelled by a button or an `aria-expanded` trigger: accordions, tabs; or right after a
sibling whose class or id names it a question, a toggle, a tab: a FAQ's answer after its
`div.faq-question`), an element a rule in an
`@media` block shows at some screen size, and an element holding most of the page's text (the
page itself, hidden until a script reveals it: nobody hides a page from its readers). Of these,
one that addresses an AI ("ignore previous instructions") goes all the same, unless it is the
page itself (then the injection pass flags it, as any visible text): a page that means a
person to see some text has no reason to hide a note to an agent behind a script.
`<noscript>` stays in the tree: a browser runs scripts and never shows it, and no extractor
reads it (trafilatura and `text.visible_text` drop it), but `text.script_only` reads it to
tell a page that needs a browser.
"""

from __future__ import annotations

import re

import lxml.etree
from lxml.html import HtmlElement

from sift.clean import injection, stylesheet

_NEVER_SHOWN = ("template",)
VALUES_MAX = 40  # id and class values, at most, looked up by value (`with_values`)
Attributes = tuple[list[str], list[str]]  # a page's id values and class values, in order
_KEEP = frozenset({"html", "body", "head"})
# Where elements can hide without a rule of the page's style sheets: one walk of every
# element in Python costs more than this search in C, which finds each attribute and then
# its element (a third faster than a predicate on every element; the same elements, in order).
_MARKED = lxml.etree.XPath(
    "descendant-or-self::*/@style/.. | descendant-or-self::*/@hidden/.."
    " | descendant-or-self::template"
)
# With rules that hide: what a rule can reach besides by tag (a class or an id).
_KEYED = lxml.etree.XPath(
    "descendant-or-self::*[@class or @id or @style or @hidden] | descendant-or-self::template"
)
_NOT_ELEMENTS = (lxml.etree.Comment, lxml.etree.ProcessingInstruction, lxml.etree.Entity)
# A control's target, and the triggers a panel can be labelled by.
_CONTROLLED = lxml.etree.XPath("//@aria-controls", smart_strings=False)
_IS_TRIGGER = "self::button or self::summary or @aria-expanded or @role='button' or @role='tab'"
# (From the ids to their elements: a third of the time of a predicate on every element.)
_TRIGGERS = lxml.etree.XPath(f"//@id/parent::*[{_IS_TRIGGER}]/@id", smart_strings=False)
# Words of a class or an id that name an element the control of the panel after it.
_TOGGLE_WORDS = frozenset(
    {"question", "toggle", "accordion", "faq", "expand", "collapse", "tab", "summary"}
)
_NAME_WORDS = re.compile(r"[a-z]+")
_PAGE_MIN = 500  # characters: a hidden element with fewer is not weighed as the page
_UNSEEN = frozenset({"style", "script", "template", "link", "meta"})
_INLINE_SCRIPTS = lxml.etree.XPath("//script[not(@src)]/text()", smart_strings=False)
# The text a person could read: not that of scripts and style sheets.
_SCRIPTED = ("script", "style")
_READABLE = lxml.etree.XPath(
    "descendant::text()[not(ancestor::script or ancestor::style)]", smart_strings=False
)


def _candidates(
    tree: HtmlElement, hide: stylesheet.Rules, attrs: Attributes | None
) -> list[HtmlElement]:
    """The elements that may be hidden: marked (`style`, `hidden`, `<template>`), and with
    rules that hide, those the rules can name (a class, an id, or a tag they name).

    Most elements with a class or an id have none a rule names: where the page's id and class
    values are known (`attrs`) and no rule names a tag, only the elements with a value a rule
    names are looked at, found by the values themselves (the same elements as the loop in
    `hidden_elements` would keep of all, in the same order)."""
    if not hide:
        return list(_MARKED(tree))
    tags = hide.tags()
    if tags:
        return list(dict.fromkeys(_KEYED(tree) + list(tree.iter(*tags))))
    if attrs is not None:
        ids = {v for v in set(attrs[0]) if v in hide.by_id}
        classes = {v for v in set(attrs[1]) if not hide.by_class.keys().isdisjoint(v.split())}
        if len(ids) + len(classes) <= VALUES_MAX:
            return list(with_values(_MARKED, ids, classes)(tree))
    return list(_KEYED(tree))


def with_values(base: lxml.etree.XPath, ids: set[str], classes: set[str]) -> lxml.etree.XPath:
    """`base`'s elements and those whose id is one of `ids` or whose class attribute is one
    of `classes`, in document order (each value compared whole, on the attribute, then its
    element taken: libxml2 does not test every element)."""
    if not ids and not classes:
        return base
    tests = [base.path]
    for name, values in (("id", ids), ("class", classes)):
        if values:
            equal = " or ".join(f". = {_literal(v)}" for v in sorted(values))
            tests.append(f"descendant-or-self::*/@{name}[{equal}]/..")
    return lxml.etree.XPath(" | ".join(tests))


def _literal(value: str) -> str:
    """`value` as an XPath string literal (which has no escapes: `concat` where it holds
    both quotes)."""
    if "'" not in value:
        return f"'{value}'"
    if '"' not in value:
        return f'"{value}"'
    return "concat(" + ', "\'", '.join(f"'{part}'" for part in value.split("'")) + ")"


def text_chars(el: HtmlElement) -> int:
    """The characters of text in `el`, white space collapsed."""
    return len(" ".join(el.text_content().split()))


def strip_comments(tree: HtmlElement) -> int:
    """Remove comments and processing instructions; the characters of text they held."""
    removed = 0
    for node in list(tree.iter(*_NOT_ELEMENTS)):
        if node.getparent() is not None:  # comments, PIs
            removed += len(" ".join((node.text or "").split()))
            node.drop_tree()
    return removed


def hidden_elements(
    tree: HtmlElement, attrs: Attributes | None = None
) -> tuple[list[HtmlElement], list[HtmlElement]]:
    """The outermost hidden elements of `tree` (comments gone): those to be removed, and
    those the page reveals (to be shown: `unhide`); `attrs`: the page's id and class values,
    if read (`consent.attributes`)."""
    hide, others, nested = stylesheet.style_rules(tree)
    # (element, None) hidden for sure; (element, (classes, id)) hidden by a rule of the page's
    # style sheets unless one shows it again, which is looked up once the candidates are known.
    found: list[tuple[HtmlElement, tuple[set[str], str | None] | None]] = []
    # (A style none of whose declarations can hide, or show with rules that hide, is read as
    # none: most inline styles, whose parse cost more than this search.)
    may = (stylesheet.MAY_HIDE_OR_SHOW if hide else stylesheet.MAY_HIDE).search
    for el in _candidates(tree, hide, attrs):
        tag = el.tag
        if not isinstance(tag, str) or tag in _KEEP:
            continue
        hidden = el.get("hidden")
        if tag in _NEVER_SHOWN or (hidden is not None and hidden.lower() != "until-found"):
            found.append((el, None))
            continue
        style = el.get("style")
        inline = stylesheet.declarations(style) if style and may(style.lower()) else {}
        if inline and stylesheet.hides(inline):
            found.append((el, None))
        elif hide and not (inline and stylesheet.shows(inline)) and hide.may_match(el):
            classes = set(el.get("class", "").split())
            el_id = el.get("id")
            if hide.match(tag, classes, el_id):
                found.append((el, (classes, el_id)))
    maybe = [(el, key) for el, key in found if key is not None]
    show = (
        stylesheet.show_rules(others + stylesheet.nested_rules(nested, maybe), maybe)
        if maybe
        else stylesheet.Rules()
    )
    doomed = [el for el, key in found if key is None or not show.match(el.tag, *key)]
    seen = set(doomed)
    outermost = [el for el in doomed if not any(a in seen for a in el.iterancestors())]
    if not outermost:
        return [], []
    revealed = _Revealed(tree, outermost)
    # (An inner one goes with its ancestor, which counts it; all are judged before any goes.)
    shown = [revealed(el) for el in outermost]
    pairs = list(zip(outermost, shown, strict=True))
    return [el for el, seen in pairs if not seen and _removable(el)], [
        el for el, seen in pairs if seen
    ]


def _removable(el: HtmlElement) -> bool:
    return el.getparent() is not None and el.tag not in _KEEP


def unhide(el: HtmlElement) -> None:
    """Drop the inline style that hides what the page reveals: the extractor discards an
    element styled `display:none` or `visibility:hidden` whatever sift judged of it."""
    style = el.get("style")
    if style and stylesheet.hides(stylesheet.declarations(style)):
        del el.attrib["style"]


class _Revealed:
    """Whether a hidden element is one the page reveals (see the module's docstring); what
    it reads of the page is read once, when first needed."""

    def __init__(self, tree: HtmlElement, hidden: list[HtmlElement]) -> None:
        self.tree = tree
        self.hidden = hidden
        self._scripts: str | None = None
        self._controlled: set[str] | None = None
        self._triggers: set[str] | None = None
        self._shown: int | None = None
        self._templates: set[str] | None = None

    def __call__(self, el: HtmlElement) -> bool:
        if el.tag in _NEVER_SHOWN:
            return False
        text = el.text_content()
        if len(text) >= _PAGE_MIN and self._is_page(el, text):
            return True
        el_id = el.get("id") or ""
        opened = (
            el.get("role") == "tabpanel"
            or (el_id and (el_id in self.controlled() or self._streamed(el_id)))
            or any(label in self.triggers() for label in el.get("aria-labelledby", "").split())
            or _follows_trigger(el)
        )
        return bool(opened) and injection.flag(text) is None

    def _is_page(self, el: HtmlElement, text: str) -> bool:
        """More text than the page shows outside its hidden elements (`text` is `el`'s): the
        page itself (a page with under `_PAGE_MIN` characters of text is not looked at)."""
        if self._shown is None:
            body = self.tree.find("body")
            page = _readable(body if body is not None else self.tree)
            self._shown = page - sum(map(_readable, self.hidden))
        return _readable(el, text) > self._shown

    def _streamed(self, el_id: str) -> bool:
        """Named by an inline script, or a segment React streams in for its placeholder
        (`<div hidden id="S:1">` for `<template id="B:1">` or `"P:1"`)."""
        if el_id.startswith("S:"):
            if self._templates is None:
                self._templates = {str(t.get("id")) for t in self.tree.iter("template")}
            if {f"B:{el_id[2:]}", f"P:{el_id[2:]}"} & self._templates:
                return True
        if self._scripts is None:
            self._scripts = "\n".join(_INLINE_SCRIPTS(self.tree))
        scripts = self._scripts
        return any(f"{q}{el_id}{q}" in scripts for q in ('"', "'")) or f"#{el_id}" in scripts

    def controlled(self) -> set[str]:
        if self._controlled is None:
            self._controlled = {t for v in _CONTROLLED(self.tree) for t in str(v).split()}
        return self._controlled

    def triggers(self) -> set[str]:
        if self._triggers is None:
            self._triggers = set(map(str, _TRIGGERS(self.tree)))
        return self._triggers


def _follows_trigger(el: HtmlElement) -> bool:
    """A panel right after the button that opens it ("View details", an accordion's), or
    after the element that ends with that button; or the first thing in a wrapper that comes
    right after it (`<div role=button>Q</div><div class=body><div hidden>A</div></div>`)."""
    before = _seen_before(el)
    parent = el.getparent()
    if before is None and parent is not None:
        before = _seen_before(parent)
    if before is None:
        return False
    last = before[-1] if len(before) else None
    while last is not None and (not isinstance(last.tag, str) or last.tag in _UNSEEN):
        last = last.getprevious()
    return _is_trigger(before) or _named_toggle(before) or (last is not None and _is_trigger(last))


def _seen_before(el: HtmlElement) -> HtmlElement | None:
    """The element before `el` among its siblings, but for scripts, styles and comments."""
    before = el.getprevious()
    while before is not None and (not isinstance(before.tag, str) or before.tag in _UNSEEN):
        before = before.getprevious()
    return before


def _named_toggle(el: HtmlElement) -> bool:
    """Whether `el`'s class or id names it a toggle (`faq-question`, `accordion-header`):
    pages script plain `<div>`s into accordions, with no `button` or ARIA to say so."""
    names = f"{el.get('class', '')} {el.get('id', '')}".lower()
    return any(w.rstrip("s") in _TOGGLE_WORDS for w in _NAME_WORDS.findall(names))


def _is_trigger(el: HtmlElement) -> bool:
    return (
        el.tag in ("button", "summary")
        or el.get("aria-expanded") is not None
        or el.get("role") in ("button", "tab")
    )


def _readable(el: HtmlElement, text: str | None = None) -> int:
    """The characters of text in `el` a person could read (white space collapsed); `text`
    is its `text_content()` if known. Without a script or style in or around `el` that is
    all its text, read in C (the search that leaves theirs out asks each text node for them).
    """
    if next(el.iter(*_SCRIPTED), None) is None and next(el.iterancestors(*_SCRIPTED), None) is None:
        text = el.text_content() if text is None else text
    else:
        text = "".join(_READABLE(el))
    return len(" ".join(text.split()))
