"""7. Clean quality on the article-extraction benchmark (`bench/aeb.py`): sift's clean mode
through `/v1/fetch` (each page served from the loopback origin) against trafilatura called
directly, with the benchmark's own metric.

The benchmark's HTML pages may be absent (only `ground-truth.json` shipped): then the real
row says "data absent", and a second row scores aeb's synthetic stand-in (each ground truth
inside a boilerplate template) — which checks sift's plumbing and post-processing, and is
labelled as what it is, not as the benchmark.
"""

from __future__ import annotations

from bench import aeb
from bench.context import Ctx
from bench.results import Row, absent

NAME = "quality"
TITLE = "7 clean quality (aeb)"


def _score(ctx: Ctx, pages: list[aeb.Page], label: str) -> list[Row]:
    for key, html, _url, _true in pages:
        ctx.origin.set(f"/aeb/{key}", html)
    served = [(k, h, ctx.origin.url(f"/aeb/{k}"), t) for k, h, _u, t in pages]
    # Long articles must come back whole, not as a map: raise the output cap.
    sift = ctx.sift({"out_cap": 5_000_000})
    client = sift.client()

    def through_sift(_html: bytes, url: str) -> str:
        r = client.post("/v1/fetch", {"url": url, "context": False})
        if r.status != 200:
            raise RuntimeError(f"sift on {url}: {r.status} {r.body[:200]!r}")
        return str(r.json["content"])

    try:
        ctx.log(f"{label}: {len(pages)} pages through sift")
        s = aeb.score(through_sift, served)
        ctx.log(f"{label}: trafilatura directly")
        d = aeb.score(aeb.trafilatura_direct, served)
    finally:
        client.close()
        errors = ctx.done_with(sift)
    ctx.log(f"{label}: F1 sift {s['f1']:.3f}, trafilatura {d['f1']:.3f}")
    note = (
        f"{label}, {s['pages']} pages; sift P {s['precision']:.3f} R {s['recall']:.3f}, "
        f"empty {s['empty']}, bad tables {s['bad_tables']}; trafilatura P "
        f"{d['precision']:.3f} R {d['recall']:.3f}, empty {d['empty']}"
    )
    if errors:
        note += f"; sift logged {len(errors)} ERROR lines"
    return [
        Row(
            f"{TITLE}, {label}",
            "word F1",
            [s["f1"]],
            [d["f1"]],
            "trafilatura direct",
            ("ratio", ">=", 1.0),
            note,
        )
    ]


def run(ctx: Ctx) -> list[Row]:
    data = aeb.DATA
    limit = 40 if ctx.quick else None
    if not (data / "ground-truth.json").exists():
        return [absent(TITLE, "word F1", f"no benchmark data in {data}")]
    if (data / "html").is_dir():
        return _score(ctx, list(aeb.load_pages(data, limit)), "benchmark")
    rows = [
        absent(
            f"{TITLE}, benchmark",
            "word F1",
            f"{data}/html/ is missing (only ground-truth.json): not scored",
        )
    ]
    return rows + _score(ctx, list(aeb.synthetic_pages(data, limit)), "synthetic stand-in")
