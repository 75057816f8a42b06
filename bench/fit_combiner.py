"""Fit the combination model (`sift/clean/model/combiner.json`) and report its quality on folds
it never saw.

The data recipe: every page of `../shared/bench-data/wcxb-dev` (WCXB dev split, CC-BY-4.0,
Murrough Foley) and `../shared/bench-data/aeb` (the article-extraction benchmark, MIT,
Zyte), nothing else (never WCXB's test split). Each page goes through sift's own clean path
(`sift.clean.dispatch.clean`), which hands its candidate blocks to `combine.TAP`; a block's
label is whether most of its word 3-grams are in the page's true main content, its weight its
share of the page's words (each page weighs alike, as each weighs alike in the score).

Cross-validation is grouped by site (the URL's host without `www.`): no site has pages on both
sides of a fold. Every figure printed is of pages the fold's model was not fitted on: word F1
per WCXB page type and the AEB metric, against trafilatura called directly. Then the model is
fitted on every page and written as JSON (`sift.clean.model.Trees`).

    python -m bench.fit_combiner [--folds 5] [--every N] [--out PATH] [--cache PATH]
                                 [--summary bench/heldout.json]

`--summary` writes the held-out figures as sift answers them, by page type, with the digest of
the model file: `make bench` reports them as row 7c (a fit takes ~15 CPU-minutes, so the bench
reads them rather than refitting, and says when the model file has changed since).

`--every N` takes every Nth page (a quick run; the reproducibility test uses it). The fit is
deterministic: the same pages give the same file, byte for byte.
"""

from __future__ import annotations

import argparse
import hashlib
import io
import json
import os
import pickle
import statistics
import sys
import time
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any, BinaryIO
from urllib.parse import urlsplit

# One thread for the fit (the machine is shared; OpenMP would spin on a busy core).
os.environ.setdefault("OMP_NUM_THREADS", "1")

from bench import aeb, wcxb
from sift.clean import combine, features, gate, model

MODEL = Path(__file__).resolve().parents[1] / "sift" / "clean" / "model" / model.MODEL
PARAMS: dict[str, Any] = {
    "max_iter": 150,
    "learning_rate": 0.1,
    "max_depth": 6,
    "max_leaf_nodes": 31,
    "min_samples_leaf": 40,
    "l2_regularization": 1.0,
    "early_stopping": False,
    "random_state": 0,
}
THRESHOLD = 0.5  # fixed before any fit: not tuned on the folds' figures
# The gates' thresholds (`combine.chosen`): the first the model's; the second a more inclusive
# answer, at the threshold the inner folds chose when one threshold was chosen by page score
# (0.3-0.45, mostly 0.35: bench/COMBINER.md, the seventh model pass).
GATE_THRESHOLDS = (THRESHOLD, 0.35)
# The page gate (`sift.clean.gate`): a small regressor of the combination's gain, fitted on
# answers of block models that had not seen the page. Fixed before its held-out figures.
GATE_PARAMS: dict[str, Any] = {
    "max_iter": 100,
    "learning_rate": 0.05,
    "max_depth": 3,
    "min_samples_leaf": 20,
    "l2_regularization": 1.0,
    "random_state": 0,
}
SUMMARY = Path(__file__).resolve().parent / "heldout.json"  # row 7c's figures
LABEL = 0.5  # a block is main content when this share of its n-grams is in the truth


@dataclass
class Sample:
    """One page: where it is from, its truth, trafilatura's direct answer, its candidates."""

    dataset: str  # "wcxb" or "aeb"
    key: str
    site: str
    kind: str
    truth: str
    direct: str
    cands: combine.Candidates


def site_of(url: str) -> str:
    host = urlsplit(url).hostname or url
    return host.removeprefix("www.")


def _clean(html: bytes, url: str) -> combine.Candidates:
    combine.TAP = []
    try:
        aeb.sift_clean(html, url)
        if combine.TAP:
            return combine.TAP[0]
        return combine.weigh([], "", "")
    finally:
        combine.TAP = None


def pages(every: int) -> Iterator[tuple[str, str, str, str, bytes, str, str]]:
    """(dataset, key, site, kind, html, url, truth) of every `every`th page of both sets."""
    for page in wcxb.load_pages(wcxb.DATA, every=every):
        yield "wcxb", page.key, site_of(page.url), page.kind, page.html, page.url, page.truth
    for key, html, url, truth in list(aeb.load_pages(aeb.DATA))[::every]:
        yield "aeb", key, site_of(url), "article", html, url, truth


