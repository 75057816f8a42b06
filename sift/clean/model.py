"""The fitted combination model: gradient-boosted trees in one small JSON file, read locally.

Fitted by `bench/fit_combiner.py` with scikit-learn's `HistGradientBoostingClassifier`
(BSD-3-Clause; a fitting-time dependency only, never imported here) and shipped as
`model/combiner.json` (package data, some hundred kilobytes): every tree's nodes as flat
arrays. Evaluating it needs only numpy (BSD-3-Clause, already a dependency of the stack):
all trees walk all blocks of a page at once, one array step per level (~1 ms for a page of a
thousand blocks), where a tree walk in Python would cost tens of milliseconds. Nothing is
downloaded at run time.
"""

from __future__ import annotations

import functools
import json
import math
from importlib import resources
from typing import Any

import numpy as np
import numpy.typing as npt

MODEL = "combiner.json"


class Trees:
    """An additive model of binary trees: the log-odds are `baseline` plus one leaf per tree."""

    def __init__(self, spec: dict[str, Any]) -> None:
        self.features: list[str] = spec["features"]
        self.threshold: float = spec["threshold"]
        self.baseline: float = spec["baseline"]
        self.meta: dict[str, Any] = spec.get("meta", {})
        # the page gates (`gate.py`): trees whose sum predicts the gain of the combination at
        # the gate's threshold; the first at the model's, the next at lower ones
        self.gates = [Trees(g) for g in spec.get("gates", ())]
        roots: list[int] = []
        feature: list[int] = []
        cut: list[float] = []
        child: list[int] = []
        value: list[float] = []
        for tree in spec["trees"]:
            roots.append(len(feature))
            for f, c, k, v in _level_order(tree, len(feature)):
                feature.append(f)
                cut.append(c)
                child.append(k)
                value.append(v)
        self.roots = np.array(roots, dtype=np.intp)
        self.feature = np.array(feature, dtype=np.intp)
        self.cut = np.array(cut, dtype=np.float64)
        self.child = np.array(child, dtype=np.intp)
        self.value = np.array(value, dtype=np.float64)
        self.depth = int(spec["depth"])

    def proba(self, rows: npt.ArrayLike) -> npt.NDArray[np.float64]:
        """The probability that each row's block is main content."""
        out: npt.NDArray[np.float64] = 1.0 / (1.0 + np.exp(-self.raw(rows)))
        return out

    def raw(self, rows: npt.ArrayLike) -> npt.NDArray[np.float64]:
        """The baseline plus each row's leaf of every tree: every tree walks every row at
        once, one level per step (a leaf is its own child, so walks end in place)."""
        x = np.asarray(rows, dtype=np.float64)
        if not x.size:
            return np.zeros(0)
        n, width = x.shape
        flat = x.ravel()
        start = (np.arange(n, dtype=np.intp) * width)[:, None]
        node = np.broadcast_to(self.roots, (n, len(self.roots))).copy()
        for _ in range(self.depth):
            right = flat[start + self.feature[node]] > self.cut[node]
            node = self.child[node] + right
        out: npt.NDArray[np.float64] = self.baseline + self.value[node].sum(axis=1)
        return out


def _level_order(tree: dict[str, list[Any]], offset: int) -> list[tuple[int, float, int, float]]:
    """A tree's nodes as (feature, cut, child, value), renumbered level by level from `offset`
    so that a node's right child follows its left one (`child` is the left one); a leaf's
    cut is infinite and its child itself."""
    order = [0]
    for i in order:  # (grows as it goes: a breadth-first walk)
        if not tree["leaf"][i]:
            order += [tree["left"][i], tree["right"][i]]
    where = {old: offset + new for new, old in enumerate(order)}
    out = []
    for old in order:
        if tree["leaf"][old]:
            out.append((0, math.inf, where[old], tree["value"][old]))
        else:
            node = (tree["feature"][old], tree["threshold"][old], where[tree["left"][old]])
            out.append((*node, tree["value"][old]))
    return out


@functools.cache
def shipped() -> Trees:
    """The model shipped in the package."""
    text = resources.files("sift.clean").joinpath("model", MODEL).read_text(encoding="utf-8")
    return Trees(json.loads(text))
