"""9. Cached fetch through PostgreSQL vs through SQLite (issue 15): requests/s for one cached
page at concurrency 16, with the in-memory hot set off (`[cache] memory = 0`) so that every
answer is read from the store. PostgreSQL is a throwaway local cluster (tests/support/pg.py) on the
same 2 cores; runs alternate between the two sifts."""

from __future__ import annotations

from typing import Any

from bench import pg
from bench.context import Ctx
from bench.documents import article
from bench.results import Row, skipped
from bench.scenarios.cached import _rps

NAME = "store_pg"
TITLE = "9 cached fetch from the store, PostgreSQL vs SQLite, c=16"
PATH = "/bench/store-article"


def _cached(ctx: Ctx, overrides: dict[str, Any]) -> Any:
    sift = ctx.sift({"cache": {"memory": 0}, **overrides})
    client = sift.client()
    body = {"url": ctx.origin.url(PATH)}
    client.post("/v1/fetch", body)
    for _ in range(50):  # the first answer does not wait for its cache write
        if client.post("/v1/fetch", body).json.get("cached"):
            break
    else:
        raise RuntimeError("could not cache the page")
    client.close()
    return sift


def run(ctx: Ctx) -> list[Row]:
    try:
        with pg.cluster() as cluster:
            return _run(ctx, cluster)
    except pg.NoPostgres as exc:
        return [skipped(TITLE, "requests/s", str(exc))]


def _run(ctx: Ctx, cluster: Any) -> list[Row]:
    ctx.origin.set(PATH, article(100_000, seed=9))
    body = {"url": ctx.origin.url(PATH)}
    runs = ctx.runs(5, 2)
    seconds = 2.0 if ctx.quick else 5.0
    pg_rps: list[float] = []
    sqlite_rps: list[float] = []
    on_pg = _cached(ctx, {"store": {"url": cluster.create()}})
    lite = _cached(ctx, {})
    _rps(ctx, on_pg.port, on_pg.token, body, 1.0)  # warm-up
    _rps(ctx, lite.port, lite.token, body, 1.0)
    for i in range(runs):
        pg_rps.append(_rps(ctx, on_pg.port, on_pg.token, body, seconds))
        sqlite_rps.append(_rps(ctx, lite.port, lite.token, body, seconds))
        ctx.log(f"run {i + 1}/{runs}: PostgreSQL {pg_rps[-1]:.0f}/s, SQLite {sqlite_rps[-1]:.0f}/s")
    errors = ctx.done_with(on_pg) + ctx.done_with(lite)
    note = "hot set off: every answer read from the store; PostgreSQL local, same cores"
    if errors:
        note += f"; sift logged {len(errors)} ERROR lines"
    return [Row(TITLE, "requests/s", pg_rps, sqlite_rps, "SQLite", ("ratio", ">=", 0.8), note)]