def collect(every: int, shard: tuple[int, int], out: BinaryIO, direct: bool = True) -> None:
    """Every `every`th page of both sets (those of this `shard`: (i, n) takes every nth from
    the ith) through sift's clean path, each Sample pickled to `out` as it is done."""
    for n, (dataset, key, site, kind, html, url, truth) in enumerate(pages(every)):
        if n % shard[1] != shard[0]:
            continue
        baseline = aeb.trafilatura_direct(html, url) if direct else ""
        sample = Sample(dataset, key, site, kind, truth, baseline, _clean(html, url))
        pickle.dump(sample, out)
        out.flush()


class _Unpickler(pickle.Unpickler):
    """Samples pickled by `python -m bench.fit_combiner` name their class in `__main__`."""

    def find_class(self, module: str, name: str) -> Any:
        if module == "__main__":
            module = __name__
        return super().find_class(module, name)


def read_samples(paths: list[Path]) -> list[Sample]:
    """The samples collected in `paths` (a shard cut short gives the pages it finished),
    in a fixed order."""
    found: dict[str, Sample] = {}
    for path in paths:
        with path.open("rb") as f:
            while True:
                try:
                    s = _Unpickler(f).load()
                except (EOFError, pickle.UnpicklingError):
                    break
                found[f"{s.dataset}/{s.key}"] = s
    return [found[k] for k in sorted(found)]


def labels(s: Sample) -> tuple[list[int], list[float]]:
    """Each block's label and weight (its words over the page's)."""
    truth = features.Grams(s.cands.tokens, [features.words(s.truth)]).share(0)
    total = sum(len(t) for t in s.cands.tokens) or 1
    ys = [int(share >= LABEL) for share in truth]
    return ys, [len(t) / total for t in s.cands.tokens]


def _matrix(samples: list[Sample]) -> tuple[Any, Any, Any]:
    import numpy as np

    xs: list[list[float]] = []
    ys: list[int] = []
    ws: list[float] = []
    for s in samples:
        y, w = labels(s)
        kept = [i for i, weight in enumerate(w) if weight > 0]
        xs.extend(s.cands.features[i] for i in kept)
        ys.extend(y[i] for i in kept)
        ws.extend(w[i] for i in kept)
    return np.asarray(xs, dtype=np.float64), np.asarray(ys), np.asarray(ws)


# Fits by their training pages (the Sample objects, in order; kept alive with the fit so that
# their ids stay theirs). The fit is deterministic, and the same pages in the same order recur:
# the gate's inner fit of outer fold k without j is that of outer fold j without k, and the
# shipped gate's fits are the outer folds' (16 fits for five folds and the model, not 31).
_FITTED: dict[tuple[int, ...], tuple[list[Sample], Any]] = {}


# `--fits DIR`: block models kept on disk between runs, by a digest of what they were fitted
# on (the rows, labels, weights, parameters and scikit-learn's version), so that trying another
# gate or report on the same folds refits nothing (the script's own pickles, read back only).
FITS: Path | None = None


def fit(samples: list[Sample]) -> Any:
    key = tuple(map(id, samples))
    if key not in _FITTED:
        _FITTED[key] = (list(samples), _fit_rows(*_matrix(samples)))
    return _FITTED[key][1]


def _fit_rows(x: Any, y: Any, w: Any) -> Any:
    import sklearn
    from sklearn.ensemble import HistGradientBoostingClassifier

    kept = None
    if FITS is not None:
        digest = hashlib.sha256(json.dumps([PARAMS, sklearn.__version__]).encode())
        for rows in (x, y, w):
            digest.update(rows.tobytes())
        kept = FITS / f"{digest.hexdigest()[:32]}.pkl"
        if kept.exists():
            return pickle.loads(kept.read_bytes())
    fitted = HistGradientBoostingClassifier(**PARAMS)
    fitted.fit(x, y, sample_weight=w)
    if kept is not None:
        kept.parent.mkdir(parents=True, exist_ok=True)
        kept.write_bytes(pickle.dumps(fitted))
    return fitted


