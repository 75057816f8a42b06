"""7c. Clean quality on pages the model never saw: the combination model's cross-validated
word F1 (5 folds grouped by site, `bench/fit_combiner.py`) by WCXB page type and on AEB,
against trafilatura called directly.

Rows 7 and 7b score the shipped model on the pages it was fitted on; these are the figures to
quote. A fit takes ~15 CPU-minutes, so `make bench` reads the figures the fit script wrote
(`--summary bench/heldout.json`) rather than refitting, and checks them against the model file
sift ships: a model file changed since makes the figures stale, and every row says so instead
of a verdict. To refit and rewrite them, see bench/COMBINER.md ("Reproduce").
"""

from __future__ import annotations

import hashlib
import json

from bench.context import Ctx
from bench.fit_combiner import MODEL, SUMMARY
from bench.results import Row, absent

NAME = "heldout"
TITLE = "7c clean quality held out (5 folds by site)"
GAIN = 0.03  # issue 34: all WCXB pages at least trafilatura + 0.03, every type at least level


def run(ctx: Ctx) -> list[Row]:
    if not SUMMARY.is_file():
        return [absent(TITLE, "word F1", f"no {SUMMARY.name}: run bench.fit_combiner --summary")]
    summary = json.loads(SUMMARY.read_text(encoding="utf-8"))
    digest = hashlib.sha256(MODEL.read_bytes()).hexdigest()
    stale = summary["model_sha256"] != digest
    ctx.log(f"{SUMMARY.name}: {len(summary['rows'])} rows" + (", STALE" if stale else ""))
    rows = []
    for r in summary["rows"]:
        name = r["set"].removeprefix("wcxb ")
        name = "all types" if name == "all" else name
        metric = "shingle F1" if name.startswith("aeb") else "word F1"
        gain = GAIN if name == "all types" else 0.0
        row = Row(
            f"{TITLE}, {name} ({r['pages']} pages)",
            metric,
            [r["sift"]],
            [r["trafilatura"]],
            "trafilatura direct",
            ("diff", ">=", gain),
            f"{summary['folds']} folds by site, from {SUMMARY.name} (model {digest[:12]})",
        )
        if stale:
            row.status = "stale"
            row.note = f"the model file changed since {SUMMARY.name} was written: refit"
        rows.append(row)
    return rows
