"""The page's own `<style>` rules, read for what hides an element and what shows it again.

Only what a hiding decision needs is read: `display`, `visibility`, a zero font size, off-screen
positioning and the clip-to-1px pattern. A rule hides only with a plain compound selector
(`.ad`, `#note`, `p.x`): one with combinators or pseudo-classes depends on context or state.
Rules in `@media` and other at-rules never hide (they hide for one screen size or for print),
but may show again; specificity is not weighed, so a doubt keeps the text.
"""

from __future__ import annotations

import re
from collections import defaultdict
from collections.abc import Iterator
from dataclasses import dataclass

from lxml.html import HtmlElement

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
MAY_HIDE = re.compile(_HIDING)
# ... or one that may hide or show again (`shows` reads only `display` and `visibility`).
MAY_HIDE_OR_SHOW = re.compile(f"display|visibility|{_HIDING}")
# What a rule that `hides` holds (a superset, without `position`, which hides only with an
# offset of -999 or more or a clip to nothing): checked before its declarations are parsed, as
# most rules read set a `display` or a `position` that hides nothing.
_HIDES = re.compile(
    r"display\s*:\s*none|visibility\s*:\s*(?:hidden|collapse)|font-size\s*:\s*[-.0]|"
    r"text-indent\s*:\s*-|-\d{3}|rect\(|inset\("
)
# The words every match of either starts with (a page's style sheets run to ~30 KB: the regex
# tries each position, `str.find` skips to each word ten times faster).
_PROPERTIES = ("display", "visibility", "font-size", "position", "text-indent")
_READ = frozenset(
    (
        "display",
        "visibility",
        "font-size",
        "position",
        "left",
        "top",
        "right",
        "clip",
        "clip-path",
        "text-indent",
    )
)
_COMPOUND = re.compile(r"^([a-zA-Z][a-zA-Z0-9-]*)?((?:[.#][\w-]+)*)$")
_PARTS = re.compile(r"([.#])([\w-]+)")
_COMBINATOR = re.compile(r"[\s>+~]+")
_WORDS = re.compile(r"[\w-]+")
# An at-rule block for print only (`@media print{…}`, rules one level deep): it shows nothing.
_PRINT = re.compile(r"@media\s+print\s*\{(?:[^{}]*\{[^{}]*\})*[^{}]*\}", re.I)
_NAMES_MAX = 50  # classes and ids looked up in at-rule blocks, at most


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
    parts = _PARTS.findall(m.group(2) or "")
    ids = [name for kind, name in parts if kind == "#"]
    return _Selector(
        tag=(m.group(1) or "").lower() or None,
        classes=frozenset(name for kind, name in parts if kind == "."),
        id=ids[0] if len(ids) == 1 else None,
    )


class Rules:
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
            sels = sels + [
                sel for name in classes & self.by_class.keys() for sel in self.by_class[name]
            ]
        return any(sel.matches(tag, classes, el_id) for sel in sels)

    def may_match(self, el: HtmlElement) -> bool:
        """Whether some rule names `el`'s tag, id or one of its classes (`match` needs one)."""
        classes = el.get("class")
        return (
            el.tag in self.by_tag
            or el.get("id") in self.by_id
            or (classes is not None and not self.by_class.keys().isdisjoint(classes.split()))
        )

    def tags(self) -> list[str]:
        """The tags that rules name without a class or an id."""
        return list(self.by_tag)

    def __bool__(self) -> bool:
        return self.count > 0


def style_rules(tree: HtmlElement) -> tuple[Rules, list[tuple[str, str]], list[str]]:
    """The rules that hide, from the page's `<style>` blocks, and the others that may show
    (selectors, lower-cased declarations), for `show_rules` to read when an element is hidden;
    one scan of each stylesheet finds both. And the stylesheets with at-rules, whose blocks
    may show too (`nested_rules`).

    A hiding rule counts only with a plain compound selector (`.ad`, `#x`, `p.note`): one with
    combinators or pseudo-classes depends on context or state.
    """
    hide, others, nested = Rules(), [], []
    for style in tree.iter("style"):
        css = style.text or ""
        media = " ".join((style.get("media") or "all").lower().split())
        if media not in ("all", "screen"):  # for some screens only, or for print
            if "print" not in media:
                nested.append(css)
            continue
        if "@" in css:
            nested.append(css)
        for selectors, body in _rules_with(_top_level(css), MAY_HIDE_OR_SHOW):
            if not (_HIDES.search(body) and hides(declarations(body))):
                others.append((selectors, body))
                continue
            for selector in selectors.split(","):
                selector = selector.strip()
                sel = _compound(selector) if ":" not in selector else None
                if sel is not None:
                    hide.add(sel)
    return hide, others, nested


def nested_rules(
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


def show_rules(
    rules: list[tuple[str, str]], hidden: list[tuple[HtmlElement, tuple[set[str], str | None]]]
) -> Rules:
    """Of `rules`, those that show again (and do not hide), each by the last compound of its
    selectors (`.js .tab.active` shows `.tab.active`), so a doubt keeps the text; only those
    whose selectors name a class, id or tag of a `hidden` element (none other can show one).
    """
    names = {name for _el, (classes, el_id) in hidden for name in (*classes, el_id) if name}
    tags = {str(el.tag) for el, _key in hidden}
    show = Rules()
    for selectors, body in rules:
        # (A compound's tag, classes and id are whole words of the selectors.)
        words = set(_WORDS.findall(selectors))
        if names.isdisjoint(words) and tags.isdisjoint(w.lower() for w in words):
            continue
        decls = declarations(body)
        if not hides(decls) and shows(decls):
            for selector in selectors.split(","):
                sel = _compound(_COMBINATOR.split(selector.strip().split(":")[0])[-1])
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
    for at in _starts(low, found):
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


def _starts(low: str, found: re.Pattern[str]) -> Iterator[int]:
    """Where the matches `found.finditer(low)` finds start, for `MAY_HIDE` or
    `MAY_HIDE_OR_SHOW`: each starts with one of `_PROPERTIES`, found by `str.find`."""
    places = []
    for word in _PROPERTIES:
        at = low.find(word)
        while at != -1:
            places.append(at)
            at = low.find(word, at + 1)
    end = 0
    for at in sorted(places):
        if at >= end and (m := found.match(low, at)) is not None:
            end = m.end()
            yield at
