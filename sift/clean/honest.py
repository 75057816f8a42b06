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

SAID_MAX = 10  # hidden instructions reported, at most (as the answer's `injection`)
EXCERPT_MAX = 120


@dataclass(frozen=True)
class Removed:
    """What `prepare` removed, in characters of text; and the page for the extractor
    (`marked.Split`), None where it is the prepared tree."""

    hidden: int
    consent: int
    split: marked.Split | None = None
    said: tuple[str, ...] = ()  # hidden elements that address an AI reader, as excerpts


def prepare(tree: HtmlElement) -> Removed:
    """Remove hidden text, then consent banners, from `tree` in place; the extractor's copy of
    the page keeps the hidden text, marked (`marked.py`), and loses the same banners: they are
    found once, on the page as served, and counted by their text a person sees. The page's
    id and class values, which both passes read and neither changes, are read once."""
    attrs = consent.attributes(tree)
    hidden = marked.find_hidden(tree, attrs)
    said = hidden_instructions(hidden.elements)
    if not hidden.elements and not hidden.revealed:
        return Removed(hidden.removed, consent.strip_consent(tree, attrs=attrs), said=said)
    banners = consent.strip_consent(tree, marked.shown_chars, attrs)
    return Removed(hidden.removed, banners, marked.split(tree, hidden), said)


def hidden_instructions(elements: list[HtmlElement]) -> tuple[str, ...]:
    """Excerpts of the hidden elements whose text addresses an AI reader (a prompt hidden from
    people is the commonest injection): the first `SAID_MAX`, each one line of at most
    `EXCERPT_MAX` characters. Other hidden text is only counted (`hidden_removed`)."""
    said: list[str] = []
    for element in elements:
        text = " ".join(marked.unmarked(element.text_content()).split())
        if text and injection.find(text):
            said.append(text if len(text) <= EXCERPT_MAX else text[: EXCERPT_MAX - 1] + "…")
            if len(said) == SAID_MAX:
                break
    return tuple(said)


def finish(result: CleanResult, html: str, tree: HtmlElement, removed: Removed) -> CleanResult:
    """`result` with the page's classification, `hidden_removed` and the injection flag."""
    page = classify.classify(html, tree, result.title, result.text, removed.consent)
    said = injection.find(result.text)
    return msgspec.structs.replace(
        result,
        page=page.kind,
        served=page.what or None,
        hint=page.hint or result.hint,
        hidden_removed=removed.hidden,
        hidden_said=removed.said,
        warning=injection.flag(result.text, said),
        said=tuple(said),
    )
