"""10. The browser path: a page whose text is written by script, rendered in headless
Chromium behind sift's guarded proxy (`render: true`), against the static answer of the same
page (which only says `hint: browser`). Each run asks for a new URL, so both miss the cache;
the render figure is a whole render: child, browser start, page, clean."""

from __future__ import annotations

import os

from bench.context import Ctx
from bench.results import Row, skipped

NAME = "render"
TITLE = "10 render, script page"
PATH = "/bench/render-script"
BROWSER = "/usr/bin/chromium"
PAGE = """<html><head><title>Script page</title></head><body><div id="app"></div><script>
document.getElementById('app').innerHTML = '<h1>Written by script</h1><p>' +
  'This paragraph exists only once the browser ran the script. '.repeat(40) + '</p>';
</script></body></html>"""


def run(ctx: Ctx) -> list[Row]:
    if not os.access(BROWSER, os.X_OK):
        return [skipped(TITLE, "latency ms", "no chromium (apt-get install chromium)")]
    ctx.origin.set(PATH, PAGE)
    base = ctx.origin.url(PATH)
    sift = ctx.sift({"render": {"enabled": True, "auto": False, "browser": BROWSER}})
    client = sift.client()
    runs = ctx.runs(10, 3)
    ms_render: list[float] = []
    ms_static: list[float] = []
    try:
        for i in range(-1, runs):
            s = client.post("/v1/fetch", {"url": f"{base}?s={i}"})
            r = client.post("/v1/fetch", {"url": f"{base}?r={i}", "render": True})
            if (
                s.status != 200
                or r.status != 200
                or "only once the browser" not in r.json["content"]
            ):
                raise RuntimeError(f"render: {r.status} {r.body[:200]!r}")
            if i < 0:
                continue
            ms_static.append(s.seconds * 1000)
            ms_render.append(r.seconds * 1000)
            ctx.log(
                f"run {i + 1}/{runs}: render {ms_render[-1]:.0f} ms, static {ms_static[-1]:.0f} ms"
            )
    finally:
        client.close()
        errors = ctx.done_with(sift)
    note = "a fresh browser per render (child, Chromium, proxy)"
    if errors:
        note += f"; sift logged {len(errors)} ERROR lines"
    return [
        Row(TITLE, "latency ms", ms_render, ms_static, "static answer (hint browser)", None, note)
    ]
