"""The combination model is reproducible from the repository (issue 34): the shipped model
says how it was fitted, with the fitting script's own settings; and the fit is deterministic,
so refitting a fixed subset of the public data gives the committed subset model byte for
byte (`python -m bench.fit_combiner --every 120 --no-cv --out tests/data/combiner-every120.json`
wrote it; the whole fit is the same command without `--every`, some minutes).

Needs scikit-learn (the `bench` extra) and ../shared/bench-data; skipped without them.
"""

from __future__ import annotations

import io
import json
from pathlib import Path

import pytest

from sift.clean import features, gate, model

SUBSET = Path(__file__).parents[1] / "data" / "combiner-every120.json"


def test_the_shipped_model_names_its_recipe():
    fit = pytest.importorskip("bench.fit_combiner")
    shipped = model.shipped()
    assert shipped.features == list(features.FEATURES)
    assert shipped.meta["params"] == fit.PARAMS
    assert shipped.meta["gate_params"] == fit.GATE_PARAMS
    assert [g.threshold for g in shipped.gates] == list(fit.GATE_THRESHOLDS)
    assert all(g.features == list(gate.GATE_FEATURES) for g in shipped.gates)
    assert shipped.meta["label"] == fit.LABEL
    assert shipped.threshold == fit.THRESHOLD
    assert "wcxb-dev" in shipped.meta["data"] and "aeb" in shipped.meta["data"]


@pytest.fixture(scope="module")
def subset():
    """The fitting script and its fixed subset of the public data (every 120th page),
    collected through sift's clean path."""
    pytest.importorskip("sklearn")
    fit = pytest.importorskip("bench.fit_combiner")
    if not (fit.wcxb.DATA / "ground-truth").is_dir() or not (fit.aeb.DATA / "html").is_dir():
        pytest.skip("no benchmark data in ../shared/bench-data")
    buffer = io.BytesIO()
    fit.collect(120, (0, 1), buffer, direct=False)
    return fit, fit.read_buffer(buffer.getvalue())


def _model_file(fit, samples) -> str:
    return json.dumps(fit.model_spec(samples), separators=(",", ":")) + "\n"


@pytest.mark.timeout(600)  # ~15 s on an idle machine; minutes on a shared, busy one
def test_refitting_a_subset_reproduces_its_model(subset):
    fit, samples = subset
    assert _model_file(fit, samples) == SUBSET.read_text(encoding="utf-8")


@pytest.mark.timeout(600)
def test_block_models_kept_on_disk_give_the_same_model(subset, tmp_path, monkeypatch):
    """`--fits DIR` keeps each block model by what it was fitted on; a second run reads them
    back (no fit) and writes the same model file, byte for byte."""
    fit, samples = subset
    monkeypatch.setattr(fit, "FITS", tmp_path / "fits")
    monkeypatch.setattr(fit, "_FITTED", {})
    first = _model_file(fit, samples)
    kept = sorted((tmp_path / "fits").iterdir())
    assert len(kept) == 6  # five folds' models and the one on every page
    monkeypatch.setattr(fit, "_FITTED", {})

    def no_fit(*_args):
        raise AssertionError("a kept block model was fitted again")

    monkeypatch.setattr(fit.pickle, "dumps", no_fit)
    assert first == _model_file(fit, samples) == SUBSET.read_text(encoding="utf-8")
    assert sorted((tmp_path / "fits").iterdir()) == kept


def test_the_held_out_figures_describe_the_shipped_model():
    """`bench/heldout.json` (row 7c of `make bench`) was written for the model file sift ships
    (a refit without `--summary` leaves it stale, and this fails), by page type and on AEB."""
    import hashlib

    fit = pytest.importorskip("bench.fit_combiner")
    summary = json.loads(fit.SUMMARY.read_text(encoding="utf-8"))
    assert summary["model_sha256"] == hashlib.sha256(fit.MODEL.read_bytes()).hexdigest()
    rows = {r["set"]: r for r in summary["rows"]}
    assert set(rows) == {*(f"wcxb {t}" for t in fit.wcxb.TYPES), "wcxb all", "aeb (shingle F1)"}
    assert sum(rows[f"wcxb {t}"]["pages"] for t in fit.wcxb.TYPES) == rows["wcxb all"]["pages"]
    assert all(0 < r["sift"] <= 1 and 0 < r["trafilatura"] <= 1 for r in rows.values())


@pytest.mark.timeout(600)
def test_the_block_only_answers_are_held_out_blocks(subset, tmp_path, monkeypatch):
    """`bench/blocks_only.py` (COMBINER.md, the eighth pass): each page is answered with its
    own blocks' text, kept by a model that never saw its site, with and without the features
    that read trafilatura's answer."""
    fit, samples = subset
    only = pytest.importorskip("bench.blocks_only")
    import numpy as np

    monkeypatch.setattr(fit, "FITS", tmp_path / "fits")
    without = np.array([name not in only.TRAFILATURA for name in features.FEATURES])
    assert len(features.FEATURES) - int(without.sum()) == len(only.TRAFILATURA)
    fitted: list[int] = []
    real = fit._fit_rows

    def counted(x, y, w):
        fitted.append(x.shape[1])
        return real(x, y, w)

    monkeypatch.setattr(fit, "_fit_rows", counted)
    texts = only.answers(samples, without, k=3)
    assert fitted == [int(without.sum())] * 3  # one fit per fold, on the kept columns only
    assert len(texts) == len(samples) and any(texts)
    for s, text in zip(samples, texts, strict=True):
        blocks = {b.text for b in s.cands.blocks}
        assert all(part in blocks for part in text.split("\n\n") if part)
    rows = only.table(samples, {"blocks": texts.__getitem__})
    assert [r[0] for r in rows][-2:] == ["wcxb all", "aeb"]
    assert all(0 <= r[2]["blocks"] <= 1 for r in rows)
