"""2. Cached fetch throughput: requests/s for one cached page at concurrency 16, against a
bare Tornado handler that answers the same bytes (the ceiling for this stack).

The load comes from `wrk` (C, epoll, 2 threads; `make bench` installs it), else from
`bench.loadgen` (asyncio, its own process). Either shares the machine's cores with the
server, equally for sift and for the ceiling. Runs alternate between the two servers. From
the second request on, sift answers this page ready at its edge (`sift/web/ready.py`).
"""

from __future__ import annotations

from bench import loadgen, wrk
from bench.ceiling import Ceiling
from bench.context import Ctx
from bench.documents import article
from bench.results import Row

NAME = "cached"
TITLE = "2 cached fetch throughput, c=16"
PATH = "/bench/cached-article"
CONCURRENCY = 16


def _rps(ctx: Ctx, port: int, token: str | None, body: dict[str, str], seconds: float) -> float:
    if wrk.available():
        return wrk.post_rps(
            port,
            "/v1/fetch",
            body,
            token,
            concurrency=CONCURRENCY,
            seconds=seconds,
            threads=2,
            workdir=ctx.tmp,
        )["rps"]
    spec = {
        "port": port,
        "token": token,
        "concurrency": CONCURRENCY,
        "duration": seconds,
        "grace": 10,
        "mix": [{"name": "cached", "path": "/v1/fetch", "body": body}],
    }
    result = loadgen.run_spec(spec)
    bad = {k: v for k, v in result["classes"]["cached"]["status"].items() if k != "200"}
    if bad:
        raise RuntimeError(f"non-200 answers under load: {bad} {result['samples']}")
    return float(result["rps"])


def run(ctx: Ctx) -> list[Row]:
    ctx.origin.set(PATH, article(100_000, seed=2))
    url = ctx.origin.url(PATH)
    body = {"url": url}
    sift = ctx.sift()
    client = sift.client()
    first = client.post("/v1/fetch", body)
    again = client.post("/v1/fetch", body)
    client.close()
    if first.status != 200 or not again.json.get("cached"):
        raise RuntimeError(f"could not cache the page: {first.status} {first.body[:200]!r}")
    answer = ctx.tmp / "cached-answer.json"
    answer.write_bytes(again.body)
    runs = ctx.runs(5, 2)
    seconds = 2.0 if ctx.quick else 5.0
    tool = "wrk" if wrk.available() else "bench.loadgen"
    ctx.log(
        f"{runs} runs of {seconds:g} s each side with {tool}, answer {len(again.body) // 1000} KB"
    )
    rps_sift: list[float] = []
    rps_ceiling: list[float] = []
    try:
        with Ceiling(str(answer)) as ceiling_port:
            _rps(ctx, ceiling_port, None, body, 1.0)  # warm-up
            _rps(ctx, sift.port, sift.token, body, 1.0)
            for i in range(runs):
                rps_sift.append(_rps(ctx, sift.port, sift.token, body, seconds))
                rps_ceiling.append(_rps(ctx, ceiling_port, None, body, seconds))
                ctx.log(
                    f"run {i + 1}/{runs}: sift {rps_sift[-1]:.0f}/s, "
                    f"bare Tornado {rps_ceiling[-1]:.0f}/s"
                )
    finally:
        errors = ctx.done_with(sift)
    note = f"load from {tool}; answer {len(again.body) // 1000} KB"
    if errors:
        note += f"; sift logged {len(errors)} ERROR lines"
    return [
        Row(
            TITLE,
            "requests/s",
            rps_sift,
            rps_ceiling,
            "bare Tornado, same bytes",
            ("ratio", ">=", 0.75),
            note,
        )
    ]
