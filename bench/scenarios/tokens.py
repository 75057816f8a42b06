"""12. Tokens: how fast sift counts an answer's tokens (`o200k_base`, `sift.documents.tokens`)
on the clean markdown of the 100 KB article, and what a budget costs a cached fetch: the
median latency of `/v1/fetch` read by `max_tokens` windows (`offset`) against the same page
answered whole, one request at a time, alternating.

Counting is measured in this process on the text sift answered, each run on a fresh copy (no
remembered count)."""

from __future__ import annotations

import statistics
import time

from bench.context import Ctx
from bench.documents import article
from bench.results import Row
from sift.documents import tokens

NAME = "tokens"
TITLE = "12 tokens: counting, budgeted reads"
PATH = "/bench/tokens-article"
WINDOW = 2_000  # tokens a budgeted read asks for


def _count_rate(text: str, runs: int) -> tuple[list[float], int]:
    """Tokens counted per second, one figure a run; and the count."""
    enc = tokens.tokenizer()  # loaded before the clock starts
    rates, n = [], 0
    for i in range(runs):
        fresh = f"{text}\n{i}"  # a new text: nothing remembered
        started = time.perf_counter()
        n = int(enc.count(fresh))
        rates.append(n / (time.perf_counter() - started))
    return rates, n


def run(ctx: Ctx) -> list[Row]:
    ctx.origin.set(PATH, article(100_000, seed=11))
    url = ctx.origin.url(PATH)
    sift = ctx.sift()
    client = sift.client()
    whole_body = {"url": url, "context": False}
    try:
        whole = client.post("/v1/fetch", whole_body)
        if whole.status != 200:
            raise RuntimeError(f"/v1/fetch: {whole.status} {whole.body[:200]!r}")
        text = str(whole.json["content"])
        rates, n = _count_rate(text, ctx.runs(20, 5))
        windowed, plain = [], []
        for _ in range(ctx.runs(30, 8)):
            offset: int | None = 0
            started = time.perf_counter()
            while offset is not None:
                body = {**whole_body, "max_tokens": WINDOW, "offset": offset}
                env = client.post("/v1/fetch", body).json
                nxt = env.get("next")  # a number: the offset of the rest
                offset = nxt if isinstance(nxt, int) else None
            windowed.append((time.perf_counter() - started) * 1000)
            started = time.perf_counter()
            client.post("/v1/fetch", whole_body)
            plain.append((time.perf_counter() - started) * 1000)
    finally:
        client.close()
        ctx.done_with(sift)
    ratio_note = f"whole page by {WINDOW}-token windows vs in one answer"
    return [
        Row(
            TITLE,
            "tokens counted/s (o200k_base)",
            rates,
            target=("sift", ">=", 1_000_000),
            note=f"{len(text):,} characters, {n:,} tokens; "
            f"{statistics.median(rates) * len(text) / n / 1e6:.1f} MB/s",
        ),
        Row(
            TITLE,
            "ms to read the page, cached",
            windowed,
            plain,
            "one whole answer",
            ("ratio", "<=", 12.0),  # a budgeted read: counting its window (8× today), bounded
            ratio_note,
        ),
    ]
