"""`python -m bench`: start sift and its baselines on loopback, run the scenarios, print one
table, and (for a full run) write `bench/results.json` and `bench/RESULTS.md`.

    python -m bench                 # everything: under 10 minutes on 2 cores
    python -m bench --quick         # a 1–2 minute smoke run: fewer and shorter runs
    python -m bench --only load     # one scenario (names: see --help)

Nothing leaves the machine: sift, the origins, the baselines and the load generators all
listen on or talk to numeric loopback addresses. Progress goes to stderr.
"""

from __future__ import annotations

import argparse
import sys
import tempfile
import time
import traceback
from pathlib import Path

HERE = Path(__file__).resolve().parent


def main(argv: list[str] | None = None) -> int:
    from bench import machine, report
    from bench.context import Ctx
    from bench.results import Row
    from bench.scenarios import ALL, BY_NAME

    p = argparse.ArgumentParser(prog="python -m bench", description=__doc__.split("\n")[0])
    p.add_argument("--quick", action="store_true", help="a short smoke run (~1–2 minutes)")
    p.add_argument(
        "--only",
        choices=sorted(BY_NAME),
        action="append",
        help="run only this scenario (repeatable)",
    )
    p.add_argument(
        "--write",
        action="store_true",
        help="write results.json and RESULTS.md even for --quick/--only",
    )
    a = p.parse_args(argv)
    chosen = [BY_NAME[n] for n in a.only] if a.only else ALL
    command = (
        "python -m bench"
        + (" --quick" if a.quick else "")
        + "".join(f" --only {n}" for n in a.only or ())
    )
    started = time.monotonic()
    loads = [machine.loadavg()]
    rows: list[Row] = []
    failed = False
    with tempfile.TemporaryDirectory(prefix="sift-bench-") as tmp, Ctx(Path(tmp), a.quick) as ctx:
        for scenario in chosen:
            ctx.scenario = scenario.NAME
            ctx.log(f"start: {scenario.TITLE} (load average {machine.loadavg():.1f})")
            t0 = time.monotonic()
            try:
                rows += scenario.run(ctx)
            except Exception as exc:
                failed = True
                traceback.print_exc()
                rows.append(
                    Row(
                        scenario.TITLE,
                        "—",
                        status="failed",
                        note=f"{type(exc).__name__}: {exc}"[:300],
                    )
                )
            ctx.log(f"done in {time.monotonic() - t0:.0f} s")
            loads.append(machine.loadavg())
    seconds = time.monotonic() - started
    print(report.text_table(rows))
    lacking = report.not_measured(rows)
    if lacking:
        print("\nnot measured:\n" + "\n".join(lacking))
    print(f"\n{len(chosen)} scenarios in {seconds / 60:.1f} min", file=sys.stderr)
    if not (a.quick or a.only) or a.write:
        about = machine.describe()
        about["load_average"] = [round(x, 2) for x in loads]
        report.write(rows, about, command, seconds, HERE / "results.json", HERE / "RESULTS.md")
        print(f"wrote {HERE / 'results.json'} and {HERE / 'RESULTS.md'}", file=sys.stderr)
    return 1 if failed else 0


if __name__ == "__main__":
    raise SystemExit(main())
