"""What the combination reads of each block: one row of numbers per block (`FEATURES` names
the columns), from the block itself, its neighbours, the page, and what each extractor kept.

"Kept" is measured by word n-grams (3-grams; the whole block where it has fewer words): the
share of a block's n-grams found in trafilatura's markdown (`in_t`) and in resiliparse's
main-content text (`in_r`). The same measure against a page's true main content labels the
blocks for fitting (`bench/fit_combiner.py`), so the model learns what a person kept.
"""

from __future__ import annotations

import itertools
import math
import re
from collections import Counter

import numpy as np
import numpy.typing as npt

from sift.clean.blocks import ANCESTOR_TAGS, CLASS_WORDS, Block

_WORD = re.compile(r"[^\W_]+")
# (link text may hold escaped brackets)
_MD_LINK = re.compile(r"!?\[((?:\\.|[^\]\\])*)\]\([^)\s]*\)")
_PUNCT = ".,;:!?"
# ASCII capitals as "U": a word of ASCII text (its spaces single) that begins with one.
_CAPITALS = bytes.maketrans(bytes(range(65, 91)), b"U" * 26)
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


Gram = tuple[str, ...]


def grams(tokens: list[str]) -> list[Gram]:
    """A block's word n-grams (n = 3, fewer for a shorter block), in order, repeats kept."""
    n = min(N, len(tokens))
    return list(zip(*(tokens[k:] for k in range(n)), strict=False)) if n else []


class Grams:
    """The word 1-, 2- and 3-grams of a text, for "how much of this block is in that text"
    (those of each length made when first asked for)."""

    def __init__(self, tokens: list[str]) -> None:
        self.tokens = tokens
        self.sets: dict[int, set[Gram]] = {}
        self.count = len(tokens)

    def of(self, n: int) -> set[Gram]:
        """The text's n-grams."""
        if n not in self.sets:
            self.sets[n] = set(zip(*(self.tokens[k:] for k in range(n)), strict=False))
        return self.sets[n]

    def share(self, tokens: list[str]) -> float:
        """The share of `tokens`' n-grams (n = 3, fewer for a shorter block) found here."""
        found = grams(tokens)
        return sum(map(self.of(len(found[0])).__contains__, found)) / len(found) if found else 0.0

    def shares(self, block_grams: list[list[Gram]]) -> npt.NDArray[np.float64]:
        """`share` of every block (given its `grams`), counted in one pass over them all."""
        sizes = np.array([len(g) for g in block_grams])
        lengths = {len(g[0]) for g in block_grams if g}
        known = set().union(*map(self.of, lengths))  # (n-grams of one length match no other)
        every = itertools.chain.from_iterable(block_grams)
        hits = np.fromiter(map(known.__contains__, every), bool)
        where = np.repeat(np.arange(len(block_grams)), sizes)
        counts = np.bincount(where, weights=hits, minlength=len(block_grams))
        out: npt.NDArray[np.float64] = np.zeros(len(sizes))
        np.divide(counts, sizes, out=out, where=sizes > 0)
        return out


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


def _digits_capitals(text: str) -> tuple[int, int]:
    """The characters of `text` that are digits, and its words (white space collapsed) that
    begin with a capital; ASCII text counted in C (str.isdigit holds for no other ASCII)."""
    if text.isascii():
        raw = text.encode()
        capitals = raw.translate(_CAPITALS)
        return len(raw) - len(raw.translate(None, b"0123456789")), capitals.count(
            b" U"
        ) + capitals.startswith(b"U")
    return sum(map(str.isdigit, text)), len([w for w in text.split() if w[0].isupper()])


