"""The honest-content passes around HTML extraction, in the order they must run.

Before extraction, what a person cannot see goes (`visible`), then consent banners
(`consent`), so neither can become the "main content". After it, the page is classified
(`classify`) and visible text addressed to an AI is flagged (`injection`); the findings travel
in the CleanResult (`page`, `served`, `hidden_removed`, `warning`).
"""

from __future__ import annotations

from dataclasses import dataclass

import msgspec
from lxml.html import HtmlElement

from sift.clean import classify, consent, injection, marked
from sift.clean.protocol import CleanResult


@dataclass(frozen=True)
class Removed:
    """What `prepare` removed, in characters of text; and the page for the extractor
    (`marked.Split`), None where it is the prepared tree."""

    hidden: int
    consent: int
    split: marked.Split | None = None


def prepare(tree: HtmlElement) -> Removed:
    """Remove hidden text, then consent banners, from `tree` in place; the extractor's copy of
    the page keeps the hidden text, marked (`marked.py`), and loses the same banners: they are
    found once, on the page as served, and counted by their text a person sees."""
    hidden = marked.find_hidden(tree)
    if not hidden.elements and not hidden.revealed:
        return Removed(hidden=hidden.removed, consent=consent.strip_consent(tree))
    banners = consent.strip_consent(tree, marked.shown_chars)
    return Removed(hidden.removed, banners, marked.split(tree, hidden))


def finish(result: CleanResult, html: str, tree: HtmlElement, removed: Removed) -> CleanResult:
    """`result` with the page's classification, `hidden_removed` and the injection flag."""
    page = classify.classify(html, tree, result.title, result.text, removed.consent)
    return msgspec.structs.replace(
        result,
        page=page.kind,
        served=page.what or None,
        hint=page.hint or result.hint,
        hidden_removed=removed.hidden,
        warning=injection.flag(result.text),
    )
