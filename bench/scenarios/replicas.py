"""11. A 64-target batch on 2 replicas vs 1 (issue 15): two `sift serve` replicas on one
PostgreSQL (a throwaway local cluster) against one sift alone on its own database of the
same cluster, same config.

The shape: a job holds 32 targets at most and a caller one live job, and a job drains
serially (one target at a time) on the replica that holds it. A replica holding fewer jobs
than `[batch] workers` takes jobs waiting at one holding more (`PgStore.batch_steal`), so
the jobs need not be spread by hand. The 64 targets are 4 jobs of 16 from 4 callers, and
the 2 replicas get them two ways: all through one replica (the one alternates), which is
what this measures against the lone sift, and spread as a load balancer would (caller i to
replica i mod 2), as context. With `workers = 2` a replica has 2 targets in flight, so 1
replica drains 32 in a row per worker and 2 replicas 16.

The origin answers every target after DELAY seconds, like a remote site, so the origin and
not the 2 cores should be the limit: the ideal is 32 × DELAY against 16 × DELAY (0.5×), plus,
through one replica, up to a second before the idle one asks (`STEAL_EVERY`). Each run has
its own URLs (nothing cached). Every sift stays up throughout (the lone one on its own
database, which the replicas cannot take from); which side goes first rotates. The time runs
from the first submit until polls (every 50 ms) see every job finished. The CPU seconds of
the sift process trees and of PostgreSQL over each run say what limited it.
"""

from __future__ import annotations

import os
import statistics
import time
from pathlib import Path
from typing import Any

from bench import pg
from bench.client import Client
from bench.context import Ctx
from bench.documents import article
from bench.procmem import descendants
from bench.results import Row, skipped
from bench.scenarios.batch import FINISHED
from bench.sift_proc import SiftProcess

NAME = "replicas"
TITLE = "11 batch of 64 targets, 2 replicas (all through one) vs 1 (PostgreSQL)"
TITLE_SPREAD = "11 batch of 64 targets, 2 replicas (spread by hand) vs 1 (PostgreSQL)"
METRIC = "drain seconds"
PATH = "/bench/replica-article"
DELAY = 0.2  # seconds the origin takes to answer each target
CALLERS = 4
PER_JOB = 16
WORKERS = 2  # [batch] workers, per replica
POLL = 0.05
LIMIT = 300.0


def _cpu(pid: int) -> float:
    """CPU seconds (user + system) used so far by `pid` and its live descendants."""
    ticks = 0
    for p in {pid} | descendants(pid):
        try:
            fields = Path(f"/proc/{p}/stat").read_text().rsplit(")", 1)[1].split()
            ticks += int(fields[11]) + int(fields[12])
        except (OSError, IndexError, ValueError):
            continue
    return ticks / os.sysconf("SC_CLK_TCK")


def _machine() -> float:
    """Busy CPU seconds of the whole machine so far, all cores (/proc/stat: not idle, not
    waiting for I/O). The other helpers' and benchmarks' load shows here."""
    ticks = [int(x) for x in Path("/proc/stat").read_text().split("\n", 1)[0].split()[1:]]
    return (sum(ticks) - ticks[3] - ticks[4]) / os.sysconf("SC_CLK_TCK")


def _counter(s: SiftProcess, name: str) -> float:
    """A metric's value from `s`'s /metrics (0 when it has none)."""
    c = s.client()
    try:
        for line in c.get("/metrics").body.decode().splitlines():
            if line.startswith(name + " "):
                return float(line.split()[1])
        return 0.0
    finally:
        c.close()


def _drain(replicas: list[SiftProcess], tokens: list[str], base: str, tag: str, n: int) -> float:
    """Submit one job of `n` targets per caller (caller i to replica i mod len), then poll
    until all are finished; the seconds from the first submit."""
    clients = [Client(replicas[i % len(replicas)].port, t) for i, t in enumerate(tokens)]
    started = time.perf_counter()
    try:
        jobs: list[tuple[Client, str]] = []
        for i, c in enumerate(clients):
            targets = [{"url": f"{base}?r={tag}-{i}-{k}"} for k in range(n)]
            r = c.post("/v1/batch", {"targets": targets})
            if r.status != 202:
                raise RuntimeError(f"batch submit: {r.status} {r.body[:200]!r}")
            jobs.append((c, r.json["job_id"]))
        while jobs:
            if time.perf_counter() - started > LIMIT:
                raise RuntimeError(f"{len(jobs)} batch jobs not done in {LIMIT:.0f} s")
            time.sleep(POLL)
            for c, job in list(jobs):
                s = c.get(f"/v1/batch/{job}").json
                if s["status"] not in FINISHED:
                    continue
                bad = [t for t in s["targets"] if t["status"] != "done"]
                if s["status"] != "done" or bad:
                    raise RuntimeError(f"batch ended {s['status']}: {bad[:2]}")
                jobs.remove((c, job))
        return time.perf_counter() - started
    finally:
        for c in clients:
            c.close()