def export(
    fitted: Any,
    meta: dict[str, Any],
    names: tuple[str, ...] = features.FEATURES,
    threshold: float = THRESHOLD,
) -> dict[str, Any]:
    """The fitted model as `sift.clean.model.Trees` reads it."""
    trees, depth = [], 0
    for (predictor,) in fitted._predictors:
        nodes = predictor.nodes
        depth = max(depth, int(nodes["depth"].max()))
        trees.append(
            {
                "feature": [int(v) for v in nodes["feature_idx"]],
                "threshold": [float(v) for v in nodes["num_threshold"]],
                "left": [int(v) for v in nodes["left"]],
                "right": [int(v) for v in nodes["right"]],
                "leaf": [int(v) for v in nodes["is_leaf"]],
                "value": [round(float(v), 8) for v in nodes["value"]],
            }
        )
    return {
        "features": list(names),
        "threshold": threshold,
        "baseline": float(fitted._baseline_prediction.ravel()[0]),
        "depth": depth + 1,
        "trees": trees,
        "meta": meta,
    }


def folds(samples: list[Sample], k: int) -> list[list[int]]:
    """The held-out pages of each of `k` folds, grouped by site."""
    from sklearn.model_selection import GroupKFold

    groups = [s.site for s in samples]
    return [list(test) for _, test in GroupKFold(n_splits=k).split(samples, groups=groups)]


def page_f1(s: Sample, text: str) -> float:
    """A page's score: WCXB's word F1, AEB's shingle F1 of the one page."""
    text = aeb.strip_links(text)
    if s.dataset == "wcxb":
        return wcxb.word_f1(s.truth, text)
    tp, fp, fn = aeb.page_counts(s.truth, text)
    return 2 * tp / (2 * tp + fp + fn) if tp else 0.0


def _keep(proba: Any, threshold: float) -> list[bool]:
    return [bool(p) for p in proba >= threshold]


def gate_rows(s: Sample, proba: Any, text: str, threshold: float) -> list[float]:
    """The page gate's row of a page (`gate.row` as `combine.chosen` calls it)."""
    sizes = [float(len(t)) for t in s.cands.tokens]
    import numpy as np

    x = s.cands.features
    return gate.row(x, np.asarray(sizes), proba, threshold, s.cands.markdown, text)


# Per fold, each page with its blocks' probabilities by a model that had not seen it.
Answered = list[list[tuple[int, Any]]]


def inner(samples: list[Sample], parts: list[list[int]]) -> Answered:
    """Per part, each of its pages no article vouched for, with its blocks' probabilities by the
    block model fitted on the other parts only (stacking: what the gates learn from)."""
    answered = []
    for part in parts:
        held = set(part)
        trees = _trees(fit([samples[i] for p in parts for i in p if i not in held]))
        found = [i for i in part if not samples[i].cands.vouched]
        answered.append([(i, trees.proba(samples[i].cands.features)) for i in found])
    return answered


def fit_gate(samples: list[Sample], answered: Answered, threshold: float) -> Any:
    """A page gate, fitted on the `inner` answers at `threshold`: their rows, and the
    combination's gain in score over trafilatura's answer."""
    from sklearn.ensemble import HistGradientBoostingRegressor

    xs, gains = [], []
    for i, proba in (page for part in answered for page in part):
        s = samples[i]
        text = combine.answer(s.cands, _keep(proba, threshold))
        xs.append(gate_rows(s, proba, text, threshold))
        gains.append(page_f1(s, text) - page_f1(s, s.cands.markdown))
    fitted = HistGradientBoostingRegressor(**GATE_PARAMS)
    fitted.fit(xs, gains)
    return fitted


def _gates(samples: list[Sample], parts: list[list[int]]) -> list[dict[str, Any]]:
    """The page gates, one per threshold of `GATE_THRESHOLDS`, fitted on the answers to the
    pages of `parts` of block models fitted on the other parts."""
    answered = inner(samples, parts)
    names = gate.GATE_FEATURES
    return [export(fit_gate(samples, answered, t), {}, names, t) for t in GATE_THRESHOLDS]


def model_spec(samples: list[Sample], k: int = 5) -> dict[str, Any]:
    """The shipped model: the block model fitted on every page, its gates on the `k` folds'
    answers."""
    spec = export(fit(samples), recipe(samples))
    spec["gates"] = _gates(samples, folds(samples, k))
    return spec


