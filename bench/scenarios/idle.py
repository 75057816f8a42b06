"""10b. The idle footprint with Chromium installed (issue 37): the browser starts at the first
render and is given back after `[render] idle_after` without one, so an idle `sift serve` holds
what it holds without Chromium. Two servers side by side, the same config but for the browser:

- idle PSS (every process of sift's tree, summed; a page shared by n processes counts 1/n in
  each) with Chromium installed, before any render and again once the browser was given back,
  against the same server with no Chromium (`[render] browser` pointing nowhere): within
  `TARGET_MIB`;
- the same with a warm, idle browser (what an idle sift held before, from start-up on):
  reported, the memory the give-back saves;
- the first render after idle (a cold start: the child, Playwright and Chromium started on the
  request's path) against the next one (warm): reported, the cost of giving the browser back.

The bench gives the browser back after `IDLE_AFTER` (the default is 300 s) so that a run is
short; the cycle is render, render, give-back, measured `runs` times.

    python -m bench --only idle
"""

from __future__ import annotations

import os
import time
from typing import Any

from bench.context import Ctx
from bench.procmem import cmdline, descendants, tree_pss_mb
from bench.results import Row, skipped

NAME = "idle"
TITLE = "10b idle footprint, lazy browser"
PATH = "/bench/idle-script"
BROWSER = "/usr/bin/chromium"
PAGE = """<html><head><title>Script page</title></head><body><div id="app"></div><script>
document.getElementById('app').innerHTML = '<h1>Written by script</h1><p>' +
  'This paragraph exists only once the browser ran the script. '.repeat(40) + '</p>';
</script></body></html>"""
IDLE_AFTER = 4  # seconds
TARGET_MIB = 50
SAMPLES = 5  # PSS readings a figure, 0.4 s apart, their median kept
METRIC = "idle PSS MiB (sift's tree, summed)"


def _render(client: Any, url: str) -> float:
    r = client.post("/v1/fetch", {"url": url, "render": True})
    if r.status != 200 or "only once the browser" not in r.json["content"]:
        raise RuntimeError(f"render: {r.status} {r.body[:200]!r}")
    return float(r.seconds * 1000)


def _browser_state(client: Any) -> str:
    return str(client.get("/healthz").json["capabilities"]["render"].get("browser", ""))


def _no_browser(pid: int) -> bool:
    return not any("sift.browser.child" in cmdline(p) for p in descendants(pid))


def _wait(check: Any, what: str, timeout: float = 60) -> None:
    deadline = time.monotonic() + timeout
    while not check():
        if time.monotonic() > deadline:
            raise RuntimeError(f"timed out waiting: {what}")
        time.sleep(0.1)


def _pss(pids: list[int]) -> list[float]:
    """Each tree's PSS: the median of `SAMPLES` readings, the trees read in turn."""
    readings: list[list[float]] = [[] for _ in pids]
    for _ in range(SAMPLES):
        for i, pid in enumerate(pids):
            readings[i].append(tree_pss_mb(pid))
        time.sleep(0.4)
    return [sorted(r)[len(r) // 2] for r in readings]


def _settled(client: Any, url: str) -> None:
    """Start-up done: Tesseract's languages read (its child gone) and a static fetch served
    (the clean workers up), so both servers are measured in the same state."""
    _wait(lambda: client.get("/healthz").json["capabilities"]["ocr"]["state"] != "checking", "ocr")
    if client.post("/v1/fetch", {"url": url}).status != 200:
        raise RuntimeError("the static fetch failed")


def run(ctx: Ctx) -> list[Row]:
    if not os.access(BROWSER, os.X_OK):
        return [skipped(TITLE, METRIC, "no chromium (apt-get install chromium)")]
    ctx.origin.set(PATH, PAGE)
    base = ctx.origin.url(PATH)
    render = {"enabled": True, "auto": False, "idle_after": IDLE_AFTER}
    lazy = ctx.sift({"render": {**render, "browser": BROWSER}})
    bare = ctx.sift({"render": {**render, "browser": "/nonexistent/chromium"}})
    clients = lazy.client(), bare.client()
    keys = ("start", "bare_start", "back", "warm", "bare")
    figures: dict[str, list[float]] = {k: [] for k in keys}
    ms: dict[str, list[float]] = {"cold": [], "warm": []}
    try:
        for i, c in enumerate(clients):
            _settled(c, f"{base}?static={i}")
        start, bare_mb = _pss([lazy.pid, bare.pid])
        figures["start"].append(start)
        figures["bare_start"].append(bare_mb)
        ctx.log(f"PSS before any render {start:.0f}, without Chromium {bare_mb:.0f} MiB")
        for i in range(ctx.runs(5, 2)):
            ms["cold"].append(_render(clients[0], f"{base}?cold={i}"))
            ms["warm"].append(_render(clients[0], f"{base}?warm={i}"))
            warm, bare_mb = _pss([lazy.pid, bare.pid])
            _wait(lambda: _browser_state(clients[0]) == "idle", "the give-back")
            _wait(lambda: _no_browser(lazy.pid), "the browser's processes gone")
            back, bare_mb = _pss([lazy.pid, bare.pid])
            figures["warm"].append(warm)
            figures["back"].append(back)
            figures["bare"].append(bare_mb)
            ctx.log(
                f"run {i + 1}: cold {ms['cold'][-1]:.0f} ms, warm {ms['warm'][-1]:.0f} ms; PSS "
                f"warm idle {warm:.0f}, given back {back:.0f}, without Chromium {bare_mb:.0f} MiB"
            )
    finally:
        for c in clients:
            c.close()
        errors = ctx.done_with(lazy) + ctx.done_with(bare)
    return _rows(figures, ms, errors)


def _rows(
    figures: dict[str, list[float]], ms: dict[str, list[float]], errors: list[str]
) -> list[Row]:
    note = f"[render] idle_after = {IDLE_AFTER} s (default 300 s)"
    if errors:
        note += f"; sift logged {len(errors)} ERROR lines"
    without = "without Chromium"
    target = ("diff", "<=", float(TARGET_MIB))
    bare = figures["bare"]
    return [
        Row(
            TITLE,
            f"{METRIC}, before any render",
            figures["start"],
            figures["bare_start"],
            without,
            target,
        ),
        Row(TITLE, f"{METRIC}, browser given back", figures["back"], bare, without, target, note),
        Row(
            TITLE,
            f"{METRIC}, a warm browser kept",
            figures["warm"],
            bare,
            without,
            None,
            "what an idle sift held before the lazy browser (reported)",
        ),
        Row(
            TITLE,
            "first render after idle, latency ms",
            ms["cold"],
            ms["warm"],
            "the next render, warm",
            None,
            "a cold start: child, Playwright and Chromium on the request's path (reported)",
        ),
    ]
