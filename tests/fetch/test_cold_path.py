"""The cold path's overlaps, through a real server: the gate is asked while the store is read
(a hit gives the ask back: no slot held, no wait, no 429, no busy count), and the cache write
goes after the answer without losing it (the next request, a restart, the in-process CLI).

The hot set is kept tiny here, so a repeat is answered from the store: that is the lookup the
gate's ask overlaps."""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
import time
from collections.abc import Iterator
from concurrent.futures import Future, ThreadPoolExecutor
from contextlib import contextmanager

from tests.support.sift_server import Response, SiftServer

NO_HOT_SET = {"cache": {"memory": 1}}


def _metric(sift: SiftServer, name: str) -> float:
    text = sift.request("GET", "/metrics", token=None).body.decode()
    m = re.search(rf"^{name} (\S+)$", text, re.M)
    assert m, f"{name} not in /metrics"
    return float(m.group(1))


def _fetches(sift: SiftServer) -> float:
    """Upstream fetches counted so far, whatever their outcome."""
    text = sift.request("GET", "/metrics", token=None).body.decode()
    return sum(float(v) for v in re.findall(r"^sift_fetch_total\{[^}]*\} (\S+)$", text, re.M))


def _gates(sift: SiftServer) -> tuple[float, float]:
    return _metric(sift, "sift_gate_in_flight"), _metric(sift, "sift_gate_waiting")


@contextmanager
def _host_full(sift: SiftServer, origin, name: str) -> Iterator[Future[Response]]:
    """The host's one slot taken by a fetch the origin holds until the block ends; that
    fetch must then answer 200."""
    pool = ThreadPoolExecutor(1)
    url = origin.url(f"/hold/{name}")
    try:
        held = pool.submit(sift.fetch, url)
        deadline = time.monotonic() + 30
        while not origin.wait_arrived(name, 0.05):
            assert time.monotonic() < deadline, "the holding fetch never reached the origin"
            if held.done():  # a gate wait shorter than the gate's round trip: 429, ask again
                assert held.result().status == 429, held.result().body
                held = pool.submit(sift.fetch, url)
        yield held
        origin.release(name)
        assert held.result(30).status == 200
    finally:
        origin.release(name)
        pool.shutdown()


def test_a_store_hit_at_the_host_cap_answers_at_once_and_holds_nothing(make_sift, origin):
    sift = make_sift({**NO_HOT_SET, "gates": {"per_host": 1, "wait": "60s"}})
    origin.set("/cp/cached", "cached text for the gate test", "text/plain")
    assert sift.fetch(origin.url("/cp/cached")).json["cached"] is False
    assert _gates(sift) == (0, 0)
    busy = _metric(sift, "sift_gate_busy_total")
    with _host_full(sift, origin, "cp-cap") as held:
        fetches = _fetches(sift)
        for _ in range(5):  # answered while the slot is still held: they never waited for it
            hit = sift.fetch(origin.url("/cp/cached"))
            assert hit.status == 200 and hit.json["cached"] is True
            assert "cached text" in hit.json["content"]
        assert not held.done()
        assert _gates(sift) == (1, 0)  # the hits left neither a slot nor a place in the queue
        assert _metric(sift, "sift_gate_busy_total") == busy
        assert _fetches(sift) == fetches  # and no fetch outcome either
    assert _gates(sift) == (0, 0)
    assert origin.count("/cp/cached") == 1


def test_hits_with_a_short_gate_wait_count_no_busy(make_sift, origin):
    """The ask is given back on a hit, never waited out: no 429 and no busy count, even when
    the host is full and the gate wait is shorter than the store's answer could be."""
    sift = make_sift({**NO_HOT_SET, "gates": {"per_host": 1, "wait": "1ms"}})
    origin.set("/cp/short", "short wait text", "text/plain")
    assert sift.fetch(origin.url("/cp/short")).status == 200
    with _host_full(sift, origin, "cp-short"):
        busy = _metric(sift, "sift_gate_busy_total")  # the holder's own 429s counted before
        codes = [sift.fetch(origin.url("/cp/short")).status for _ in range(20)]
        assert codes == [200] * 20
        assert _metric(sift, "sift_gate_busy_total") == busy
    assert _gates(sift) == (0, 0)


def test_a_copy_past_its_age_still_waits_for_the_gate(make_sift, origin):
    """The ask made during the lookup is the one a revalidation waits on: at the host's cap
    it is 429 after the gate wait, counted once, and the queue is left empty."""
    sift = make_sift({**NO_HOT_SET, "gates": {"per_host": 1, "wait": "200ms"}})
    origin.set("/cp/old", "old text", "text/plain")
    assert sift.fetch(origin.url("/cp/old")).status == 200
    busy = _metric(sift, "sift_gate_busy_total")
    with _host_full(sift, origin, "cp-old"):
        again = sift.fetch(origin.url("/cp/old"), max_age=0)
        assert again.status == 429 and again.json["hint"] == "retry"
        assert _metric(sift, "sift_gate_busy_total") == busy + 1
        assert _gates(sift) == (1, 0)
    assert origin.count("/cp/old") == 1
    assert sift.fetch(origin.url("/cp/old"), max_age=0).json["cached"] is False
    assert origin.count("/cp/old") == 2 and _gates(sift) == (0, 0)


def test_the_write_after_the_answer_is_seen_next_and_survives_a_restart(tmp_path, origin):
    page = "<html><head><title>Kept</title></head><body><p>" + "kept text " * 200 + "</p>"
    origin.set("/cp/kept", page + "</body></html>")
    origin.set("/cp/last", "the last answer before the stop", "text/plain")
    first = SiftServer(tmp_path / "state", NO_HOT_SET).start()
    try:
        assert first.fetch(origin.url("/cp/kept")).json["cached"] is False
        again = first.fetch(origin.url("/cp/kept"), mode="raw")  # from the store, with its body
        assert again.json["cached"] is True and page in again.json["content"]
        assert first.fetch(origin.url("/cp/last")).status == 200  # stopped right after
    finally:
        first.stop()
    second = SiftServer(tmp_path / "state").start()
    try:
        assert second.fetch(origin.url("/cp/last")).json["cached"] is True
    finally:
        second.stop()
    assert origin.count("/cp/kept") == 1 and origin.count("/cp/last") == 1


def test_the_in_process_cli_keeps_its_write(tmp_path, origin):
    """`sift fetch` without a server answers and stops at once: its write still lands."""
    origin.set("/cp/cli", "cli text " * 100, "text/plain")
    cfg = tmp_path / "sift.toml"
    cfg.write_text(
        f'state_dir = "{tmp_path / "state"}"\n[guard]\n'
        'allow_prefixes = ["127.0.0.1/32"]\n[render]\nenabled = false\n'
    )
    env = {k: v for k, v in os.environ.items() if not k.startswith("SIFT_")}
    args = [sys.executable, "-m", "sift", "--config", str(cfg), "fetch", "--json"]
    runs = [
        subprocess.run(
            [*args, origin.url("/cp/cli")], capture_output=True, text=True, env=env, timeout=120
        )
        for _ in range(2)
    ]
    assert [r.returncode for r in runs] == [0, 0], runs[-1].stderr
    assert [json.loads(r.stdout)["cached"] for r in runs] == [False, True]
    assert origin.count("/cp/cli") == 1
