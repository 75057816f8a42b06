"""The page as the extractor sees it: hidden elements in place, their text marked.

Taking hidden elements out before extraction changes the page the extractor judges: its rules
weigh how much text and how many links a block holds, and prune a kind of block only where
enough text would be left. A page that hides a menu, a dialog or a tab panel then gets another
main content than the same page as served (measured on WCXB: product pages lost a fifth of
their score to it). So the extractor reads the page with its hidden elements in place, each
of their texts between two markers and their links without a target, and the marked text is
cut from what it answers. Hidden text never reaches the answer: where a marker is left alone
(the extractor lost its pair, or the page wrote one itself), the text is extracted again from
the page without its hidden elements. So it is where a third or more of what the extractor
answers was hidden: its choice of the main content was led by hidden text (a menu, a dialog,
a copy of the page for another screen), and what is left once that goes is a remnant.
"""

from __future__ import annotations

import copy
import re
from collections import Counter
from dataclasses import dataclass

import lxml.etree
from lxml.html import HtmlElement

from sift.clean import visible

# Printable (the extractor drops unprintable characters) and all but unused in real text.
OPEN, CLOSE = "\u2e28", "\u2e29"
# A marked part, with the emphasis or code marks around it when they hold nothing else.
_MARKED = re.compile(f"(?P<w>\\*\\*|\\*|__|_|~~|`)?{OPEN}[^{CLOSE}]*{CLOSE}(?(w)(?P=w))")
_PART = re.compile(f"{OPEN}[^{CLOSE}]*{CLOSE}")
_TEXT = re.compile(r"\S(?:.*\S)?", re.S)
_WORD = re.compile(r"\w")
_WORDS = re.compile(r"\w+")
_CUT = "\x00"  # where a marked part was (the extractor answers no control characters)
# A link whose text was all hidden (its target is gone too: `_mark`).
_EMPTY_LINK = re.compile(f"\\[\\s*{_CUT}\\s*\\](?:\\([^)]*\\))?")
_UNLINKED = lxml.etree.XPath(
    "descendant::text()[not(ancestor::a or ancestor::script or ancestor::style)]",
    smart_strings=False,
)
_SENTENCE = 10  # words
_LED = 3  # an answer whose hidden words are 1/_LED of its words or more was led by them


@dataclass(frozen=True)
class Hidden:
    """What `find_hidden` found: the characters of hidden text removed (comments too), the
    hidden elements (their text marked) and those the page reveals."""

    removed: int
    elements: list[HtmlElement]
    revealed: list[HtmlElement]


@dataclass(frozen=True)
class Split:
    """The page split by `split`: the characters of hidden text removed, the page for the
    extractor, and the words of what the page reveals (see the module's docstring)."""

    removed: int
    source: HtmlElement
    revealed: Counter[str]


def find_hidden(tree: HtmlElement, attrs: visible.Attributes | None = None) -> Hidden:
    """Remove comments from `tree`, find its hidden elements and what the page reveals
    (`visible`; `attrs`: the page's id and class values, if read), and mark the hidden
    elements' text in place (`_mark`)."""
    removed = visible.strip_comments(tree)
    hidden, revealed = visible.hidden_elements(tree, attrs)
    removed += sum(map(visible.text_chars, hidden))
    for el in hidden:
        _mark(el)
    return Hidden(removed, hidden, revealed)


def split(tree: HtmlElement, hidden: Hidden) -> Split:
    """The page for the extractor, a copy of `tree` as marked by `find_hidden` (`tree` itself
    when nothing was hidden); and `tree` without its hidden elements, what the page reveals
    shown. (A pass that removed a hidden element from `tree` before took it from both.)"""
    if not hidden.elements and not hidden.revealed:
        return Split(hidden.removed, tree, Counter())
    source = copy.deepcopy(tree)
    for el in hidden.elements:
        if el.getparent() is not None:
            el.drop_tree()  # (its tail text stays)
    for el in hidden.revealed:
        visible.unhide(el)
    words = _WORDS.findall(" ".join(map(_text, hidden.revealed)).lower())
    return Split(hidden.removed, source, Counter(words))


def shown_chars(el: HtmlElement) -> int:
    """The characters of text in `el` outside its marked parts, white space collapsed: what
    `visible.text_chars` counts of it once its hidden elements are gone."""
    return len(" ".join(_PART.sub("", el.text_content()).split()))


def shows(revealed: Counter[str], text: str) -> bool:
    """Whether `text` holds at least half of the words of what the page reveals, or misses
    under a sentence of them (a label, a tooltip: not worth reading the page again)."""
    total = sum(revealed.values())
    if total < _SENTENCE:
        return True
    kept = sum((revealed & Counter(_WORDS.findall(text.lower()))).values())
    return 2 * kept >= total or total - kept < _SENTENCE


def better(revealed: Counter[str], served: str, shown: str) -> bool:
    """Whether the reading with what the page reveals shown (`shown`) has more of the page
    than the reading as served (`served`): its words count where they are served or revealed.
    Showing a panel can make the extractor drop a visible block (a shop's highlights, when its
    specs tab is shown), and a longer reading that lost it is not a better one."""
    words = Counter(_WORDS.findall(shown.lower()))
    seen = Counter(_WORDS.findall(served.lower()))
    return sum((words & (seen + revealed)).values()) > sum(seen.values())


def _text(el: HtmlElement) -> str:
    """The text of `el` outside its links: a menu the page opens is not what it reveals."""
    return " ".join(_UNLINKED(el))


def unmarked(text: str) -> str:
    """`text` with the markers `_mark` put in taken out (its words kept)."""
    return text.replace(OPEN, "").replace(CLOSE, "")


def unmark(text: str) -> str | None:
    """`text` without its marked parts; None where a marker is left without its pair, or
    where the marked parts held a third of its words or more. A line left with no word once
    they go (the list item, heading or table row of a hidden element) goes with them."""
    if OPEN not in text and CLOSE not in text:
        return text
    shown = _EMPTY_LINK.sub(_CUT, _MARKED.sub(_CUT, text))
    if OPEN in shown or CLOSE in shown:
        return None
    if _LED * (len(text.split()) - len(shown.replace(_CUT, " ").split())) >= len(text.split()):
        return None
    lines = (line for line in shown.split("\n") if _CUT not in line or _WORD.search(line))
    return "\n".join(lines).replace(_CUT, "")


def _mark(el: HtmlElement) -> None:
    """Put each text of `el` (not its tail, which is visible) between the markers, and drop
    the targets of its links."""
    for node in el.iter():
        if node.text and not node.text.isspace():
            node.text = _wrap(node.text)
        if node is not el and node.tail and not node.tail.isspace():
            node.tail = _wrap(node.tail)
        if node.tag == "a":
            node.attrib.pop("href", None)


def _wrap(text: str) -> str:
    """The markers around the text, outside its leading and trailing white space (which the
    extractor reads as the space between words)."""
    return _TEXT.sub(lambda m: f"{OPEN}{m.group(0)}{CLOSE}", text, count=1)