def _own(blocks: list[Block], sizes: npt.NDArray[np.float64], x: npt.NDArray[np.float64]) -> None:
    """The columns of `BLOCK_FEATURES` but `in_t`, `in_r` (`sizes`: each block's words)."""
    texts = [b.text for b in blocks]
    chars = np.array([len(t) for t in texts], dtype=np.float64)
    n, per_char = np.maximum(sizes, 1), np.maximum(chars, 1)
    repeats = Counter(texts)
    total_chars = chars.sum() or 1
    x[:, 0] = [math.log1p(k) for k in sizes.astype(int)]
    x[:, 1] = [math.log1p(k) for k in chars.astype(int)]
    x[:, 2] = np.array([b.link_chars for b in blocks], dtype=np.float64) / per_char
    x[:, 3] = np.array([sum(map(t.count, _PUNCT)) for t in texts], dtype=np.float64) / n
    x[:, 4] = [t[-1] in ".!?:\"'”)" for t in texts]
    counted = np.array([_digits_capitals(t) for t in texts], dtype=np.float64).reshape(-1, 2)
    x[:, 5], x[:, 6] = counted[:, 0] / per_char, counted[:, 1] / n
    x[:, 7] = np.arange(len(blocks)) / max(1, len(blocks) - 1)
    x[:, 8] = (np.cumsum(chars) - chars) / total_chars
    x[:, 9] = [b.depth for b in blocks]
    x[:, 10] = [b.heading_level for b in blocks]
    x[:, 11] = [b.list_depth for b in blocks]
    x[:, 12] = [repeats[t] for t in texts]


def _near(values: npt.NDArray[np.float64]) -> npt.NDArray[np.float64]:
    """The mean of each value's window (`_WINDOW` either side), summed left to right as a
    Python sum would (the zeros padding the ends add nothing, exactly)."""
    n = len(values)
    padded = np.concatenate([np.zeros(_WINDOW), values, np.zeros(_WINDOW)])
    total = padded[0:n].copy()
    for k in range(1, 2 * _WINDOW + 1):
        total += padded[k : k + n]
    index = np.arange(n)
    mean: npt.NDArray[np.float64] = total / (
        np.minimum(index + _WINDOW + 1, n) - np.maximum(index - _WINDOW, 0)
    )
    return mean


def rows(
    blocks: list[Block],
    tokens: list[list[str]],
    t: Grams,
    r: Grams,
    block_grams: list[list[Gram]] | None = None,
) -> npt.NDArray[np.float64]:
    """The feature rows of a page's blocks (`tokens`: each block's words; `block_grams`
    their `grams`, made here when not given), in `FEATURES`' order."""
    x = np.zeros((len(blocks), len(FEATURES)))
    if not blocks:
        return x
    if block_grams is None:
        block_grams = [grams(tok) for tok in tokens]
    sizes = np.array([len(tok) for tok in tokens])
    in_t, in_r = t.shares(block_grams), r.shares(block_grams)
    _own(blocks, sizes.astype(np.float64), x)
    x[:, 13], x[:, 14] = in_t, in_r
    x[1:, 15], x[:-1, 16], x[1:, 17], x[:-1, 18] = in_t[:-1], in_t[1:], in_r[:-1], in_r[1:]
    x[:, 19], x[:, 20] = _near(in_t), _near(in_r)
    total_words = int(sizes.sum()) or 1
    total_chars = sum(len(b.text) for b in blocks) or 1
    x[:, 21:28] = [
        math.log1p(t.count),
        math.log1p(r.count),
        math.log1p(total_words),
        t.count / total_words,
        r.count / total_words,
        math.log1p(len(blocks)),
        sum(b.link_chars for b in blocks) / total_chars,
    ]
    column = 28
    x[np.arange(len(blocks)), column + np.array([_tag_group(b.tag) for b in blocks])] = 1.0
    column += len(_TAG_GROUPS)
    for flags, count in (
        ([b.ancestors for b in blocks], len(ANCESTOR_TAGS)),
        ([b.classes for b in blocks], len(CLASS_WORDS)),
        ([b.own_classes for b in blocks], len(CLASS_WORDS)),
    ):
        x[:, column : column + count] = np.array(flags)[:, None] >> np.arange(count) & 1
        column += count
    return x
