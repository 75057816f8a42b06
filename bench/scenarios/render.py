"""10. The browser path: a page whose text is written by script, rendered in headless
Chromium behind sift's guarded proxy (`render: true`). Each run asks for a new URL, so every
render misses the cache. Against, in the same runs:

- the same page rendered by Playwright driving the same Chromium directly, warm, in this
  process (a new context per page, as sift does): the cost of sift around the browser;
- sift with `[render] recycle_after = 1`, a fresh browser per render (what every render paid
  before the warm browser): such a browser is retired after its one render and nothing is
  started in the background, so each timed render starts its own child and Chromium on the
  request's path (the server's warm one serves only the untimed first run; the pause between
  runs lets the last browser end, not the next one start);
- the static answer of the page (which only says `hint: browser`).

Then the memory of sift and its browser (every process of its tree, summed) while it serves
50 renders one after another, and once they are done.
"""

from __future__ import annotations

import os
import time
from typing import Any

from bench.context import Ctx
from bench.procmem import MemWatch, descendants, rss_mb
from bench.results import Row, skipped

NAME = "render"
TITLE = "10 render, script page"
PATH = "/bench/render-script"
BROWSER = "/usr/bin/chromium"
PAGE = """<html><head><title>Script page</title></head><body><div id="app"></div><script>
document.getElementById('app').innerHTML = '<h1>Written by script</h1><p>' +
  'This paragraph exists only once the browser ran the script. '.repeat(40) + '</p>';
</script></body></html>"""
RENDER = {"enabled": True, "auto": False, "browser": BROWSER}
MEMORY_RENDERS = 50


class Direct:
    """Playwright driving the same Chromium, warm, in this process: the baseline."""

    def __init__(self) -> None:
        from playwright.sync_api import sync_playwright

        from sift.browser.child import ARGS

        self._pw = sync_playwright().start()
        self.browser = self._pw.chromium.launch(executable_path=BROWSER, args=ARGS)

    def render(self, url: str) -> float:
        started = time.perf_counter()
        context = self.browser.new_context()
        page = context.new_page()
        page.goto(url, wait_until="load")
        html = page.content()
        context.close()
        if "only once the browser" not in html:
            raise RuntimeError("direct render: the script did not run")
        return (time.perf_counter() - started) * 1000

    def close(self) -> None:
        self.browser.close()
        self._pw.stop()


def _render(client: Any, url: str) -> float:
    r = client.post("/v1/fetch", {"url": url, "render": True})
    if r.status != 200 or "only once the browser" not in r.json["content"]:
        raise RuntimeError(f"render: {r.status} {r.body[:200]!r}")
    return float(r.seconds * 1000)


def _tree_mb(pid: int) -> float:
    return rss_mb(pid) + sum(rss_mb(p) for p in descendants(pid))


def run(ctx: Ctx) -> list[Row]:
    if not os.access(BROWSER, os.X_OK):
        return [skipped(TITLE, "latency ms", "no chromium (apt-get install chromium)")]
    ctx.origin.set(PATH, PAGE)
    base = ctx.origin.url(PATH)
    warm = ctx.sift({"render": RENDER})
    fresh = ctx.sift({"render": {**RENDER, "recycle_after": 1}})
    direct = Direct()
    clients = warm.client(), fresh.client()
    runs = ctx.runs(10, 3)
    ms: dict[str, list[float]] = {"warm": [], "fresh": [], "direct": [], "static": []}
    try:
        for i in range(-1, runs):
            s = clients[0].post("/v1/fetch", {"url": f"{base}?s={i}"})
            times = {
                "static": s.seconds * 1000,
                "warm": _render(clients[0], f"{base}?w={i}"),
                "direct": direct.render(f"{base}?d={i}"),
                "fresh": _render(clients[1], f"{base}?f={i}"),
            }
            time.sleep(1.5)  # the fresh browser ends before the next run is timed
            if i < 0:
                continue
            for k, v in times.items():
                ms[k].append(v)
            ctx.log(
                f"run {i + 1}/{runs}: " + ", ".join(f"{k} {v:.0f} ms" for k, v in times.items())
            )
        memory = _memory(ctx, warm, clients[0], base)
    finally:
        direct.close()
        for c in clients:
            c.close()
        errors = ctx.done_with(warm) + ctx.done_with(fresh)
    note = "a warm browser, a fresh context per render"
    if errors:
        note += f"; sift logged {len(errors)} ERROR lines"
    return [
        Row(
            TITLE,
            "latency ms",
            ms["warm"],
            ms["direct"],
            "Playwright direct, warm",
            ("ratio", "<=", 1.5),
            note,
        ),
        Row(
            TITLE,
            "latency ms",
            ms["warm"],
            ms["fresh"],
            "a fresh browser per render",
            ("ratio", "<=", 0.25),
            note,
        ),
        Row(
            TITLE,
            "latency ms",
            ms["warm"],
            ms["static"],
            "static answer (hint browser)",
            ("ratio", "<=", 10.0),  # a render's cost over the static answer (7× today), bounded
            note,
        ),
        *memory,
    ]


def _memory(ctx: Ctx, warm: Any, client: Any, base: str) -> list[Row]:
    """Peak RSS of sift and its browser over `MEMORY_RENDERS` renders, and after them."""
    idle = _tree_mb(warm.pid)
    with MemWatch(warm.pid, interval=0.05) as watch:
        for i in range(MEMORY_RENDERS):
            _render(client, f"{base}?m={i}")
    peaks = watch.peaks
    time.sleep(3)
    after = _tree_mb(warm.pid)
    ctx.log(f"memory: idle {idle:.0f} MB, peak {peaks.total_peak:.0f} MB, after {after:.0f} MB")
    metric = "MB (sift + browser, RSS summed)"
    return [
        Row(
            f"{TITLE}: {MEMORY_RENDERS} renders",
            f"peak {metric}",
            [peaks.total_peak],
            [idle],
            "idle, before",
            ("sift", "<=", 1500),
            "bounded",
        ),
        Row(
            f"{TITLE}: {MEMORY_RENDERS} renders",
            f"after {metric}",
            [after],
            [idle],
            "idle, before",
            ("ratio", "<=", 1.5),
            "given back",
        ),
    ]
