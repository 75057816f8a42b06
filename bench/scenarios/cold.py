"""1. A cold clean fetch of a realistic 100 KB article: `/v1/fetch` latency against the same
work done in one process (a pycurl GET and trafilatura with sift's settings).

Each run asks for a new URL (`?run=N`), so sift's cache misses every time; the origin serves
the same bytes for every query. Both sides are warmed first (trafilatura's first call loads
its models), so "cold" means a cache miss, not a cold process. A third figure, sift's own
`clean_html` in this process, splits the gap into post-processing (link resolution, tables,
title) and the service around it (HTTP, actors, the clean worker's pipe, SQLite, rendering).
"""

from __future__ import annotations

import time

from bench.context import Ctx
from bench.direct import CurlGetter, fetch_and_clean
from bench.documents import article
from bench.results import Row

NAME = "cold"
TITLE = "1 cold fetch, 100 KB article"
PATH = "/bench/cold-article"


def run(ctx: Ctx) -> list[Row]:
    from sift.clean.html import clean_html

    page = article(100_000, seed=1)
    ctx.origin.set(PATH, page)
    base = ctx.origin.url(PATH)
    sift = ctx.sift()
    client = sift.client()
    getter = CurlGetter()
    runs = ctx.runs(20, 5)
    ms_sift: list[float] = []
    ms_direct: list[float] = []
    ms_inproc: list[float] = []
    try:
        for i in range(-2, runs):  # two warm-up rounds
            r = client.post("/v1/fetch", {"url": f"{base}?run=s{i}"})
            if r.status != 200 or r.json["cached"]:
                raise RuntimeError(f"sift cold fetch: {r.status} {r.body[:200]!r}")
            started = time.perf_counter()
            text = fetch_and_clean(getter, f"{base}?run=d{i}")
            direct = time.perf_counter() - started
            started = time.perf_counter()
            body, ctype = getter.get(f"{base}?run=p{i}")
            clean_html(body, ctype, f"{base}?run=p{i}", 5_000_000)
            inproc = time.perf_counter() - started
            if i < 0:
                continue
            ms_sift.append(r.seconds * 1000)
            ms_direct.append(direct * 1000)
            ms_inproc.append(inproc * 1000)
            ctx.log(
                f"run {i + 1}/{runs}: sift {ms_sift[-1]:.0f} ms, direct {ms_direct[-1]:.0f} "
                f"ms, sift's clean in-process {ms_inproc[-1]:.0f} ms"
            )
    finally:
        client.close()
        getter.close()
        errors = ctx.done_with(sift)
    note = f"page {len(page) // 1000} KB → {len(text) // 1000} KB of markdown"
    if errors:
        note += f"; sift logged {len(errors)} ERROR lines"
    return [
        Row(
            TITLE,
            "latency ms",
            ms_sift,
            ms_direct,
            "pycurl + trafilatura, one process",
            ("ratio", "<=", 1.15),
            note,
        ),
        Row(
            TITLE,
            "latency ms",
            ms_sift,
            ms_inproc,
            "pycurl + sift's clean_html, one process",
            None,
            "where the gap goes: service vs post-processing",
        ),
    ]
