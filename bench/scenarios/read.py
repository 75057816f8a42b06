"""13. Read: one question over five sources within one budget (`POST /v1/read`) against five
single fetches each capped at a fifth of it (`/v1/fetch` with `max_tokens`), on the sources of
`tests/support/read_corpus.py` (three long HTML pages, a 40-page PDF, each with one fact
planted deep inside) and a fifth page like them: how many of the five facts each answer holds,
and the time each takes, cold (fresh URLs every run). The single fetches run one after the
other, as an agent's five tool calls do."""

from __future__ import annotations

import time

from bench.context import Ctx
from bench.results import Row
from tests.support.read_corpus import BLOCKED, FACTS, QUESTION, Planted, html_page, install

NAME = "read"
TITLE = "13 read: five sources, one budget"
BUDGET = 3_000
FIFTH = Planted("/read/mills", "The Dunmore mill ground its last sack of barley in 1962.")
ASKED = QUESTION + " When did the Dunmore mill grind its last sack of barley?"


def _recalled(text: str) -> int:
    return sum(p.fact in text for p in (*FACTS, FIFTH))


def run(ctx: Ctx) -> list[Row]:
    urls = [u for u in install(ctx.origin) if u != BLOCKED]
    ctx.origin.set(FIFTH.path, html_page("Mills", FIFTH.fact, 9))
    urls.append(ctx.origin.url(FIFTH.path))
    sift = ctx.sift()
    client = sift.client()
    read_recall, fetch_recall, read_ms, fetch_ms = [], [], [], []
    try:
        for i in range(ctx.runs(5, 2)):
            fresh = [f"{u}?run=r{i}" for u in urls]
            started = time.perf_counter()
            r = client.post("/v1/read", {"urls": fresh, "question": ASKED, "max_tokens": BUDGET})
            read_ms.append((time.perf_counter() - started) * 1000)
            if r.status != 200 or r.json["tokens"] > BUDGET:
                raise RuntimeError(f"/v1/read: {r.status} {r.body[:300]!r}")
            read_recall.append(_recalled(r.json["content"]))
            texts = []
            started = time.perf_counter()
            for url in (f"{u}?run=f{i}" for u in urls):
                body = {"url": url, "max_tokens": BUDGET // 5, "context": False}
                texts.append(str(client.post("/v1/fetch", body).json.get("content", "")))
            fetch_ms.append((time.perf_counter() - started) * 1000)
            fetch_recall.append(_recalled("\n".join(texts)))
    finally:
        client.close()
        ctx.done_with(sift)
    baseline = f"5 fetches of {BUDGET // 5:,} tokens"
    return [
        Row(
            TITLE,
            f"facts recalled of 5 within {BUDGET:,} tokens",
            [float(n) for n in read_recall],
            [float(n) for n in fetch_recall],
            baseline,
            ("sift", ">=", 5),
            "read with the question vs each source's head",
        ),
        Row(TITLE, "ms to answer, cold", read_ms, fetch_ms, baseline, None, "sources in parallel"),
    ]
