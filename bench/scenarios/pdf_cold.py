"""4. PDFs, cold: generated 300- and 2,000-page text PDFs through `/v1/fetch`, in pages/s,
against pypdf called directly in one process and `pdftotext -layout` where it is installed.

sift's figure is the whole request as a client sees it (the origin sends the PDF, sift runs
its `sift pdftext` children, stores the pages, answers the map); each run asks for a new URL
so the cache misses. pypdf's figure excludes its process's start-up (see `bench.direct`).

Memory: a sampler (`bench.procmem`, every 20 ms) follows the sift process's children whose
command line holds `pdftext`; a child's peak is its own VmHWM, and the total is the sum of
the children's VmRSS at one sample (two children run at once on a long document). pypdf's
and pdftotext's peaks are their `ru_maxrss`.
"""

from __future__ import annotations

from bench import direct
from bench.context import Ctx
from bench.procmem import MemWatch
from bench.results import Row, skipped

NAME = "pdf_cold"
TITLE = "4 PDF cold"


def run(ctx: Ctx) -> list[Row]:
    sizes = [300] if ctx.quick else [300, 2000]
    rows: list[Row] = []
    sift = ctx.sift()
    client = sift.client(timeout=300)
    poppler = direct.pdftotext_available()
    errors: list[str] = []
    try:
        for pages in sizes:
            ctx.log(f"generating a {pages}-page PDF")
            path = ctx.pdfs.path(pages)
            ctx.origin.set(f"/bench/doc{pages}.pdf", path.read_bytes(), "application/pdf")
            base = ctx.origin.url(f"/bench/doc{pages}.pdf")
            runs = ctx.runs(5 if pages <= 300 else 3, 1)
            pps_sift, pps_pypdf, pps_poppler = [], [], []
            mb_child, mb_children, mb_pypdf, mb_poppler = [], [], [], []
            for i in range(runs):
                with MemWatch(sift.pid, interval=0.02, marker="pdftext") as watch:
                    r = client.post("/v1/fetch", {"url": f"{base}?run={i}"})
                if r.status != 200 or r.json.get("pdf", {}).get("pages") != pages:
                    raise RuntimeError(f"sift on {pages} pages: {r.status} {r.body[:300]!r}")
                peaks = watch.peaks
                pps_sift.append(pages / r.seconds)
                mb_child.append(peaks.peak_of("pdftext"))
                mb_children.append(peaks.children_total_peak)
                d = direct.pypdf_direct(path)
                pps_pypdf.append(pages / d["seconds"])
                mb_pypdf.append(d["peak_mb"])
                line = (
                    f"{pages} pages run {i + 1}/{runs}: sift {r.seconds:.1f} s "
                    f"({peaks.total_of('pdftext')} children, peak {mb_child[-1]:.0f} MB "
                    f"each, {mb_children[-1]:.0f} MB together), pypdf {d['seconds']:.1f} s "
                    f"({d['peak_mb']:.0f} MB)"
                )
                if poppler:
                    p = direct.pdftotext_direct(path)
                    pps_poppler.append(pages / p["seconds"])
                    mb_poppler.append(p["peak_mb"])
                    line += f", pdftotext {p['seconds']:.1f} s ({p['peak_mb']:.0f} MB)"
                ctx.log(line)
            t = f"{TITLE}, {pages} pages"
            rows.append(
                Row(
                    t,
                    "pages/s",
                    pps_sift,
                    pps_pypdf,
                    "pypdf direct, one process",
                    ("ratio", ">=", 1.0),
                    "sift: 2 children over 200 pages",
                )
            )
            if poppler:
                rows.append(Row(t, "pages/s", pps_sift, pps_poppler, "pdftotext -layout"))
            else:
                rows.append(skipped(t, "pages/s vs pdftotext", "poppler-utils not installed"))
            rows.append(
                Row(
                    t,
                    "peak MB, one child",
                    mb_child,
                    mb_pypdf,
                    "pypdf direct",
                    note="VmHWM sampled every 20 ms",
                )
            )
            rows.append(
                Row(
                    t,
                    "peak MB, children together",
                    mb_children,
                    mb_pypdf,
                    "pypdf direct",
                    note="sum of VmRSS at one sample",
                )
            )
        if ctx.quick:
            rows.append(skipped(f"{TITLE}, 2000 pages", "pages/s", "not in --quick"))
    finally:
        client.close()
        errors = ctx.done_with(sift)
    if errors:
        rows[0].note += f"; sift logged {len(errors)} ERROR lines"
    return rows
