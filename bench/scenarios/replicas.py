"""11. A 64-target batch on 2 replicas vs 1 (issue 15): two `sift serve` replicas on one
PostgreSQL (a throwaway local cluster) against one of them alone, same config.

The shape: a job holds 32 targets at most and a caller one live job, and a job drains
serially on the replica that holds its lease (the one it was submitted to; another takes it
over only when that lease lapses). So the 64 targets are 4 jobs of 16 from 4 callers, spread
as a load balancer would: caller i to replica i mod n. With `[batch] workers = 2` a replica
has 2 targets in flight, so 1 replica drains 32 in a row per worker and 2 replicas 16.

The origin answers every target after DELAY seconds, like a remote site, so the origin and
not the 2 cores should be the limit: the ideal is 32 × DELAY against 16 × DELAY (0.5×). Each
run has its own URLs (nothing cached). Both replicas stay up throughout; the 1-replica runs
alternate between them, and which side goes first alternates too. The time runs from the
first submit until polls (every 50 ms) see every job finished. The CPU seconds of the sift
process trees and of PostgreSQL over each run say what limited it.
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
TITLE = "11 batch of 64 targets, 2 replicas vs 1 (PostgreSQL)"
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


def _run(ctx: Ctx, cluster: Any) -> list[Row]:
    ctx.origin.set_slow(PATH, DELAY, article(50_000, seed=11))
    base = ctx.origin.url(PATH)
    cfg = {"store": {"url": cluster.create()}, "batch": {"workers": WORKERS}}
    a = ctx.sift(cfg, callers=CALLERS)
    b = ctx.sift({**cfg, "caller": a.config["caller"]})  # the same callers on both
    runs = ctx.runs(5, 2)
    one: list[float] = []
    two: list[float] = []
    cores: dict[str, list[float]] = {f"{n} {k}": [] for n in "12" for k in ("sift", "pg", "all")}

    def timed(side: str, replicas: list[SiftProcess], tag: str) -> float:
        """One drain; the cores the sifts, PostgreSQL and the whole machine kept busy."""
        used = {
            "sift": lambda: sum(_cpu(p) for p in (a.pid, b.pid)),
            "pg": lambda: _cpu(cluster.proc.pid),
            "all": _machine,
        }
        before = {k: f() for k, f in used.items()}
        seconds = _drain(replicas, a.tokens, base, tag, PER_JOB)
        for k, f in used.items():
            cores[f"{side} {k}"].append((f() - before[k]) / seconds)
        return seconds

    _drain([a, b], a.tokens, base, "warm", 2)  # start both replicas' workers and children
    for i in range(runs):
        alone = [a] if i % 2 == 0 else [b]
        if i % 2 == 0:
            two.append(timed("2", [a, b], f"two{i}"))
            one.append(timed("1", alone, f"one{i}"))
        else:
            one.append(timed("1", alone, f"one{i}"))
            two.append(timed("2", [a, b], f"two{i}"))
        ctx.log(
            f"run {i + 1}/{runs}: 2 replicas {two[-1]:.2f} s, 1 replica {one[-1]:.2f} s "
            f"(cores busy: sift {cores['2 sift'][-1]:.2f} vs {cores['1 sift'][-1]:.2f}, "
            f"PostgreSQL {cores['2 pg'][-1]:.2f} vs {cores['1 pg'][-1]:.2f}, "
            f"machine {cores['2 all'][-1]:.2f} vs {cores['1 all'][-1]:.2f})"
        )
    errors = ctx.done_with(a) + ctx.done_with(b)
    targets = CALLERS * PER_JOB
    ideal_one, ideal_two = targets / WORKERS * DELAY, targets / (2 * WORKERS) * DELAY
    med = {k: statistics.median(v) for k, v in cores.items()}
    extra = [  # per target, beyond the origin's delay: what a serial drain adds to each
        (statistics.median(t) - ideal) / (ideal / DELAY) * 1000
        for t, ideal in ((two, ideal_two), (one, ideal_one))
    ]
    note = (
        f"{CALLERS} callers × {PER_JOB} targets, caller i to replica i mod n, {WORKERS} workers "
        f"per replica; origin waits {DELAY:g} s per target: ideal {ideal_two:.1f} s vs "
        f"{ideal_one:.1f} s, measured {statistics.median(two):.1f} s vs "
        f"{statistics.median(one):.1f} s (+{extra[0]:.0f} vs +{extra[1]:.0f} ms per target); "
        f"cores busy (of {os.cpu_count()}, 2 vs 1 replica): sift {med['2 sift']:.2f} vs "
        f"{med['1 sift']:.2f}, PostgreSQL {med['2 pg']:.2f} vs {med['1 pg']:.2f}, "
        f"whole machine {med['2 all']:.2f} vs {med['1 all']:.2f}"
    )
    if errors:
        note += f"; sift logged {len(errors)} ERROR lines"
    ctx.log(note)
    detail = {
        "ideal_seconds": {"2 replicas": ideal_two, "1 replica": ideal_one},
        "cores_busy": {k: [round(x, 3) for x in v] for k, v in cores.items()},
        "ms_per_target_beyond_delay": {"2 replicas": extra[0], "1 replica": extra[1]},
    }
    return [Row(TITLE, METRIC, two, one, "1 replica", ("ratio", "<=", 0.65), note, detail=detail)]
