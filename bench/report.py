"""The results as a table on the terminal, as JSON (`results.json`) and as `RESULTS.md`.

RESULTS.md is generated, except for a hand-written `## Findings` section at its end (what
the numbers mean, what to change), which a new run keeps.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from bench.results import Row, summary

HEAD = ("scenario", "metric", "sift", "baseline", "sift/baseline", "target", "verdict")


def num(x: float) -> str:
    ax = abs(x)
    if ax >= 100:
        return f"{x:.0f}"
    if ax >= 10:
        return f"{x:.1f}"
    if ax >= 1:
        return f"{x:.2f}"
    return f"{x:.3f}"


def triple(values: list[float]) -> str:
    """`median (min–max)`, or the one value of a single run."""
    s = summary(values)
    if s is None:
        return ""
    if s["runs"] == 1:
        return num(s["median"])
    return f"{num(s['median'])} ({num(s['min'])}–{num(s['max'])})"


def cells(row: Row) -> list[str]:
    ratio = triple(row.ratios())
    base = triple(row.baseline)
    if base and row.baseline_name:
        base = f"{base} [{row.baseline_name}]"
    return [
        row.scenario,
        row.metric,
        triple(row.sift),
        base,
        f"{ratio}×" if ratio else "",
        row.target_text(),
        row.verdict(),
    ]


def text_table(rows: list[Row]) -> str:
    table = [list(HEAD)] + [cells(r) for r in rows]
    widths = [max(len(line[i]) for line in table) for i in range(len(HEAD))]
    out = []
    for n, line in enumerate(table):
        out.append("  ".join(c.ljust(w) for c, w in zip(line, widths, strict=True)).rstrip())
        if n == 0:
            out.append("  ".join("-" * w for w in widths))
    return "\n".join(out)


def not_measured(rows: list[Row]) -> list[str]:
    """A line for each row the run could not measure (skipped, data absent, failed): what,
    and why, so a run on a fresh clone says what it lacked."""
    return [
        f"- {r.status}: **{_md_escape(r.scenario)}**, {r.metric}: {_md_escape(r.note)}"
        for r in rows
        if r.status != "ok"
    ]


def _md_escape(text: str) -> str:
    return text.replace("|", "\\|")


def markdown(rows: list[Row], machine: dict[str, Any], command: str, seconds: float) -> str:
    tools = machine["tools"]
    lines = [
        "# sift benchmark results",
        "",
        f"`{command}` — {machine['date']}, commit `{machine['commit'][:12]}`, "
        f"{seconds / 60:.1f} min.",
        "",
        f"Machine: {machine['nproc']} CPUs ({machine['cpu']}), {machine['ram_gb']} GB RAM, "
        f"Python {machine['python']}; pypdf {tools['pypdf']}, trafilatura "
        f"{tools['trafilatura']}, Tornado {tools['tornado']}; wrk "
        f"{'yes' if tools['wrk'] else 'no'}, pdftotext {'yes' if tools['pdftotext'] else 'no'}.",
        "",
        "1-minute load average at the start and after each scenario: "
        + ", ".join(f"{x:.1f}" for x in machine.get("load_average", []))
        + f" (above {machine['nproc']}, other work shared the machine).",
        "",
        "Figures are `median (min–max)` over the runs; the ratio is sift/baseline, taken run by "
        "run (runs of the two sides are interleaved), and the verdict is on its median. The "
        "machines are shared and noisy: read the ratios, not the absolute numbers.",
        "",
        "| " + " | ".join(HEAD) + " |",
        "|" + "---|" * len(HEAD),
    ]
    lines += ["| " + " | ".join(_md_escape(c) for c in cells(r)) + " |" for r in rows]
    lines += ["", "## Not measured", ""] + (not_measured(rows) or ["Every row was measured."])
    lines += ["", "## Notes", ""]
    for r in rows:
        if r.note:
            lines.append(f"- **{_md_escape(r.scenario)}**, {r.metric}: {r.note}")
    details = [r for r in rows if r.detail]
    if details:
        lines += ["", "## Details", ""]
        for r in details:
            lines += [
                f"{r.scenario}, {r.metric}:",
                "",
                "```json",
                json.dumps(r.detail, indent=1, sort_keys=True),
                "```",
                "",
            ]
    return "\n".join(lines).rstrip() + "\n"


def write(
    rows: list[Row],
    machine: dict[str, Any],
    command: str,
    seconds: float,
    json_path: Path,
    md_path: Path,
) -> None:
    data = {
        "machine": machine,
        "command": command,
        "seconds": round(seconds, 1),
        "rows": [r.as_dict() for r in rows],
    }
    json_path.write_text(json.dumps(data, indent=1) + "\n")
    text = markdown(rows, machine, command, seconds)
    kept = _findings(md_path)
    md_path.write_text(text + ("\n" + kept if kept else ""))


FINDINGS = "## Findings"


def _findings(md_path: Path) -> str:
    """The hand-written part of RESULTS.md (from `## Findings` on): kept across runs."""
    try:
        old = md_path.read_text()
    except OSError:
        return ""
    at = old.find("\n" + FINDINGS)
    return old[at + 1 :] if at >= 0 else ""
