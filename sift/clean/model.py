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
        trees = spec["trees"]
        roots, offset = [], 0
        feature, cut, left, right, value = [], [], [], [], []
        for tree in trees:
            roots.append(offset)
            feature += tree["feature"]
            cut += tree["threshold"]
            left += [
                offset + i if leaf == 0 else -1
                for i, leaf in zip(tree["left"], tree["leaf"], strict=True)
            ]
            right += [
                offset + i if leaf == 0 else -1
                for i, leaf in zip(tree["right"], tree["leaf"], strict=True)
            ]
            value += tree["value"]
            offset += len(tree["feature"])
        self.roots = np.array(roots, dtype=np.int64)
        self.feature = np.array(feature, dtype=np.int64)
        self.cut = np.array(cut, dtype=np.float64)
        self.left = np.array(left, dtype=np.int64)
        self.right = np.array(right, dtype=np.int64)
        self.value = np.array(value, dtype=np.float64)
        self.depth = int(spec["depth"])

    def proba(self, rows: list[list[float]]) -> npt.NDArray[np.float64]:
        """The probability that each row's block is main content."""
        if not rows:
            return np.zeros(0)
        x = np.asarray(rows, dtype=np.float64)
        n = x.shape[0]
        node = np.broadcast_to(self.roots, (n, len(self.roots))).copy()
        index = np.arange(n)[:, None]
        for _ in range(self.depth):
            inner = self.left[node] >= 0
            if not inner.any():
                break
            goes_left = x[index, self.feature[node]] <= self.cut[node]
            step = np.where(goes_left, self.left[node], self.right[node])
            node = np.where(inner, step, node)
        raw = self.baseline + self.value[node].sum(axis=1)
        out: npt.NDArray[np.float64] = 1.0 / (1.0 + np.exp(-raw))
        return out


@functools.cache
def shipped() -> Trees:
    """The model shipped in the package."""
    text = resources.files("sift.clean").joinpath("model", MODEL).read_text(encoding="utf-8")
    return Trees(json.loads(text))
