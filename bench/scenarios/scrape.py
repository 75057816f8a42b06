"""3. The Firecrawl route's overhead: `/v2/scrape` against `/v1/fetch` on the same cached
page, one request at a time on a kept-alive connection, the two routes alternating.

A run is 50 requests of each; its figure is the median latency of each route.
"""

from __future__ import annotations

import statistics

from bench.context import Ctx
from bench.documents import article
from bench.results import Row

NAME = "scrape"
TITLE = "3 /v2/scrape vs /v1/fetch, cached"
PATH = "/bench/scrape-article"


def run(ctx: Ctx) -> list[Row]:
    ctx.origin.set(PATH, article(100_000, seed=3))
    url = ctx.origin.url(PATH)
    sift = ctx.sift()
    client = sift.client()
    fetch_body = {"url": url}
    scrape_body = {"url": url, "formats": ["markdown"], "waitFor": 3000, "onlyMainContent": True}
    runs, per_run = ctx.runs(7, 2), ctx.runs(50, 20)
    ms_scrape: list[float] = []
    ms_fetch: list[float] = []
    try:
        for path, body in (("/v1/fetch", fetch_body), ("/v2/scrape", scrape_body)):
            r = client.post(path, body)
            if r.status != 200:
                raise RuntimeError(f"{path}: {r.status} {r.body[:200]!r}")
        for _ in range(20):  # warm-up
            client.post("/v1/fetch", fetch_body)
            client.post("/v2/scrape", scrape_body)
        for i in range(runs):
            fetch, scrape = [], []
            for _ in range(per_run):
                fetch.append(client.post("/v1/fetch", fetch_body).seconds * 1000)
                scrape.append(client.post("/v2/scrape", scrape_body).seconds * 1000)
            ms_fetch.append(statistics.median(fetch))
            ms_scrape.append(statistics.median(scrape))
            ctx.log(
                f"run {i + 1}/{runs}: /v2/scrape {ms_scrape[-1]:.2f} ms, "
                f"/v1/fetch {ms_fetch[-1]:.2f} ms (medians of {per_run})"
            )
    finally:
        client.close()
        errors = ctx.done_with(sift)
    note = f"each run: median of {per_run} requests per route"
    if errors:
        note += f"; sift logged {len(errors)} ERROR lines"
    return [
        Row(
            TITLE,
            "latency ms",
            ms_scrape,
            ms_fetch,
            "/v1/fetch, same page",
            ("ratio", "<=", 1.05),
            note,
        )
    ]
