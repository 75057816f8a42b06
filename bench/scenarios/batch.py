"""6. Batch: the drain time of a 32-target job against 32 sequential `/v1/fetch` calls to
the same kind of targets — distinct and uncached on both sides (each its own URL).

The job's time runs from the submit until a status poll (every 25 ms) sees it finished, so
it carries up to one poll interval of slack. The two sides alternate which goes first.
"""

from __future__ import annotations

import time

from bench.context import Ctx
from bench.documents import article
from bench.results import Row

NAME = "batch"
TITLE = "6 batch, 32 targets"
PATH = "/bench/batch-article"
TARGETS = 32
FINISHED = ("done", "partial", "failed", "cancelled")


def _batch(client, urls: list[str], limit: float = 300) -> float:
    started = time.perf_counter()
    r = client.post("/v1/batch", {"targets": [{"url": u} for u in urls]})
    if r.status != 202:
        raise RuntimeError(f"batch submit: {r.status} {r.body[:200]!r}")
    job = r.json["job_id"]
    while time.perf_counter() - started < limit:
        s = client.get(f"/v1/batch/{job}")
        if s.json["status"] in FINISHED:
            elapsed = time.perf_counter() - started
            bad = [t for t in s.json["targets"] if t["status"] != "done"]
            if s.json["status"] != "done" or bad:
                raise RuntimeError(f"batch ended {s.json['status']}: {bad[:2]}")
            return elapsed
        time.sleep(0.025)
    raise RuntimeError(f"batch job not done in {limit:.0f} s")


def _sequential(client, urls: list[str]) -> float:
    started = time.perf_counter()
    for u in urls:
        r = client.post("/v1/fetch", {"url": u})
        if r.status != 200 or r.json["cached"]:
            raise RuntimeError(f"sequential fetch: {r.status} {r.body[:200]!r}")
    return time.perf_counter() - started


def run(ctx: Ctx) -> list[Row]:
    ctx.origin.set(PATH, article(100_000, seed=6))
    base = ctx.origin.url(PATH)
    sift = ctx.sift()
    client = sift.client()
    runs = ctx.runs(5, 1)
    s_batch: list[float] = []
    s_seq: list[float] = []
    try:
        _sequential(client, [f"{base}?warm={k}" for k in range(4)])
        _batch(client, [f"{base}?warmb={k}" for k in range(4)])
        for i in range(runs):
            b_urls = [f"{base}?b={i}-{k}" for k in range(TARGETS)]
            s_urls = [f"{base}?s={i}-{k}" for k in range(TARGETS)]
            if i % 2 == 0:
                s_batch.append(_batch(client, b_urls))
                s_seq.append(_sequential(client, s_urls))
            else:
                s_seq.append(_sequential(client, s_urls))
                s_batch.append(_batch(client, b_urls))
            ctx.log(f"run {i + 1}/{runs}: batch {s_batch[-1]:.2f} s, sequential {s_seq[-1]:.2f} s")
    finally:
        client.close()
        errors = ctx.done_with(sift)
    note = "poll every 25 ms"
    if errors:
        note += f"; sift logged {len(errors)} ERROR lines"
    return [
        Row(
            TITLE,
            "drain seconds",
            s_batch,
            s_seq,
            "32 sequential /v1/fetch",
            ("ratio", "<=", 1.1),
            note,
        )
    ]