def run(ctx: Ctx) -> list[Row]:
    try:
        with pg.cluster() as cluster:
            return _run(ctx, cluster)
    except pg.NoPostgres as exc:
        return [skipped(TITLE, METRIC, str(exc))]


SIDES = ("one", "spread", "alone")  # 2 replicas all through one, 2 spread, 1 sift alone


def _run(ctx: Ctx, cluster: Any) -> list[Row]:
    ctx.origin.set_slow(PATH, DELAY, article(50_000, seed=11))
    base = ctx.origin.url(PATH)
    cfg = {"store": {"url": cluster.create()}, "batch": {"workers": WORKERS}}
    a = ctx.sift(cfg, callers=CALLERS)
    b = ctx.sift({**cfg, "caller": a.config["caller"]})  # the same callers on both
    c = ctx.sift({**cfg, "store": {"url": cluster.create()}, "caller": a.config["caller"]})
    runs = ctx.runs(5, 2)
    took: dict[str, list[float]] = {side: [] for side in SIDES}
    cores: dict[str, list[float]] = {f"{n} {k}": [] for n in SIDES for k in ("sift", "pg", "all")}

    def timed(side: str, i: int) -> None:
        """One drain; the cores the sifts, PostgreSQL and the whole machine kept busy."""
        replicas = {"one": [a] if i % 2 == 0 else [b], "spread": [a, b], "alone": [c]}[side]
        used = {
            "sift": lambda: sum(_cpu(p) for p in (a.pid, b.pid, c.pid)),
            "pg": lambda: _cpu(cluster.proc.pid),
            "all": _machine,
        }
        before = {k: f() for k, f in used.items()}
        seconds = _drain(replicas, a.tokens, base, f"{side}{i}", PER_JOB)
        for k, f in used.items():
            cores[f"{side} {k}"].append((f() - before[k]) / seconds)
        took[side].append(seconds)

    for warm in ([a, b], [c]):  # start every sift's workers and children
        _drain(warm, a.tokens, base, f"warm{warm[0].port}", 2)
    for i in range(runs):
        for k in range(len(SIDES)):
            timed(SIDES[(i + k) % len(SIDES)], i)
        ctx.log(
            f"run {i + 1}/{runs}: 2 replicas through one {took['one'][-1]:.2f} s, spread "
            f"{took['spread'][-1]:.2f} s, 1 alone {took['alone'][-1]:.2f} s (cores busy: "
            + ", ".join(
                f"{s} sift {cores[s + ' sift'][-1]:.2f} pg {cores[s + ' pg'][-1]:.2f} "
                f"machine {cores[s + ' all'][-1]:.2f}"
                for s in SIDES
            )
            + ")"
        )
    stolen = sum(_counter(s, "sift_batch_steals_total") for s in (a, b))
    errors = ctx.done_with(a) + ctx.done_with(b) + ctx.done_with(c)
    targets = CALLERS * PER_JOB
    ideal_one, ideal_two = targets / WORKERS * DELAY, targets / (2 * WORKERS) * DELAY
    med = {k: statistics.median(v) for k, v in cores.items()}
    mid = {side: statistics.median(v) for side, v in took.items()}
    note = (
        f"{CALLERS} callers × {PER_JOB} targets, {WORKERS} workers per replica; origin waits "
        f"{DELAY:g} s per target: ideal {ideal_two:.1f} s vs {ideal_one:.1f} s, measured "
        f"{mid['one']:.1f} s all through one replica, {mid['spread']:.1f} s spread by hand, "
        f"{mid['alone']:.1f} s alone; {stolen:g} jobs taken by an idle replica in all; cores "
        f"busy (of {os.cpu_count()}: through one, spread, alone): sift "
        + " / ".join(f"{med[s + ' sift']:.2f}" for s in SIDES)
        + ", PostgreSQL "
        + " / ".join(f"{med[s + ' pg']:.2f}" for s in SIDES)
        + ", whole machine "
        + " / ".join(f"{med[s + ' all']:.2f}" for s in SIDES)
    )
    if errors:
        note += f"; sift logged {len(errors)} ERROR lines"
    ctx.log(note)
    detail = {
        "ideal_seconds": {"2 replicas": ideal_two, "1 replica": ideal_one},
        "seconds": {side: [round(x, 3) for x in v] for side, v in took.items()},
        "jobs_stolen": stolen,
        "cores_busy": {k: [round(x, 3) for x in v] for k, v in cores.items()},
    }
    target = ("ratio", "<=", 0.65)
    return [
        Row(TITLE, METRIC, took["one"], took["alone"], "1 replica", target, note, detail=detail),
        Row(
            TITLE_SPREAD,
            METRIC,
            took["spread"],
            took["alone"],
            "1 replica",
            target,
            "the same runs, the jobs spread over the replicas by hand",
        ),
    ]
