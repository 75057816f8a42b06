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
    if "](" in text:  # (no link without it: a block's text seldom has one)
        text = _MD_LINK.sub(r"\1", text)
    return _WORD.findall(text.lower())


_JOIN = 2**60  # codes stay under this (times 3 plus the length: within int64)


def _join(x: npt.NDArray[np.int64], y: npt.NDArray[np.int64], base: int) -> npt.NDArray[np.int64]:
    """A code for each pair (x, y) (y under `base`): distinct pairs, distinct codes; x ranked
    first where its codes would overflow (a page of millions of distinct words)."""
    if len(x) and int(x.max()) * base + base >= _JOIN:
        x = np.unique(x, return_inverse=True)[1].astype(np.int64)
    return x * base + y


def spans(starts: npt.NDArray[np.int64], sizes: npt.NDArray[np.int64]) -> npt.NDArray[np.int64]:
    """The indices `starts[i]` to `starts[i] + sizes[i]` (excluded) for every i, in order."""
    first = np.cumsum(sizes) - sizes
    return np.repeat(starts - first, sizes) + np.arange(int(sizes.sum()))


class Grams:
    """The word 1-, 2- and 3-grams of a page's texts (its blocks' words first, then the texts
    weighed against them) as integer codes of one vocabulary: an n-gram has one code wherever
    it is, and n-grams of different words or lengths different ones. Matching codes in numpy
    costs a fraction of matching tuples of words in Python sets.

    A block's n-grams are its 3-grams, fewer words for a shorter block (one n-gram), repeats
    kept; `share` says how many of them a text holds among its own n-grams of any length."""

    def __init__(self, blocks: list[list[str]], texts: list[list[str]]) -> None:
        seqs = [*blocks, *texts]
        self.lengths = np.array([len(t) for t in seqs], dtype=np.int64)
        self.starts = np.concatenate([[0], np.cumsum(self.lengths)]).astype(np.int64)
        flat = list(itertools.chain.from_iterable(seqs))
        vocab = {w: i for i, w in enumerate(dict.fromkeys(flat), 1)}
        ids = np.fromiter(map(vocab.__getitem__, flat), np.int64, len(flat))
        base, owner = len(vocab) + 1, np.repeat(np.arange(len(seqs)), self.lengths)
        self.codes = np.full((N + 1, len(flat)), -1, dtype=np.int64)  # row n: from each word
        raw = ids
        for n in range(1, N + 1):
            if n > 1:
                raw = _join(raw[:-1], ids[n - 1 :], base)
            valid = owner[: len(raw)] == owner[n - 1 :]
            self.codes[n, : len(raw)] = np.where(valid, raw * N + (n - 1), -1)
        self.blocks = len(blocks)
        self.of_block, self.owner, self.sizes = self.grams(np.arange(len(blocks)))

    def grams(
        self, which: npt.NDArray[np.intp], fewer: int = 0
    ) -> tuple[npt.NDArray[np.int64], npt.NDArray[np.intp], npt.NDArray[np.int64]]:
        """The n-grams of the texts `which` (n = 3, fewer for a shorter one; `fewer` words
        fewer still, at least one), in order: their codes, which of `which` each is from,
        and how many each has."""
        lengths = self.lengths[which]
        n = np.maximum(np.minimum(lengths, N) - fewer, 1)
        sizes = np.where(lengths > 0, lengths - n + 1, 0)
        owner = np.repeat(np.arange(len(which)), sizes)
        return self.codes[n[owner], spans(self.starts[which], sizes)], owner, sizes

    def count(self, text: int) -> int:
        """The words of the `text`th text."""
        return int(self.lengths[self.blocks + text])

    def text_codes(self, text: int) -> npt.NDArray[np.int64]:
        """Every 1-, 2- and 3-gram code of the `text`th text, sorted, once each."""
        start, end = self.starts[self.blocks + text], self.starts[self.blocks + text + 1]
        found = np.unique(self.codes[1:, start:end])
        return found[found >= 0]

    def share(self, text: int) -> npt.NDArray[np.float64]:
        """For each block, the share of its n-grams the `text`th text holds."""
        hits = np.isin(self.of_block, self.text_codes(text))
        counts = np.bincount(self.owner, weights=hits, minlength=self.blocks)
        out: npt.NDArray[np.float64] = np.zeros(self.blocks)
        np.divide(counts, self.sizes, out=out, where=self.sizes > 0)
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


def rows(blocks: list[Block], tokens: list[list[str]], grams: Grams) -> npt.NDArray[np.float64]:
    """The feature rows of a page's blocks (`tokens`: each block's words; `grams`: theirs,
    then trafilatura's answer's and resiliparse's), in `FEATURES`' order."""
    x = np.zeros((len(blocks), len(FEATURES)))
    if not blocks:
        return x
    sizes = np.array([len(tok) for tok in tokens])
    in_t, in_r = grams.share(0), grams.share(1)
    t_count, r_count = grams.count(0), grams.count(1)
    _own(blocks, sizes.astype(np.float64), x)
    x[:, 13], x[:, 14] = in_t, in_r
    x[1:, 15], x[:-1, 16], x[1:, 17], x[:-1, 18] = in_t[:-1], in_t[1:], in_r[:-1], in_r[1:]
    x[:, 19], x[:, 20] = _near(in_t), _near(in_r)
    total_words = int(sizes.sum()) or 1
    total_chars = sum(len(b.text) for b in blocks) or 1
    x[:, 21:28] = [
        math.log1p(t_count),
        math.log1p(r_count),
        math.log1p(total_words),
        t_count / total_words,
        r_count / total_words,
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
