"""1. A cold clean fetch of a realistic 100 KB article: `/v1/fetch` latency against the same
work done in one process (a pycurl GET and trafilatura with sift's settings).

Each run asks for a new URL (`?run=N`), so sift's cache misses every time, and the origin
serves a new text on every request, sift's and the baselines' alike: the article with the
request's number woven into each paragraph and heading (`documents.woven`: same size and
structure). Until issue 38 it served the same bytes to every query, and sift's memory of
recent token counts and section splits (keyed by the text) hid ~2 ms that a new page pays.
Both sides are warmed first (trafilatura's first call loads its models), so "cold" means a
cache miss, not a cold process. A third figure, sift's own
`clean_html` in this process, splits the gap into post-processing (link resolution, tables,
title) and the service around it (HTTP, actors, the clean worker's pipe, SQLite, rendering).

The same runs are then repeated with ~100 MB already in sift's cache (4 MB text documents
fetched first; 20 MB in `--quick`): a cold fetch must not cost more as the cache fills.
"""

from __future__ import annotations

import time
from itertools import count
from typing import TYPE_CHECKING

from bench.client import Client
from bench.context import Ctx
from bench.direct import CurlGetter, fetch_and_clean
from bench.documents import article, filler_text, woven
from bench.results import Row

if TYPE_CHECKING:
    from tests.support.origin import OriginHandler

NAME = "cold"
TITLE = "1 cold fetch, 100 KB article"
PATH = "/bench/cold-article"
FILLER = "/bench/cold-filler"
FILLER_MB = 4


def _runs(
    ctx: Ctx, client: Client, getter: CurlGetter, base: str, runs: int, tag: str
) -> tuple[list[float], list[float], list[float], str]:
    """Interleaved runs (after two warm-up rounds): sift, direct, sift's clean in-process."""
    from sift.clean.html import clean_html

    ms_sift: list[float] = []
    ms_direct: list[float] = []
    ms_inproc: list[float] = []
    text = ""
    for i in range(-2, runs):
        r = client.post("/v1/fetch", {"url": f"{base}?{tag}=s{i}"})
        if r.status != 200 or r.json["cached"]:
            raise RuntimeError(f"sift cold fetch: {r.status} {r.body[:200]!r}")
        started = time.perf_counter()
        text = fetch_and_clean(getter, f"{base}?{tag}=d{i}")
        direct = time.perf_counter() - started
        started = time.perf_counter()
        body, ctype = getter.get(f"{base}?{tag}=p{i}")
        clean_html(body, ctype, f"{base}?{tag}=p{i}", 5_000_000)
        inproc = time.perf_counter() - started
        if i < 0:
            continue
        ms_sift.append(r.seconds * 1000)
        ms_direct.append(direct * 1000)
        ms_inproc.append(inproc * 1000)
        ctx.log(
            f"{tag} run {i + 1}/{runs}: sift {ms_sift[-1]:.0f} ms, direct {ms_direct[-1]:.0f} "
            f"ms, sift's clean in-process {ms_inproc[-1]:.0f} ms"
        )
    return ms_sift, ms_direct, ms_inproc, text


def _fill(ctx: Ctx, client: Client, megabytes: int) -> None:
    ctx.origin.set(FILLER, filler_text(FILLER_MB * 1_000_000), "text/plain; charset=utf-8")
    for k in range(megabytes // FILLER_MB):
        r = client.post("/v1/fetch", {"url": ctx.origin.url(f"{FILLER}?k={k}")})
        if r.status != 200:
            raise RuntimeError(f"filling the cache: {r.status} {r.body[:200]!r}")
    ctx.log(f"{megabytes} MB of text documents now cached")


def _serve_new_texts(ctx: Ctx, page: bytes) -> None:
    """PATH answers each request with `page` numbered anew (`documents.woven`)."""
    numbers = count(1)

    async def serve(h: OriginHandler) -> None:
        await h.send(woven(page, next(numbers)))

    ctx.origin.route(PATH, serve)


def run(ctx: Ctx) -> list[Row]:
    page = article(100_000, seed=1)
    _serve_new_texts(ctx, page)
    base = ctx.origin.url(PATH)
    sift = ctx.sift()
    client = sift.client()
    getter = CurlGetter()
    runs = ctx.runs(30, 5)
    fill = ctx.runs(100, 20)
    try:
        ms_sift, ms_direct, ms_inproc, text = _runs(ctx, client, getter, base, runs, "run")
        _fill(ctx, client, fill)
        full_sift, full_direct, _, _ = _runs(ctx, client, getter, base, runs, "full")
    finally:
        client.close()
        getter.close()
        errors = ctx.done_with(sift)
    size = len(woven(page, 0)) // 1000
    note = f"page {size} KB, a new text each request → {len(text) // 1000} KB of markdown"
    if errors:
        note += f"; sift logged {len(errors)} ERROR lines"
    direct = "pycurl + trafilatura, one process"
    return [
        Row(TITLE, "latency ms", ms_sift, ms_direct, direct, ("ratio", "<=", 1.15), note),
        Row(
            TITLE,
            "latency ms",
            ms_sift,
            ms_inproc,
            "pycurl + sift's clean_html, one process",
            ("ratio", "<=", 1.05),  # the service's own overhead on a cold page (issue 38)
            "where the gap goes: service vs post-processing",
        ),
        Row(
            TITLE,
            f"latency ms, {fill} MB cached",
            full_sift,
            full_direct,
            direct,
            ("ratio", "<=", 1.15),  # a full cache costs a cold fetch nothing: row 1's bound
            "the same, after filling the cache",
        ),
    ]
