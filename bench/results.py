"""One row of the results table: a figure for sift, one for its baseline, and their ratio.

Runs of sift and of the baseline are interleaved, so run i of each saw the same machine;
the ratio is then taken run by run and summarised like the figures (min/median/max). The
verdict is on the median. These machines are shared and noisy: ratios, not absolute numbers,
are what a row claims.
"""

from __future__ import annotations

import statistics
from dataclasses import asdict, dataclass, field
from typing import Any

OPS = {"<=": lambda a, b: a <= b, ">=": lambda a, b: a >= b}


def summary(values: list[float]) -> dict[str, float] | None:
    if not values:
        return None
    return {
        "min": min(values),
        "median": statistics.median(values),
        "max": max(values),
        "runs": len(values),
    }


@dataclass
class Row:
    scenario: str  # e.g. "1 cold fetch"
    metric: str  # what is measured, with its unit
    sift: list[float] = field(default_factory=list)
    baseline: list[float] = field(default_factory=list)
    baseline_name: str = ""
    # ("ratio", "<=", 1.15): on sift/baseline; ("sift", "<=", 100): on sift's own figure;
    # ("diff", "<=", 50): on sift − baseline.
    target: tuple[str, str, float] | None = None
    note: str = ""
    status: str = "ok"  # ok | data absent | skipped | failed
    detail: dict[str, Any] = field(default_factory=dict)  # for the JSON and RESULTS.md only

    def ratios(self) -> list[float]:
        if not self.sift or not self.baseline:
            return []
        if len(self.sift) == len(self.baseline):
            return [s / b for s, b in zip(self.sift, self.baseline, strict=True) if b]
        b = statistics.median(self.baseline)
        return [statistics.median(self.sift) / b] if b else []

    def differences(self) -> list[float]:
        if not self.sift or not self.baseline:
            return []
        if len(self.sift) == len(self.baseline):
            return [s - b for s, b in zip(self.sift, self.baseline, strict=True)]
        return [statistics.median(self.sift) - statistics.median(self.baseline)]

    def verdict(self) -> str:
        if self.status != "ok":
            return self.status
        if self.target is None:
            return "—"
        on, op, bound = self.target
        values = {"ratio": self.ratios, "diff": self.differences}.get(on, lambda: self.sift)()
        if not values:
            return "no data"
        return "holds" if OPS[op](statistics.median(values), bound) else "MISSED"

    def target_text(self) -> str:
        if self.target is None:
            return ""
        on, op, bound = self.target
        sign = {"<=": "≤", ">=": "≥"}[op]
        if on == "diff":
            return f"sift − baseline {sign} {bound:g}"
        return f"{sign} {bound:g}×" if on == "ratio" else f"sift {sign} {bound:g}"

    def as_dict(self) -> dict[str, Any]:
        d = asdict(self)
        d.update(
            sift_summary=summary(self.sift),
            baseline_summary=summary(self.baseline),
            ratio_summary=summary(self.ratios()),
            verdict=self.verdict(),
            target_text=self.target_text(),
        )
        return d


def absent(scenario: str, metric: str, why: str) -> Row:
    return Row(scenario, metric, status="data absent", note=why)


def skipped(scenario: str, metric: str, why: str) -> Row:
    return Row(scenario, metric, status="skipped", note=why)
