"""5b. `sift extract FILE --pages 401-405` of a 2,000-page PDF (pages 41–45 of 300 in
`--quick`): a chunk read back from the page cache by a whole CLI process, as an agent's shell
does it, against pdfium opening the file and reading the same range in this process (no
interpreter start, no cache) and against a bare interpreter start (`python -c pass`).

The first call extracts the document into the cache (its time is in the note); the rows are
the calls after it.
"""

from __future__ import annotations

import os
import subprocess
import sys
import time

from bench import direct
from bench.context import Ctx
from bench.results import Row

NAME = "pdf_extract"
TITLE = "5b PDF extract"
# A CLI that starts like a tool (issue 38): interpreter start plus what the command needs.
LIKE_A_TOOL = ("ratio", "<=", 3.0)
# pdfium in this process pays no interpreter start and reads no cache: a whole process that
# meets LIKE_A_TOOL (3 × ~30 ms) is within 10× its in-process read of five pages (~9 ms).
AGAINST_PDFIUM = ("ratio", "<=", 10.0)


def run(ctx: Ctx) -> list[Row]:
    pages, first = (300, 41) if ctx.quick else (2000, 401)
    ranged = f"{first}-{first + 4}"
    path = ctx.pdfs.path(pages)
    state = ctx.tmp / "extract-state"
    cfg = ctx.tmp / "extract.toml"
    cfg.write_text(f'state_dir = "{state}"\n')
    # An installed tool starts from its bytecode (pip compiles it): with PYTHONDONTWRITEBYTECODE
    # set (as some shells and CI set it) and no __pycache__ in a fresh clone, every run would
    # compile sift's modules again. The first call below writes them.
    env = {
        k: v
        for k, v in os.environ.items()
        if not k.startswith("SIFT_") and k != "PYTHONDONTWRITEBYTECODE"
    }
    cmd = [
        sys.executable,
        "-m",
        "sift",
        "--config",
        str(cfg),
        "extract",
        str(path),
        "--pages",
        ranged,
        "--no-context",
    ]

    def timed(args: list[str]) -> float:
        started = time.perf_counter()
        out = subprocess.run(args, capture_output=True, env=env, timeout=300)
        if out.returncode != 0:
            raise RuntimeError(f"{args[1:4]}: exit {out.returncode}: {out.stderr[-300:]!r}")
        return (time.perf_counter() - started) * 1000

    cold = timed(cmd)
    ctx.log(f"first call (extracts {pages} pages): {cold:.0f} ms")
    ms_sift, ms_direct, ms_python = [], [], []
    for _ in range(ctx.runs(9, 3)):
        ms_sift.append(timed(cmd))
        started = time.perf_counter()
        direct.pdfium_pages(path, first, first + 4)
        ms_direct.append((time.perf_counter() - started) * 1000)
        ms_python.append(timed([sys.executable, "-c", "pass"]))
    t = f"{TITLE}, {pages} pages"
    metric = f"--pages {ranged} cached, ms"
    return [
        Row(
            t,
            metric,
            ms_sift,
            ms_direct,
            "pdfium direct, same range, in-process",
            AGAINST_PDFIUM,
            note=f"a whole CLI process; the first call {cold:.0f} ms",
        ),
        Row(t, metric, ms_sift, ms_python, "python -c pass (interpreter start)", LIKE_A_TOOL),
    ]
