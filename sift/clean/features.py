"""What the combination reads of each block: one row of numbers per block (`FEATURES` names
the columns), from the block itself, its neighbours, the page, and what each extractor kept.

"Kept" is measured by word n-grams (3-grams; the whole block where it has fewer words): the
share of a block's n-grams found in trafilatura's markdown (`in_t`) and in resiliparse's
main-content text (`in_r`). The same measure against a page's true main content labels the
blocks for fitting (`bench/fit_combiner.py`), so the model learns what a person kept.
"""

from __future__ import annotations

import math
import re
from collections import Counter
from collections.abc import Iterable

from sift.clean.blocks import ANCESTOR_TAGS, CLASS_WORDS, Block

_WORD = re.compile(r"[^\W_]+")
# (link text may hold escaped brackets)
_MD_LINK = re.compile(r"!?\[((?:\\.|[^\]\\])*)\]\([^)\s]*\)")
_PUNCT = re.compile(r"[.,;:!?]")
_TAG_GROUPS = ("p", "div", "li", "h", "cell", "pre", "dt", "other")
_WINDOW = 3
N = 3

BLOCK_FEATURES = (
    "log_words",
    "log_chars",
    "link_share",
    "punct_per_word",
    "ends_sentence",
    "digit_share",
    "capital_share",
    "position",
    "char_position",
    "depth",
    "heading_level",
    "list_depth",
    "repeats",
    "in_t",
    "in_r",
)
NEIGHBOUR_FEATURES = ("prev_in_t", "next_in_t", "prev_in_r", "next_in_r", "near_in_t", "near_in_r")
PAGE_FEATURES = (
    "page_t",
    "page_r",
    "page_words",
    "t_share",
    "r_share",
    "page_blocks",
    "page_links",
)
FEATURES = (
    *BLOCK_FEATURES,
    *NEIGHBOUR_FEATURES,
    *PAGE_FEATURES,
    *(f"tag_{g}" for g in _TAG_GROUPS),
    *(f"in_{t}" for t in ANCESTOR_TAGS),
    *(f"class_{name}" for name, _ in CLASS_WORDS),
    *(f"own_{name}" for name, _ in CLASS_WORDS),
)


def words(text: str) -> list[str]:
    """The lower-cased words of a text, link targets and markup left out."""
    return _WORD.findall(_MD_LINK.sub(r"\1", text).lower())


class Grams:
    """The word 1-, 2- and 3-grams of a text, for "how much of this block is in that text"."""

    def __init__(self, tokens: list[str]) -> None:
        self.sets: tuple[set[tuple[str, ...]], ...] = tuple(
            {tuple(tokens[i : i + n]) for i in range(len(tokens) - n + 1)} for n in range(1, N + 1)
        )
        self.count = len(tokens)

    def share(self, tokens: list[str]) -> float:
        """The share of `tokens`' n-grams (n = 3, fewer for a shorter block) found here."""
        if not tokens:
            return 0.0
        n = min(N, len(tokens))
        grams = [tuple(tokens[i : i + n]) for i in range(len(tokens) - n + 1)]
        found = self.sets[n - 1]
        return sum(g in found for g in grams) / len(grams)


def _tag_group(tag: str) -> int:
    if tag in ("p", "div", "li", "pre"):
        return _TAG_GROUPS.index(tag)
    if len(tag) == 2 and tag[0] == "h" and tag[1].isdigit():
        return 3
    if tag in ("td", "th", "tr", "caption"):
        return 4
    if tag in ("dt", "dd"):
        return 6
    return 7


def _bits(flags: int, count: int) -> list[float]:
    return [float(flags >> i & 1) for i in range(count)]


def _own(
    block: Block, tokens: list[str], position: tuple[float, float], repeats: int
) -> list[float]:
    text = block.text
    n = max(1, len(tokens))
    return [
        math.log1p(len(tokens)),
        math.log1p(len(text)),
        block.link_chars / max(1, len(text)),
        len(_PUNCT.findall(text)) / n,
        float(text[-1] in ".!?:\"'”)"),
        sum(map(str.isdigit, text)) / max(1, len(text)),
        len([w for w in text.split() if w[0].isupper()]) / n,
        position[0],
        position[1],
        float(block.depth),
        float(block.heading_level),
        float(block.list_depth),
        float(repeats),
    ]


def _near(values: list[float], i: int) -> float:
    window = values[max(0, i - _WINDOW) : i + _WINDOW + 1]
    return sum(window) / len(window)


def rows(blocks: list[Block], tokens: list[list[str]], t: Grams, r: Grams) -> list[list[float]]:
    """The feature rows of a page's blocks (`tokens`: each block's words), in `FEATURES`' order."""
    in_t = [t.share(tok) for tok in tokens]
    in_r = [r.share(tok) for tok in tokens]
    total_words = sum(len(tok) for tok in tokens) or 1
    total_chars = sum(len(b.text) for b in blocks) or 1
    page = [
        math.log1p(t.count),
        math.log1p(r.count),
        math.log1p(total_words),
        t.count / total_words,
        r.count / total_words,
        math.log1p(len(blocks)),
        sum(b.link_chars for b in blocks) / total_chars,
    ]
    repeats = Counter(b.text for b in blocks)
    out: list[list[float]] = []
    seen_chars = 0
    last = max(1, len(blocks) - 1)
    for i, block in enumerate(blocks):
        position = (i / last, seen_chars / total_chars)
        seen_chars += len(block.text)
        tag = [0.0] * len(_TAG_GROUPS)
        tag[_tag_group(block.tag)] = 1.0
        out.append(
            [
                *_own(block, tokens[i], position, repeats[block.text]),
                in_t[i],
                in_r[i],
                *_neighbours(in_t, in_r, i),
                *page,
                *tag,
                *_bits(block.ancestors, len(ANCESTOR_TAGS)),
                *_bits(block.classes, len(CLASS_WORDS)),
                *_bits(block.own_classes, len(CLASS_WORDS)),
            ]
        )
    return out


def _neighbours(in_t: list[float], in_r: list[float], i: int) -> Iterable[float]:
    last = len(in_t) - 1
    return (
        in_t[i - 1] if i else 0.0,
        in_t[i + 1] if i < last else 0.0,
        in_r[i - 1] if i else 0.0,
        in_r[i + 1] if i < last else 0.0,
        _near(in_t, i),
        _near(in_r, i),
    )