def held_out(samples: list[Sample], parts: list[list[int]], n: int) -> dict[str, str]:
    """The answers to the pages of fold `n` of `parts` by the model fitted on all the other
    folds, its gates on those folds' inner answers: `all/KEY` the combination on every page,
    `KEY` as sift answers (trafilatura's text alone where the page's article vouched for it,
    else as the gates choose: `combine.chosen`)."""
    rest = [part for m, part in enumerate(parts) if m != n]
    spec = export(fit([samples[i] for part in rest for i in part]), {})
    spec["gates"] = _gates(samples, rest) if len(rest) > 1 else []
    trees = model.Trees(spec)
    answers = {}
    for i in parts[n]:
        s = samples[i]
        proba, key = trees.proba(s.cands.features), f"{s.dataset}/{s.key}"
        answers[f"all/{key}"] = combine.answer(s.cands, _keep(proba, THRESHOLD))
        vouched = s.cands.vouched
        answers[key] = s.cands.markdown if vouched else combine.chosen(trees, s.cands, proba)
    return answers


def cross_validate(samples: list[Sample], k: int) -> dict[str, str]:
    """Each page's answer from the model of the fold that did not see its site."""
    answers: dict[str, str] = {}
    parts = folds(samples, k)
    for n in range(k):
        started = time.perf_counter()
        answers.update(held_out(samples, parts, n))
        print(f"fold {n + 1}/{k}: {len(parts[n])} pages, {time.perf_counter() - started:.0f} s")
    return answers


def _trees(fitted: Any) -> model.Trees:
    return model.Trees(export(fitted, {}))


def scores(samples: list[Sample], answers: dict[str, str]) -> list[tuple[str, int, list[float]]]:
    """(set/type, pages, [trafilatura direct, sift's trafilatura answer alone, the combination
    on every page, as sift answers]): WCXB's mean word F1 per page type, then the AEB metric."""
    texts = (
        lambda s: s.direct,
        lambda s: s.cands.markdown,
        lambda s: answers.get(f"all/{s.dataset}/{s.key}", ""),
        lambda s: answers[f"{s.dataset}/{s.key}"],
    )
    rows = []
    wc = [s for s in samples if s.dataset == "wcxb"]
    for kind in [*wcxb.TYPES, None]:
        group = [s for s in wc if kind is None or s.kind == kind]
        if group:
            cols = [
                statistics.mean(wcxb.word_f1(s.truth, aeb.strip_links(text(s))) for s in group)
                for text in texts
            ]
            rows.append((f"wcxb {kind or 'all'}", len(group), cols))
    ae = [s for s in samples if s.dataset == "aeb"]
    if ae:
        cols = [
            aeb.metrics([aeb.page_counts(s.truth, aeb.strip_links(text(s))) for s in ae])["f1"]
            for text in texts
        ]
        rows.append(("aeb (shingle F1)", len(ae), cols))
    return rows


def report(samples: list[Sample], answers: dict[str, str]) -> str:
    """The held-out table (`scores`) as text."""
    head = ("set/type", "pages", "traf.", "alone", "all", "shipped", "diff")
    lines = ["{:<18} {:>5} {:>6} {:>6} {:>6} {:>7} {:>7}".format(*head)]
    lines += [_row(name, n, cols) for name, n, cols in scores(samples, answers)]
    empty = sum(
        1 for s in samples if s.direct.strip() and not answers[f"{s.dataset}/{s.key}"].strip()
    )
    lines.append(f"empty answers where trafilatura has text: {empty}")
    return "\n".join(lines)


def write_summary(
    path: Path, samples: list[Sample], answers: dict[str, str], k: int, model_file: Path
) -> None:
    """The held-out figures as sift answers them, as JSON (`make bench` reports them as row
    7c), with the digest of the model file fitted on every page by the same recipe: a later
    model file makes them stale, and the row says so."""
    rows = [
        {"set": name, "pages": n, "trafilatura": round(c[0], 4), "sift": round(c[3], 4)}
        for name, n, c in scores(samples, answers)
    ]
    digest = hashlib.sha256(model_file.read_bytes()).hexdigest()
    body = {"model_sha256": digest, "folds": k, "rows": rows}
    path.write_text(json.dumps(body, indent=1) + "\n", encoding="utf-8")


def _row(name: str, n: int, cols: list[float]) -> str:
    values = " ".join(f"{v:6.3f}" for v in cols[:3])
    return f"{name:<18} {n:>5} {values} {cols[3]:7.3f} {cols[3] - cols[0]:+7.3f}"


