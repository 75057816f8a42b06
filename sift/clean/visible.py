"""Remove from a parsed page what a person cannot see, before extraction.

Hidden text is where a page can address the agent behind the reader ("ignore previous
instructions…") without the reader ever seeing it, so it never reaches the extractor:
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
labelled by a button or an `aria-expanded` trigger: accordions, tabs), an element a rule in an
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
from collections import defaultdict
from collections.abc import Iterator
from dataclasses import dataclass

import lxml.etree
from lxml.html import HtmlElement

from sift.clean import injection

_NEVER_SHOWN = ("template",)
_KEEP = frozenset({"html", "body", "head"})
_CSS_COMMENT = re.compile(r"/\*.*?\*/", re.S)
_RULE = re.compile(r"([^{}]+)\{([^{}]*)\}")
_NONE = re.compile(r"^none\b")
_ZERO = re.compile(r"^-?0*\.?0+(?:px|pt|em|rem|%|vw|vh)?(?:\s*!important)?$")
_FAR = re.compile(r"^-(\d{3,})(?:\.\d+)?(?:px|pt|em|rem|vw|vh|%)")
_CLIP = re.compile(r"^(?:rect\(\s*0(?:px)?(?:[\s,]+0(?:px)?){3}\s*\)|inset\(\s*50%)")
_RULES_MAX = 5000  # a stylesheet longer than this is read up to here
# Where a declaration that hides starts, in lower case (a superset: `hides` decides).
_HIDING = (
    r"display\s*:\s*none|visibility\s*:\s*(?:hidden|collapse)|font-size\s*:\s*[-.0]|"
    r"position\s*:\s*(?:absolute|fixed)|text-indent\s*:\s*-"
)
_MAY_HIDE = re.compile(_HIDING)
# ... or one that may hide or show again (`shows` reads only `display` and `visibility`).
_MAY_HIDE_OR_SHOW = re.compile(f"display|visibility|{_HIDING}")
_READ = frozenset(
    ("display", "visibility", "font-size", "position", "left", "top", "right", "clip",
     "clip-path", "text-indent")
)  # fmt: skip
# Where elements can hide without a rule of the page's style sheets: one walk of every
# element in Python costs more than this search in C.
_MARKED = lxml.etree.XPath(
    "descendant-or-self::*[@style or @hidden] | descendant-or-self::template"
)
# With rules that hide: what a rule can reach besides by tag (a class or an id).
_KEYED = lxml.etree.XPath(
    "descendant-or-self::*[@class or @id or @style or @hidden] | descendant-or-self::template"
)
_NOT_ELEMENTS = (lxml.etree.Comment, lxml.etree.ProcessingInstruction, lxml.etree.Entity)
_COMPOUND = re.compile(r"^([a-zA-Z][a-zA-Z0-9-]*)?((?:[.#][\w-]+)*)$")
# An at-rule block for print only (`@media print{…}`, rules one level deep): it shows nothing.
_PRINT = re.compile(r"@media\s+print\s*\{(?:[^{}]*\{[^{}]*\})*[^{}]*\}", re.I)
# A control's target, and the triggers a panel can be labelled by.
_CONTROLLED = lxml.etree.XPath("//@aria-controls", smart_strings=False)
_IS_TRIGGER = "self::button or self::summary or @aria-expanded or @role='button' or @role='tab'"
_TRIGGERS = lxml.etree.XPath(f"//*[{_IS_TRIGGER}][@id]/@id", smart_strings=False)
_NAMES_MAX = 50  # classes and ids looked up in at-rule blocks, at most
_PAGE_MIN = 500  # characters: a hidden element with fewer is not weighed as the page
_UNSEEN = frozenset({"style", "script", "template", "link", "meta"})
_INLINE_SCRIPTS = lxml.etree.XPath("//script[not(@src)]/text()", smart_strings=False)
# The text a person could read: not that of scripts and style sheets.
_READABLE = lxml.etree.XPath(
    "descendant::text()[not(ancestor::script or ancestor::style)]", smart_strings=False
)


def declarations(style: str) -> dict[str, str]:
    """`prop: value; …` as a dict of the properties `hides` and `shows` read, lower-cased,
    `!important` kept in the value."""
    out: dict[str, str] = {}
    for decl in style.split(";"):
        prop, sep, value = decl.partition(":")
        if sep:
            prop = prop.strip().lower()
            if prop in _READ:
                out[prop] = " ".join(value.lower().split())
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


# (`;` needs no stop: an at-rule that ends at one is found with `css.find`.)
_AT_OR_BRACE = re.compile(r"[@{}]")
_BRACE = re.compile(r"[{}]")
# What the scan below would walk brace by brace without changing its state, matched in C
# instead: plain rules outside any block, and the flat rules inside an at-rule's block.
_PLAIN_RULES = re.compile(r"(?:[^{}@]*\{[^{}]*\})*")
_FLAT_RULES = re.compile(r"(?:[^{}]*\{[^{}]*\})*[^{}]*")
# What the scan reads next at the top level, when it is one whole at-rule that nests no deeper
# than flat rules (`@media x{a{…}b{…}}`, `@font-face{…}`, `@import …;`), the text before it in
# group 1: taken in one match, where the scan would stop at each brace of it.
_AT_RULE = re.compile(r"([^{}@]*)@[^{};}@]*(?:;|\{(?:[^{}]*\{[^{}]*\})*[^{}]*\})")


def _top_level(css: str) -> str:
    """The stylesheet without comments and without at-rule blocks (`@media …{…}`)."""
    css = _CSS_COMMENT.sub("", css)
    if "@" not in css:
        return css
    out: list[str] = []
    depth, start, skipping, pos = 0, 0, False, 0
    while True:
        if depth == 0 and not skipping:
            pos = _PLAIN_RULES.match(css, pos).end()  # type: ignore[union-attr]
            at_rule = _AT_RULE.match(css, pos)
            if at_rule is not None:
                out.append(css[start : at_rule.end(1)])
                pos = start = at_rule.end()
                continue
        elif skipping and depth == 1:
            pos = _FLAT_RULES.match(css, pos).end()  # type: ignore[union-attr]
        m = _AT_OR_BRACE.search(css, pos)
        if m is None:
            break
        ch, at = m.group(), m.start()
        pos = at + 1
        if skipping:
            depth += 1 if ch == "{" else -1 if ch == "}" else 0
            if depth == 0:
                skipping, start = False, at + 1
        elif ch == "@" and depth == 0:
            out.append(css[start:at])
            end = css.find("{", at)
            semi = css.find(";", at)
            if semi != -1 and (end == -1 or semi < end):  # @import …; @charset …;
                start = semi + 1
                continue
            if end == -1:
                return "".join(out)
            skipping, depth = True, 0
        elif ch == "{":
            depth += 1
        elif ch == "}":
            depth = max(0, depth - 1)
    if not skipping:
        out.append(css[start:])
    return "".join(out)


@dataclass(frozen=True)
class _Selector:
    """A compound selector of a tag, classes and an id (`div.tab.active`, `#ad`)."""

    tag: str | None
    classes: frozenset[str]
    id: str | None

    def matches(self, tag: str, classes: set[str], el_id: str | None) -> bool:
        return (
            (self.tag is None or self.tag == tag)
            and (self.id is None or self.id == el_id)
            and self.classes <= classes
        )


def _compound(text: str) -> _Selector | None:
    m = _COMPOUND.match(text.strip())
    if m is None or not (m.group(1) or m.group(2)):
        return None
    parts = re.findall(r"([.#])([\w-]+)", m.group(2) or "")
    ids = [name for kind, name in parts if kind == "#"]
    return _Selector(
        tag=(m.group(1) or "").lower() or None,
        classes=frozenset(name for kind, name in parts if kind == "."),
        id=ids[0] if len(ids) == 1 else None,
    )


class _Rules:
    """Selectors indexed by id, class and tag, so each element looks at its few candidates."""

    def __init__(self) -> None:
        self.by_id: dict[str, list[_Selector]] = defaultdict(list)
        self.by_class: dict[str, list[_Selector]] = defaultdict(list)
        self.by_tag: dict[str, list[_Selector]] = defaultdict(list)
        self.count = 0  # with those that can name no element (`#a#b`), which match nothing

    def add(self, sel: _Selector) -> None:
        self.count += 1
        if sel.id:
            self.by_id[sel.id].append(sel)
        elif sel.classes:
            self.by_class[min(sel.classes)].append(sel)
        elif sel.tag:
            self.by_tag[sel.tag].append(sel)

    def match(self, tag: str, classes: set[str], el_id: str | None) -> bool:
        sels = self.by_tag.get(tag, [])
        if el_id in self.by_id:
            sels = sels + self.by_id[el_id]
        if not classes.isdisjoint(self.by_class):
            sels = sels + [sel for name in classes & self.by_class.keys()
                           for sel in self.by_class[name]]  # fmt: skip
        return any(sel.matches(tag, classes, el_id) for sel in sels)

    def tags(self) -> list[str]:
        """The tags that rules name without a class or an id."""
        return list(self.by_tag)

    def __bool__(self) -> bool:
        return self.count > 0


def _style_rules(tree: HtmlElement) -> tuple[_Rules, list[tuple[str, str]], list[str]]:
    """The rules that hide, from the page's `<style>` blocks, and the others that may show
    (selectors, lower-cased declarations), for `_show_rules` to read when an element is hidden;
    one scan of each stylesheet finds both. And the stylesheets with at-rules, whose blocks
    may show too (`_nested_rules`).

    A hiding rule counts only with a plain compound selector (`.ad`, `#x`, `p.note`): one with
    combinators or pseudo-classes depends on context or state.
    """
    hide, others, nested = _Rules(), [], []
    for style in tree.iter("style"):
        css = style.text or ""
        media = " ".join((style.get("media") or "all").lower().split())
        if media not in ("all", "screen"):  # for some screens only, or for print
            if "print" not in media:
                nested.append(css)
            continue
        if "@" in css:
            nested.append(css)
        for selectors, body in _rules_with(_top_level(css), _MAY_HIDE_OR_SHOW):
            if not (_MAY_HIDE.search(body) and hides(declarations(body))):
                others.append((selectors, body))
                continue
            for selector in selectors.split(","):
                selector = selector.strip()
                sel = _compound(selector) if ":" not in selector else None
                if sel is not None:
                    hide.add(sel)
    return hide, others, nested


def _nested_rules(
    sheets: list[str], hidden: list[tuple[HtmlElement, tuple[set[str], str | None]]]
) -> list[tuple[str, str]]:
    """The rules of `sheets` whose selectors name a class or id of a `hidden` element, those in
    at-rule blocks included (one that shows `.menu` at some screen size shows it), but not
    those for print; found from where the names occur, not read rule by rule."""
    worth = [key for el, key in hidden if el.text_content().strip()]  # (an empty one is moot)
    names = {f".{c}" for classes, _id in worth for c in classes}
    names |= {f"#{el_id}" for _classes, el_id in worth if el_id}
    if len(names) > _NAMES_MAX:
        names = set(sorted(names)[:_NAMES_MAX])
    out = []
    for css in sheets:
        if "/*" in css:
            css = _CSS_COMMENT.sub("", css)
        if "print" in css or "PRINT" in css:
            css = _PRINT.sub("", css)
        for name in names:
            at = css.find(name)
            while at != -1:
                brace = _BRACE.search(css, at)
                if brace is None:
                    break
                end = css.find("}", brace.end())
                after = css[at + len(name) : at + len(name) + 1]
                # `name` whole, in a selector
                if brace.group() == "{" and end != -1 and not (after.isalnum() or after in "-_"):
                    begins = max(css.rfind("{", 0, at), css.rfind("}", 0, at)) + 1
                    out.append((css[begins : brace.start()], css[brace.end() : end].lower()))
                at = css.find(name, max(end, brace.end()))
    return out


def _show_rules(
    rules: list[tuple[str, str]], hidden: list[tuple[HtmlElement, tuple[set[str], str | None]]]
) -> _Rules:
    """Of `rules`, those that show again (and do not hide), each by the last compound of its
    selectors (`.js .tab.active` shows `.tab.active`), so a doubt keeps the text; only those
    whose selectors name a class, id or tag of a `hidden` element (none other can show one).
    """
    names = {name for _el, (classes, el_id) in hidden for name in (*classes, el_id) if name}
    tags = {str(el.tag) for el, _key in hidden}
    named = re.compile("|".join(map(re.escape, names)))
    tagged = re.compile("|".join(map(re.escape, tags)))
    show = _Rules()
    for selectors, body in rules:
        if not ((names and named.search(selectors)) or tagged.search(selectors.lower())):
            continue
        decls = declarations(body)
        if not hides(decls) and shows(decls):
            for selector in selectors.split(","):
                sel = _compound(re.split(r"[\s>+~]+", selector.strip().split(":")[0])[-1])
                if sel is not None:
                    show.add(sel)
    return show


def _rules_with(css: str, found: re.Pattern[str]) -> Iterator[tuple[str, str]]:
    """(selectors, lower-cased declarations) of the first `_RULES_MAX` rules of `css` (as
    `_RULE` finds them) whose declarations hold a match of `found`, in order.

    Most rules hold none: the rules are found from where a match occurs (a search in C), not
    read one by one in Python. A rule is a brace-free selector run, its whole length, then
    `{`, brace-free declarations, `}`.
    """
    low = css.lower()
    if len(low) != len(css) or css.count("}") > _RULES_MAX:  # rare: read rule by rule
        for n, m in enumerate(_RULE.finditer(css)):
            if n >= _RULES_MAX:
                break
            body = m.group(2).lower()
            if found.search(body):
                yield m.group(1), body
        return
    done = 0  # where the last rule looked at ends
    for m in found.finditer(low):
        at = m.start()
        if at < done:
            continue  # in the rule just read
        opening = max(css.rfind("{", 0, at), css.rfind("}", 0, at))
        closing = _BRACE.search(css, at)
        done = closing.start() if closing else len(css)
        if opening == -1 or css[opening] != "{" or closing is None or closing.group() != "}":
            continue  # not in a rule's declarations
        begins = max(css.rfind("{", 0, opening), css.rfind("}", 0, opening)) + 1
        if begins < opening:
            yield css[begins:opening], low[opening + 1 : done]


def _candidates(tree: HtmlElement, hide: _Rules) -> list[HtmlElement]:
    """The elements that may be hidden: marked (`style`, `hidden`, `<template>`), and with
    rules that hide, those the rules can name (a class, an id, or a tag they name)."""
    if not hide:
        return list(_MARKED(tree))
    found = _KEYED(tree)
    tags = hide.tags()
    return list(dict.fromkeys(found + list(tree.iter(*tags)))) if tags else list(found)


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
    for node in list(tree.iter(*_NOT_ELEMENTS)):
        if node.getparent() is not None:  # comments, PIs
            removed += len(" ".join((node.text or "").split()))
            node.drop_tree()
    hide, others, nested = _style_rules(tree)
    # (element, None) hidden for sure; (element, (classes, id)) hidden by a rule of the page's
    # style sheets unless one shows it again, which is looked up once the candidates are known.
    found: list[tuple[HtmlElement, tuple[set[str], str | None] | None]] = []
    for el in _candidates(tree, hide):
        if not isinstance(el.tag, str) or el.tag in _KEEP:
            continue
        style = el.get("style")
        inline = declarations(style) if style else {}
        hidden = el.get("hidden")
        attr = hidden is not None and hidden.lower() != "until-found"
        if el.tag in _NEVER_SHOWN or attr or (inline and hides(inline)):
            found.append((el, None))
        elif hide and not (inline and shows(inline)):
            classes = set(el.get("class", "").split())
            el_id = el.get("id")
            if hide.match(el.tag, classes, el_id):
                found.append((el, (classes, el_id)))
    maybe = [(el, key) for el, key in found if key is not None]
    show = _show_rules(others + _nested_rules(nested, maybe), maybe) if maybe else _Rules()
    doomed = [el for el, key in found if key is None or not show.match(el.tag, *key)]
    seen = set(doomed)
    outermost = [el for el in doomed if not any(a in seen for a in el.iterancestors())]
    revealed = _Revealed(tree, outermost) if outermost else None
    # (An inner one goes with its ancestor, which counts it; all are judged before any goes.)
    for el in [el for el in outermost if revealed is None or not revealed(el)]:
        removed += _remove(el)
    return removed


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
        if len(text) >= _PAGE_MIN and self._is_page(el):
            return True
        el_id = el.get("id") or ""
        opened = (
            el.get("role") == "tabpanel"
            or (el_id and (el_id in self.controlled() or self._streamed(el_id)))
            or any(label in self.triggers() for label in el.get("aria-labelledby", "").split())
            or _follows_trigger(el)
        )
        return bool(opened) and injection.flag(text) is None

    def _is_page(self, el: HtmlElement) -> bool:
        """More text than the page shows outside its hidden elements: the page itself (a
        page with under `_PAGE_MIN` characters of text is not looked at)."""
        if self._shown is None:
            body = self.tree.find("body")
            page = _readable(body if body is not None else self.tree)
            self._shown = page - sum(map(_readable, self.hidden))
        return _readable(el) > self._shown

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
    after the element that ends with that button."""
    before = el.getprevious()
    while before is not None and (not isinstance(before.tag, str) or before.tag in _UNSEEN):
        before = before.getprevious()
    if before is None:
        return False
    last = before[-1] if len(before) else None
    while last is not None and (not isinstance(last.tag, str) or last.tag in _UNSEEN):
        last = last.getprevious()
    return _is_trigger(before) or (last is not None and _is_trigger(last))


def _is_trigger(el: HtmlElement) -> bool:
    return (
        el.tag in ("button", "summary")
        or el.get("aria-expanded") is not None
        or el.get("role") in ("button", "tab")
    )


def _readable(el: HtmlElement) -> int:
    """The characters of text in `el` a person could read (white space collapsed)."""
    return len(" ".join("".join(_READABLE(el)).split()))
