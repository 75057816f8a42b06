"""Held out, an answer from the page's blocks alone: could a cleaner skip trafilatura?
(bench/COMBINER.md, the eighth pass.)

The fit script's five folds grouped by site; per fold, the block model fitted on the other
folds, once with every feature and once without the ones that read trafilatura's answer. A
page's answer is the text of the blocks kept at the model's threshold, in page order.

    python -m bench.blocks_only FITS_DIR OUT.json [--cache base0.pkl base1.pkl base2.pkl]
"""

from __future__ import annotations

import argparse
import json
import statistics
from collections.abc import Callable
from pathlib import Path
from typing import Any

import numpy as np

from bench import aeb, wcxb
from bench import fit_combiner as fc
from sift.clean import features

# The features a cleaner that never calls trafilatura would not have.
TRAFILATURA = {"in_t", "prev_in_t", "next_in_t", "near_in_t", "page_t", "t_share"}


def answers(samples: list[fc.Sample], mask: Any, k: int = 5) -> list[str]:
    """Each page's blocks kept by the model of the fold that did not see its site."""
    out = [""] * len(samples)
    parts = fc.folds(samples, k)
    for n, part in enumerate(parts):
        rest = [samples[i] for m, p in enumerate(parts) if m != n for i in p]
        x, y, w = fc._matrix(rest)
        fitted = fc._fit_rows(x[:, mask], y, w)
        for i in part:
            s = samples[i]
            if len(s.cands.features):
                proba = fitted.predict_proba(s.cands.features[:, mask])[:, 1]
                pairs = zip(s.cands.blocks, proba, strict=True)
                out[i] = "\n\n".join(b.text for b, p in pairs if p >= fc.THRESHOLD)
    return out


def table(samples: list[fc.Sample], texts: dict[str, Callable[[int], str]]) -> list[Any]:
    """Per WCXB page type (word F1) and AEB (shingle F1), each answer's score (a type with
    no page left out)."""
    rows = []
    for kind in [*wcxb.TYPES, None]:
        group = [i for i, s in enumerate(samples) if s.dataset == "wcxb" and kind in (None, s.kind)]

        def f1(text: Callable[[int], str], group: list[int] = group) -> float:
            return statistics.mean(
                wcxb.word_f1(samples[i].truth, aeb.strip_links(text(i))) for i in group
            )

        if group:
            rows.append([f"wcxb {kind or 'all'}", len(group), {k: f1(t) for k, t in texts.items()}])
    group = [i for i, s in enumerate(samples) if s.dataset == "aeb"]
    if not group:
        return rows
    counts = {
        k: [aeb.page_counts(samples[i].truth, aeb.strip_links(t(i))) for i in group]
        for k, t in texts.items()
    }
    rows.append(["aeb", len(group), {k: aeb.metrics(c)["f1"] for k, c in counts.items()}])
    return rows


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("fits", type=Path, help="where block models are kept (--fits)")
    parser.add_argument("out", type=Path)
    parser.add_argument("--cache", type=Path, nargs="+", default=[])
    a = parser.parse_args(argv)
    fc.FITS = a.fits
    samples = fc.load(a.cache, 1)
    every = np.ones(len(features.FEATURES), dtype=bool)
    without = np.array([name not in TRAFILATURA for name in features.FEATURES])
    kept_all, kept_without = answers(samples, every), answers(samples, without)
    texts: dict[str, Callable[[int], str]] = {
        "trafilatura": lambda i: samples[i].direct,
        "resiliparse": lambda i: samples[i].cands.other,
        "blocks, every feature": kept_all.__getitem__,
        "blocks, no trafilatura feature": kept_without.__getitem__,
    }
    rows = table(samples, texts)
    a.out.write_text(json.dumps(rows, indent=1))
    for name, n, cols in rows:
        print(f"{name:<20} {n:>5} " + " ".join(f"{k}={v:.4f}" for k, v in cols.items()))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