def recipe(samples: list[Sample]) -> dict[str, Any]:
    """What the model was fitted on, to know it again: the pages and the parameters."""
    pages = hashlib.sha256("\n".join(f"{s.dataset}/{s.key}" for s in samples).encode())
    return {
        "pages": len(samples),
        "pages_sha256": pages.hexdigest()[:16],
        "params": PARAMS,
        "gate_params": GATE_PARAMS,
        "label": LABEL,
        "gate_thresholds": GATE_THRESHOLDS,
        "data": "wcxb-dev (CC-BY-4.0, Murrough Foley) + aeb (MIT, Zyte)",
    }


def refeature(samples: list[Sample]) -> None:
    """The features and unit maps again from what was collected (after a change to
    `features.py` or `combine.py` only)."""
    for s in samples:
        vouched = s.cands.vouched
        s.cands = combine.weigh(s.cands.blocks, s.cands.markdown, s.cands.other)
        s.cands.vouched = vouched


def load(cache: list[Path], every: int) -> list[Sample]:
    """The samples of the `cache` files, else collected now (one shard)."""
    if cache and all(p.exists() for p in cache):
        samples = read_samples(cache)
        refeature(samples)
        return samples
    started = time.perf_counter()
    with (cache[0] if cache else Path(os.devnull)).open("wb") as out:
        buffer = io.BytesIO()
        collect(every, (0, 1), buffer if not cache else out)
    samples = read_samples(cache) if cache else read_buffer(buffer.getvalue())
    print(f"collected {len(samples)} pages in {time.perf_counter() - started:.0f} s")
    return samples


def read_buffer(data: bytes) -> list[Sample]:
    """The samples pickled one after another in `data`, in a fixed order."""
    f, found = io.BytesIO(data), []
    while f.tell() < len(data):
        found.append(_Unpickler(f).load())
    return sorted(found, key=lambda s: f"{s.dataset}/{s.key}")


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--folds", type=int, default=5)
    parser.add_argument("--every", type=int, default=1)
    parser.add_argument("--out", type=Path, default=MODEL)
    parser.add_argument("--cache", type=Path, nargs="*", default=[], help="collected pages")
    parser.add_argument("--shard", default=None, help="i/n: collect the ith of n shards only")
    parser.add_argument("--no-cv", action="store_true", help="fit and write only")
    parser.add_argument("--fold", type=int, default=None, help="one fold's answers, to --answers")
    parser.add_argument(
        "--answers", type=Path, default=None, help="folds' answers (JSON) to report"
    )
    parser.add_argument(
        "--fits", type=Path, default=None, help="keep the block models here between runs"
    )
    parser.add_argument(
        "--summary", type=Path, default=None, help=f"held-out figures as JSON (7c: {SUMMARY.name})"
    )
    args = parser.parse_args(argv)
    if not (wcxb.DATA / "ground-truth").is_dir() or not (aeb.DATA / "html").is_dir():
        print("no benchmark data in ../shared/bench-data", file=sys.stderr)
        return 2
    if args.shard:
        i, n = (int(v) for v in args.shard.split("/"))
        with args.cache[0].open("wb") as out:
            collect(args.every, (i, n), out)
        return 0
    global FITS
    FITS = args.fits
    samples = load(args.cache, args.every)
    if args.fold is not None and args.answers:
        answers = held_out(samples, folds(samples, args.folds), args.fold)
        args.answers.write_text(json.dumps(answers), encoding="utf-8")
        return 0
    if args.answers:
        found: dict[str, str] = {}
        for path in sorted(args.answers.parent.glob(args.answers.name)):
            found.update(json.loads(path.read_text(encoding="utf-8")))
        print(report(samples, found))
        if args.summary:
            write_summary(args.summary, samples, found, args.folds, args.out)
        return 0
    answers = {} if args.no_cv else cross_validate(samples, args.folds)
    if answers:
        print(report(samples, answers))
    spec = model_spec(samples, args.folds)
    args.out.parent.mkdir(parents=True, exist_ok=True)
    args.out.write_text(json.dumps(spec, separators=(",", ":")) + "\n", encoding="utf-8")
    print(f"wrote {args.out} ({args.out.stat().st_size // 1024} KiB)")
    if answers and args.summary:
        write_summary(args.summary, samples, answers, args.folds, args.out)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
