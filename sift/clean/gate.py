"""Per page, whether the combination's answer replaces trafilatura's.

The block model (`combine.py`) gains on most pages nobody tuned for, but on some (news pages
where trafilatura is already near right) it drops or adds blocks and loses. A second, small
model reads the page as a whole (how sure the block model is, how far its answer moved from
trafilatura's, the page's totals) and predicts the combination's gain in word F1 over
trafilatura's answer; where it predicts none, trafilatura's answer stands. A second one, of
the same rows for the combination at a lower block threshold, says where that more inclusive
answer gains more (`combine.chosen`). They are fitted by `bench/fit_combiner.py` on answers of
block models that had not seen the page (stacking), and ship in the same file
(`model/combiner.json`, its `gates`).
"""

from __future__ import annotations

import numpy as np
import numpy.typing as npt

from sift.clean.features import FEATURES, PAGE_FEATURES

GATE_FEATURES = (
    "mean_p",  # the block model's probability, by words
    "kept",  # the share of words it keeps
    "unsure",  # the share of words it gives between 0.2 and 0.8
    "differs",  # the share of words on which it and trafilatura differ
    "dropped",  # ... that trafilatura kept and it drops
    "added",  # ... that it keeps and trafilatura left out
    "log_ratio",  # log of the answer's words over trafilatura's
    "lost",  # the share of trafilatura's distinct words the answer lacks
    "new",  # the share of the answer's distinct words trafilatura lacks
    *PAGE_FEATURES,
)
_IN_T = FEATURES.index("in_t")  # columns of `features.FEATURES`
_PAGE = slice(FEATURES.index(PAGE_FEATURES[0]), FEATURES.index(PAGE_FEATURES[-1]) + 1)


def row(
    x: npt.NDArray[np.float64],
    sizes: npt.NDArray[np.float64],
    proba: npt.NDArray[np.float64],
    threshold: float,
    markdown: str,
    text: str,
) -> list[float]:
    """The gate's row of a page: `x` its blocks' feature rows, `sizes` their words, `proba`
    the block model's probabilities; `markdown` trafilatura's answer, `text` the combination's."""
    if not len(sizes) or not sizes.sum():
        x, sizes, proba = np.zeros((1, x.shape[1])), np.ones(1), np.zeros(1)
    total = sizes.sum()
    kept, in_t = proba >= threshold, x[:, _IN_T] >= 0.5
    theirs, ours = markdown.split(), text.split()
    t_words, a_words = set(theirs), set(ours)
    return [
        float(proba @ sizes / total),
        float(kept @ sizes / total),
        float(((proba > 0.2) & (proba < 0.8)) @ sizes / total),
        float((kept != in_t) @ sizes / total),
        float((in_t & ~kept) @ sizes / total),
        float((kept & ~in_t) @ sizes / total),
        float(np.log1p(len(ours)) - np.log1p(len(theirs))),
        len(t_words - a_words) / (len(t_words) or 1),
        len(a_words - t_words) / (len(a_words) or 1),
        *(float(v) for v in x[0, _PAGE]),
    ]
