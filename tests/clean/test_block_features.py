"""The block features that say where a block stands against what each extractor kept
(`features.SPAN_FEATURES`, issue 34): its distance in blocks to the nearest kept block,
whether it lies between the first and last kept, its depth against theirs, its neighbours."""

from __future__ import annotations

import math

import pytest

from sift.clean.blocks import Block
from sift.clean.features import FEATURES, Grams, rows, words

TEXTS = [
    "Home About Contact",
    "The first paragraph of the story tells what happened",
    "Read more about this",
    "The second paragraph of the story says why it matters",
    "Copyright footer links here",
    "Privacy terms cookies settings",
]


def _rows(kept_t: list[int], kept_r: list[int]) -> dict[str, list[float]]:
    found = [
        Block(
            text=t,
            tag="h2" if i == 0 else "p",
            depth=3 + (i in kept_t),
            link_chars=0,
            ancestors=0,
            classes=0,
            own_classes=0,
            heading_level=2 if i == 0 else 0,
        )
        for i, t in enumerate(TEXTS)
    ]
    tokens = [words(t) for t in TEXTS]
    markdown = "\n\n".join(TEXTS[i] for i in kept_t)
    other = "\n".join(TEXTS[i] for i in kept_r)
    x = rows(found, tokens, Grams(tokens, [words(markdown), words(other)]))
    return {name: x[:, FEATURES.index(name)].tolist() for name in FEATURES}


def test_a_block_between_kept_blocks_is_inside_their_span_and_near_them():
    x = _rows(kept_t=[1, 3], kept_r=[1, 2, 3, 4])
    assert x["inside_t"] == [0, 1, 1, 1, 0, 0]
    assert x["gap_t"] == pytest.approx([math.log1p(d) for d in (1, 0, 1, 0, 1, 2)])
    assert x["inside_r"] == [0, 1, 1, 1, 1, 0]
    assert x["gap_r"][2] == 0 and x["gap_r"][5] == pytest.approx(math.log1p(1))
    assert x["depth_vs_t"] == [-1, 0, -1, 0, -1, -1]  # trafilatura's blocks are one deeper
    assert x["after_heading"] == [0, 1, 0, 0, 0, 0]
    assert x["prev_words"][1:] == x["log_words"][:-1]
    assert x["next_words"][:-1] == x["log_words"][1:]


def test_a_page_where_an_extractor_kept_nothing_is_far_from_everything():
    x = _rows(kept_t=[], kept_r=[3])
    assert x["inside_t"] == [0] * 6 and x["gap_t"] == pytest.approx([math.log1p(6)] * 6)
    assert x["inside_r"] == [0, 0, 0, 1, 0, 0]
