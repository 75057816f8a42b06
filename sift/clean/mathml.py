"""Presentation MathML as LaTeX, for a formula that carries no TeX source of its own.

KaTeX and Wikipedia put the source in an `application/x-tex` annotation; MathML written by hand
or by other tools has none, and its bare text runs scripts and fractions together (`a²` read as
`a2`). The common layout elements are written as their LaTeX; any other element gives its
children's LaTeX in order, so nothing on the page is lost.
"""

from __future__ import annotations

import re

from lxml.html import HtmlElement

_COMMAND_END = re.compile(r"\\[a-zA-Z]+$")  # a command the next letter would run into

# Operators and identifiers a page writes as characters, as the commands LaTeX reads.
_SYMBOLS = {
    "∑": r"\sum",
    "∏": r"\prod",
    "∫": r"\int",
    "∞": r"\infty",
    "≤": r"\leq",
    "≥": r"\geq",
    "≠": r"\neq",
    "±": r"\pm",
    "×": r"\times",
    "·": r"\cdot",
    "→": r"\to",
    "∈": r"\in",
    "⁡": "",  # the invisible function application
    "⁢": "",  # the invisible times
    "π": r"\pi",
    "α": r"\alpha",
    "β": r"\beta",
    "θ": r"\theta",
    "λ": r"\lambda",
    "μ": r"\mu",
    "σ": r"\sigma",
}
# Element → LaTeX template over its first children's LaTeX.
_LAYOUT = {
    "msup": "{}^{}",
    "msub": "{}_{}",
    "msubsup": "{}_{}^{}",
    "mfrac": r"\frac{{{}}}{{{}}}",
    "mroot": r"\sqrt[{}]{{{}}}",  # (its children are base, index: swapped below)
    "mover": r"\overset{{{}}}{{{}}}",  # (base, over: swapped below)
    "munder": r"\underset{{{}}}{{{}}}",
    "munderover": "{}_{}^{}",
}
_SWAPPED = frozenset({"mroot", "mover", "munder"})
_SCRIPTED = frozenset({"msup", "msub", "msubsup", "munderover"})
_SKIPPED = frozenset({"annotation", "annotation-xml", "mspace", "mprescripts", "none"})


def _token(el: HtmlElement) -> str:
    text = " ".join((el.text or "").split())
    out = "".join(_SYMBOLS.get(ch, ch) for ch in text)
    if el.tag == "mtext" and out:
        return rf"\text{{{out}}}"
    return out + " " if _COMMAND_END.search(out) else out


def _group(latex: str) -> str:
    """A script's base or script as one LaTeX group: braced unless a single character."""
    latex = latex.strip()
    return latex if len(latex) == 1 else f"{{{latex}}}"


def to_latex(el: HtmlElement) -> str:
    """The LaTeX of a MathML element and what it holds."""
    tag = el.tag if isinstance(el.tag, str) else ""
    tag = tag.rsplit("}", 1)[-1]  # (a namespaced tag, as XHTML parsers give it)
    if tag in _SKIPPED:
        return ""
    if tag in ("mi", "mn", "mo", "mtext", "ms"):
        return _token(el)
    parts = [to_latex(child) for child in el]
    if tag == "msqrt":
        return rf"\sqrt{{{''.join(parts)}}}"
    if tag == "semantics":
        return parts[0] if parts else ""
    if tag == "mfenced":
        opened, closed = el.get("open", "("), el.get("close", ")")
        return rf"\left{opened}{el.get('separators', ',')[:1].join(parts)}\right{closed}"
    layout = _LAYOUT.get(tag)
    need = layout.count("{}") if layout else 0
    if layout and len(parts) >= need:
        args = parts[:need]
        if tag in _SCRIPTED:
            args = [_group(a) for a in args]
        if tag in _SWAPPED:
            args = [args[1], args[0]]
        return layout.format(*args)
    return "".join(parts)
