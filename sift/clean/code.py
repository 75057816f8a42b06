"""Code blocks and math as the page has them, through an extractor that flattens both.

trafilatura writes a one-line `<pre><code>` as inline code, a bare `<pre>` as a paragraph,
drops the language a page names, a code listing in a `<figure>` (mdBook's) and MathJax's
`<script type="math/tex">` sources. So,
before it reads the page, each `<pre>` (its text whole: whitespace kept, highlighting spans
joined) is set aside and a placeholder word stands in its place; each math source becomes its
LaTeX between `$` (`$$` for display math). After extraction each placeholder the extractor
kept becomes a fenced block with the page's language (`class="language-x"`, `lang-x`,
`highlight-x`, `brush: x`, `data-lang`; Discourse's `lang-auto` names none), on lines of its
own even where trafilatura wrote it inline (in a list item), and the page is put back as it was.
"""

from __future__ import annotations

import hashlib
import re
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field

import lxml.etree
from lxml.html import HtmlElement

from sift.clean import grid, mathml

_LANG = re.compile(
    r"(?:^|\s)(?:(?:language|lang|highlight-source|highlight)-|brush:\s*|sourceCode\s+)"
    r"([a-z][\w+#.-]*)",
    re.I,
)
_NOT_LANG = frozenset(
    {"none", "auto", "text", "plain", "plaintext", "nohighlight", "source", "default"}
)
_WORD = r"SIFTCODE[0-9a-f]{12}Q"
# A placeholder on a line of its own, as inline code or in a fence of the extractor's.
_PLACEHOLDER = re.compile(rf"^(?:```\n)?[ `]*({_WORD})[ `]*(?:\n```)?$", re.M)
_INLINE = re.compile(rf"`?({_WORD})`?")
_TABLE_ROW = re.compile(r"^\s*\|")
# (Compiled once: `el.xpath(text)` compiles its expression at every call. An attribute's value
# is tested on the attribute, then its element taken: faster than a predicate on each element.)
_TEX_SCRIPTS = lxml.etree.XPath("//script/@type[starts-with(., 'math/tex')]/..")
_MATH_SPANS = lxml.etree.XPath("//span/@class[. = 'sift-math']/..")
_CODE_FIGURES = lxml.etree.XPath("//figure[descendant::pre]")


@dataclass
class Stash:
    """The code blocks set aside, by placeholder; how to put the page back."""

    code: dict[str, tuple[str, str]] = field(default_factory=dict)  # word → (language, text)
    undo: list[tuple[HtmlElement, str | None, list[HtmlElement]]] = field(default_factory=list)
    figures: list[HtmlElement] = field(default_factory=list)  # made `<div>`s while it reads


def language(pre: HtmlElement) -> str:
    """The language the page names for a code block, on it, its `<code>`, or its parents."""
    near = [pre, *pre.iterchildren("code"), *list(pre.iterancestors())[:2]]
    for el in near:
        if el.get("data-lang"):
            return str(el.get("data-lang")).strip().lower()
        m = _LANG.search(el.get("class") or "")
        if m and m.group(1).lower() not in _NOT_LANG:
            return m.group(1).lower()
    return ""


def _set_aside(root: HtmlElement, stash: Stash) -> None:
    for span in _MATH_SPANS(root):
        tex = span.text or ""
        word = "SIFTCODE" + hashlib.sha1(tex.encode()).hexdigest()[:12] + "Q"
        stash.code[word] = ("$", tex)
        stash.undo.append((span, span.text, []))
        span.text = word
    for pre in list(root.iter("pre")):
        if any(a.tag == "pre" for a in pre.iterancestors()):
            continue
        text = pre.text_content().strip("\n")
        if not text.strip():
            continue
        word = "SIFTCODE" + hashlib.sha1(text.encode()).hexdigest()[:12] + "Q"
        stash.code[word] = (language(pre), text)
        stash.undo.append((pre, pre.text, list(pre)))
        for child in list(pre):
            pre.remove(child)
        pre.text = word
    # trafilatura drops a `<figure>` whole when it leaves images out (it spares one that holds
    # a table): a code listing in one (mdBook's) would go with it.
    figures = next(root.getroottree().getroot().iter("figure"), None) is not None
    for figure in _CODE_FIGURES(root) if figures else ():  # (most pages have none)
        figure.tag = "div"
        stash.figures.append(figure)


