"""4. PDFs, cold: generated 300- and 2,000-page text PDFs through `/v1/fetch`, in pages/s
(paper-like ones with embedded fonts at least 1.2× pdftotext's pace, plain base-14 ones 1×),
against `pdftotext -layout` (poppler, the native tool: the target), pdfium called directly in
one process, and pypdf the same way (context).

sift's figure is the whole request as a client sees it (the origin sends the PDF, sift runs
its children, `[pdf] children` at once, sharing the pages in chunks, stores the pages, answers
the map); each run asks for a new URL so the cache misses. A 3-page PDF is fetched first, as
a server that has run before: its spare children (`[pdf] spares`) are started. After each
request the run pauses a second, so the spares that replace the used ones start while nothing
is measured (as between requests; a document spooled to disk, over `[pdf] spool_over`, is fed
to them from its file: the 2,000-page one). The direct figures exclude their process's
start-up (see `bench.direct`); pdftotext's is its whole process, timed from outside.

Memory: a sampler (`bench.procmem`, every 20 ms) follows the sift process's children whose
command line holds `pdftext`; a child's peak is its own VmHWM, and the total is the sum of
the children's VmRSS at one sample (the children of a long document run at once). The
baselines' peaks are their own VmHWM.
"""

from __future__ import annotations

import time

from bench import direct
from bench.context import Ctx
from bench.procmem import MemWatch
from bench.results import Row, skipped

NAME = "pdf_cold"
TITLE = "4 PDF cold"


# (kind, pages, pace): sift's pages/s at least `pace` × pdftotext's (issue 38). Paper-like
# documents (embedded fonts, two columns) are what real files look like; plain ones (base-14
# font, one column) are poppler's easiest case, where it reads no font program.
DOCS = [("paper", 300, 1.2), ("paper", 2000, 1.2), ("plain", 300, 1.0), ("plain", 2000, 1.0)]
# The other baselines: pdfium and pypdf called directly, at least matched (sift's children pay
# a start-up, checks and the store the direct calls do not); one child's peak memory near a
# direct call's, and the children of a long document (two at once) under 2.5× it.
FASTER_THAN_A_LIBRARY = ("ratio", ">=", 1.0)
ONE_CHILD_MB = ("ratio", "<=", 1.2)
CHILDREN_MB = ("ratio", "<=", 2.5)
NO_POPPLER = "no pdftotext: poppler-utils not installed (`make poppler` as root installs it)"
KINDS = {"paper": "paper-like, embedded font", "plain": "plain, base-14 font"}


def run(ctx: Ctx) -> list[Row]:
    docs = [d for d in DOCS if d[1] <= 300] if ctx.quick else DOCS
    rows: list[Row] = []
    sift = ctx.sift()
    client = sift.client(timeout=300)
    poppler = direct.pdftotext_available()
    errors: list[str] = []
    try:
        from tests.support.pdfs import three_page_pdf

        ctx.origin.set("/bench/warm.pdf", three_page_pdf(), "application/pdf")
        client.post("/v1/fetch", {"url": ctx.origin.url("/bench/warm.pdf")})
        for kind, pages, pace in docs:
            ctx.log(f"generating a {pages}-page {kind} PDF")
            path = ctx.pdfs.path(pages, kind)
            ctx.origin.set(f"/bench/{kind}{pages}.pdf", path.read_bytes(), "application/pdf")
            base = ctx.origin.url(f"/bench/{kind}{pages}.pdf")
            runs = ctx.runs(5 if pages <= 300 else 3, 1)
            pps: dict[str, list[float]] = {"sift": [], "pdftotext": [], "pdfium": [], "pypdf": []}
            mb: dict[str, list[float]] = {"child": [], "children": [], "pdfium": []}
            kids = 0
            for i in range(runs):
                with MemWatch(sift.pid, interval=0.02, marker="pdftext") as watch:
                    r = client.post("/v1/fetch", {"url": f"{base}?run={i}"})
                if r.status != 200 or r.json.get("pdf", {}).get("pages") != pages:
                    raise RuntimeError(f"sift on {pages} pages: {r.status} {r.body[:300]!r}")
                time.sleep(1.0)  # the spares that replace the used ones start
                peaks = watch.peaks
                kids = peaks.total_of("pdftext")
                pps["sift"].append(pages / r.seconds)
                mb["child"].append(peaks.peak_of("pdftext"))
                mb["children"].append(peaks.children_total_peak)
                line = f"{kind} {pages} pages run {i + 1}/{runs}: sift {r.seconds:.2f} s"
                line += f" ({kids} children)"
                if poppler:
                    p = direct.pdftotext_direct(path)
                    pps["pdftotext"].append(pages / p["seconds"])
                    line += f", pdftotext {p['seconds']:.2f} s"
                d = direct.pdfium_direct(path)
                pps["pdfium"].append(pages / d["seconds"])
                mb["pdfium"].append(d["peak_mb"])
                line += f", pdfium {d['seconds']:.2f} s"
                if kind == "paper" and pages <= 300:
                    y = direct.pypdf_direct(path)
                    pps["pypdf"].append(pages / y["seconds"])
                    line += f", pypdf {y['seconds']:.2f} s"
                ctx.log(line)
            t = f"{TITLE}, {pages} pages {KINDS[kind]}"
            note = f"sift: {kids} pdftext processes seen (page-range children and spares)"
            if poppler:
                target = ("ratio", ">=", pace)
                rows.append(
                    Row(
                        t,
                        "pages/s",
                        pps["sift"],
                        pps["pdftotext"],
                        "pdftotext -layout",
                        target,
                        note,
                    )
                )
            else:
                rows.append(skipped(t, "pages/s vs pdftotext", NO_POPPLER))
            alone = "the library alone: no start-up, no checks, no store"
            rows.append(
                Row(
                    t,
                    "pages/s",
                    pps["sift"],
                    pps["pdfium"],
                    "pdfium direct, one process",
                    FASTER_THAN_A_LIBRARY,
                    note=alone,
                )
            )
            if pps["pypdf"]:
                rows.append(
                    Row(
                        t,
                        "pages/s",
                        pps["sift"],
                        pps["pypdf"],
                        "pypdf direct, one process",
                        FASTER_THAN_A_LIBRARY,
                    )
                )
            if kind == "paper":
                rows += [
                    Row(
                        t,
                        "peak MB, one child",
                        mb["child"],
                        mb["pdfium"],
                        "pdfium direct",
                        ONE_CHILD_MB,
                        note="VmHWM sampled every 20 ms",
                    ),
                    Row(
                        t,
                        "peak MB, children together",
                        mb["children"],
                        mb["pdfium"],
                        "pdfium direct",
                        CHILDREN_MB,
                        note="sum of VmRSS at one sample",
                    ),
                ]
        if ctx.quick:
            rows.append(skipped(f"{TITLE}, 2000 pages", "pages/s", "not in --quick"))
    finally:
        client.close()
        errors = ctx.done_with(sift)
    if errors:
        rows[0].note += f"; sift logged {len(errors)} ERROR lines"
    return rows
