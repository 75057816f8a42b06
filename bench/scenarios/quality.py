"""7. Clean quality and speed on the article-extraction benchmark (`bench/aeb.py`), its 181
real pages against trafilatura called directly as the benchmark runs it.

Quality goes through `/v1/fetch`: each page is served from the loopback origin and fetched
by a real `sift serve`, so what is scored is what an agent gets (word F1 with the
benchmark's metric, empty answers, tables that are not valid GFM). Speed is the clean worker
alone: the pages go, as the fetch pipeline sends them, through a real clean worker process
(`sift.clean.worker.CleanWorker`: msgpack over a pipe, the same `dispatch.clean`), against
`trafilatura.extract` on the same pages in this process; runs interleave, and the ratio is
taken run by run. Fetching is the cold-fetch scenario's business, not this one's.

With only `ground-truth.json` present, the real rows say "data absent" and a synthetic
stand-in (each ground truth in a boilerplate template) is scored instead, labelled as such.
"""

from __future__ import annotations

import time

from bench import aeb
from bench.context import Ctx
from bench.results import Row, absent

NAME = "quality"
TITLE = "7 clean quality (aeb)"
SPEED = "7 clean speed (aeb)"
_DEADLINE = 30.0  # seconds per page in the worker: far above any page of the benchmark


def _quality(ctx: Ctx, pages: list[aeb.Page], label: str) -> list[Row]:
    for key, html, _url, _true in pages:
        ctx.origin.set(f"/aeb/{key}", html)
    served = [(k, h, ctx.origin.url(f"/aeb/{k}"), t) for k, h, _u, t in pages]
    # Long articles must come back whole, not as a map: raise the output cap.
    sift = ctx.sift({"out_cap": 5_000_000})
    client = sift.client()
    fallbacks = 0

    def through_sift(_html: bytes, url: str) -> str:
        nonlocal fallbacks
        r = client.post("/v1/fetch", {"url": url, "context": False})
        if r.status != 200:
            raise RuntimeError(f"sift on {url}: {r.status} {r.body[:200]!r}")
        fallbacks += r.json.get("extraction") == "fallback"
        return str(r.json["content"])

    try:
        ctx.log(f"{label}: {len(pages)} pages through sift")
        s = aeb.score(through_sift, served)
        ctx.log(f"{label}: trafilatura directly")
        d = aeb.score(aeb.trafilatura_direct, served)
    finally:
        client.close()
        errors = ctx.done_with(sift)
    ctx.log(f"{label}: F1 sift {s['f1']:.4f}, trafilatura {d['f1']:.4f}")
    note = (
        f"{label}, {s['pages']} pages through /v1/fetch; sift P {s['precision']:.3f} "
        f"R {s['recall']:.3f}, {fallbacks} flagged fallback; trafilatura P "
        f"{d['precision']:.3f} R {d['recall']:.3f}, empty {d['empty']}, "
        f"bad tables {d['bad_tables']}"
    )
    if errors:
        note += f"; sift logged {len(errors)} ERROR lines"
    scenario = f"{TITLE}, {label}"
    return [
        Row(
            scenario,
            "word F1",
            [s["f1"]],
            [d["f1"]],
            "trafilatura direct",
            ("ratio", ">=", 1.0),
            note,
        ),
        Row(
            scenario,
            "empty answers",
            [s["empty"]],
            [d["empty"]],
            "trafilatura direct",
            ("sift", "<=", 0),
        ),
        Row(
            scenario,
            "invalid GFM tables (pages)",
            [s["bad_tables"]],
            [d["bad_tables"]],
            "trafilatura direct",
            ("sift", "<=", 0),
        ),
    ]


def _pages_per_s(extract: aeb.Extractor, pages: list[aeb.Page]) -> float:
    started = time.perf_counter()
    for _key, html, url, _true in pages:
        extract(html, url)
    return len(pages) / (time.perf_counter() - started)


def _speed(ctx: Ctx, pages: list[aeb.Page], label: str) -> list[Row]:
    import subprocess

    from sift.clean.protocol import CleanTask
    from sift.clean.worker import CleanWorker

    worker = CleanWorker(stderr=subprocess.DEVNULL)
    worker.start()

    def through_worker(html: bytes, url: str) -> str:
        task = CleanTask(kind="html", body=html, content_type=aeb.CONTENT_TYPE, url=url)
        return worker.run(task, _DEADLINE).text

    runs = ctx.runs(3, 1)
    sift_rates: list[float] = []
    direct_rates: list[float] = []
    try:
        through_worker(*pages[0][1:3])  # the worker's imports are not the benchmark
        aeb.trafilatura_direct(*pages[0][1:3])
        for i in range(runs):
            sift_rates.append(_pages_per_s(through_worker, pages))
            direct_rates.append(_pages_per_s(aeb.trafilatura_direct, pages))
            ctx.log(
                f"{label} run {i + 1}/{runs}: sift {sift_rates[-1]:.1f} pages/s, "
                f"trafilatura {direct_rates[-1]:.1f}"
            )
    finally:
        worker.close()
    note = (
        f"{label}, {len(pages)} pages, one clean worker process vs trafilatura.extract "
        f"in one process; runs interleaved"
    )
    return [
        Row(
            f"{SPEED}, {label}",
            "pages/s",
            sift_rates,
            direct_rates,
            "trafilatura direct",
            ("ratio", ">=", 0.85),
            note,
        ),
    ]


def run(ctx: Ctx) -> list[Row]:
    data = aeb.DATA
    limit = 40 if ctx.quick else None
    if not (data / "ground-truth.json").exists():
        return [absent(TITLE, "word F1", f"no benchmark data in {data}")]
    if (data / "html").is_dir():
        pages = list(aeb.load_pages(data, limit))
        return _quality(ctx, pages, "benchmark") + _speed(ctx, pages, "benchmark")
    rows = [
        absent(
            f"{TITLE}, benchmark",
            "word F1",
            f"{data}/html/ is missing (only ground-truth.json): not scored",
        )
    ]
    return rows + _quality(ctx, list(aeb.synthetic_pages(data, limit)), "synthetic stand-in")