def _math_tex(el: HtmlElement) -> str:
    """The TeX of a MathML element: its `application/x-tex` annotation, else its layout as
    LaTeX (`mathml.py`)."""
    for note in el.iter("annotation"):
        if "tex" in (note.get("encoding") or ""):
            return (note.text or "").strip()
    return " ".join(mathml.to_latex(el).split())


def _math_outer(el: HtmlElement) -> tuple[HtmlElement, bool]:
    """The element that stands for a formula on the page (KaTeX's and MathJax's wrappers hold
    a second, visual copy of it), and whether it is display math."""
    outer, display = el, el.get("display") == "block"
    for a in el.iterancestors():
        cls = a.get("class") or ""
        if "katex" in cls or a.tag in ("mjx-container", "mjx-assistive-mml"):
            outer = a
            display = display or "display" in cls or a.get("display") == "true"
        elif a.tag not in ("span", "mjx-assistive-mml"):
            break
    return outer, display


def math_sources(root: HtmlElement) -> None:
    """Each formula (MathML, KaTeX, MathJax's TeX scripts) as one `<span class="sift-math">`
    holding its LaTeX between `$` (`$$` for display math)."""
    found: list[tuple[HtmlElement, str, bool]] = []
    for script in _TEX_SCRIPTS(root):
        found.append((script, (script.text or "").strip(), "display" in (script.get("type") or "")))
    for math in root.iter("math"):
        outer, display = _math_outer(math)
        found.append((outer, _math_tex(math), display))
    for el, tex, display in found:
        parent = el.getparent()
        if not tex or parent is None or (el.tag == "span" and el.get("class") == "sift-math"):
            continue
        span = el.makeelement("span", {"class": "sift-math"})
        span.text = f"$${tex}$$" if display else f"${tex}$"
        span.tail = el.tail
        parent.replace(el, span)


def structure(*roots: HtmlElement) -> None:
    """Before extraction: formulas as their LaTeX, merged table cells repeated (`grid.py`)."""
    for root in dict.fromkeys(roots):
        math_sources(root)
        grid.flatten(root)


@contextmanager
def set_aside(*roots: HtmlElement) -> Iterator[Stash]:
    """The `<pre>` blocks of `roots` set aside while the extractor reads them."""
    stash = Stash()
    for root in dict.fromkeys(roots):
        _set_aside(root, stash)
    try:
        yield stash
    finally:
        for pre, text, children in stash.undo:
            pre.text = text
            for child in children:
                pre.append(child)
        for figure in stash.figures:
            figure.tag = "figure"


def fence(lang: str, text: str) -> str:
    """`text` as a fenced code block, the fence longer than any run of backticks inside."""
    runs = [len(m) for m in re.findall(r"`{3,}", text)]
    ticks = "`" * max(3, max(runs, default=0) + 1)
    return f"{ticks}{lang}\n{text}\n{ticks}"


def put_back(markdown: str, stash: Stash) -> str:
    """Each placeholder the extractor kept (on a line of its own) as its fenced code block."""
    if not stash.code:
        return markdown

    def block(m: re.Match[str]) -> str:
        lang, text = stash.code.get(m.group(1), ("", m.group(1)))
        return f"\n{text}\n" if lang == "$" else f"\n{fence(lang, text)}\n"

    def inline(m: re.Match[str]) -> str:
        lang, text = stash.code.get(m.group(1), ("", ""))
        return text if lang == "$" else f"`{' '.join(text.split())}`"

    lines = _PLACEHOLDER.sub(block, markdown).split("\n")
    return "\n".join(_INLINE.sub(inline, _break_out(line, stash)) for line in lines)


def _break_out(line: str, stash: Stash) -> str:
    """A line where trafilatura wrote a `<pre>` inline among other text (one inside a list
    item) broken around it, the block fenced on lines of its own; in a table row (where a
    fence would end the table) and for math it stays inline."""
    if "SIFTCODE" not in line or _TABLE_ROW.match(line):
        return line
    parts = _INLINE.split(line)  # text, word, text, word, …, text
    out = [parts[0]]
    for word, after in zip(parts[1::2], parts[2::2], strict=True):
        lang, text = stash.code.get(word, ("$", word))
        if lang == "$":
            out[-1] += word + after
            continue
        out[-1] = out[-1].rstrip()
        out += [fence(lang, text), after.lstrip()]
    return "\n\n".join(part for part in out if part.strip())
