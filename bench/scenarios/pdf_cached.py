"""5. PDFs, cached: `pages` and `grep` past page 2,000 of a 2,500-page document (pages 41–60
of 300 in `--quick`) from sift's page cache.

Baselines: for `pages`, the same request's cold time (one run: the first request, which
fetches and extracts); for `grep`, a direct RE2 scan in this process over the same page
texts (read back from sift page range by page range), line by line as sift does, with
its smart-case rule, counting every matching line and keeping the first 100 with one line
of context each side.
"""

from __future__ import annotations

import re
import time

from bench.context import Ctx
from bench.results import Row

NAME = "pdf_cached"
TITLE = "5 PDF cached"
PAGES = "2401-2420"  # past 2,000: no page cap below `[pdf] max_pages`
GREP = r"marker-24\d7\."
QUICK_PAGES, QUICK_GREP = "41-60", r"marker-\d*7\."
_MARKER = re.compile(r"^--- page (\d+) ---$", re.M)


def page_texts(client, url: str, count: int) -> list[str]:
    """Every page's text, read back from sift's cache range by range."""
    texts: list[str] = []
    first = 1
    while first <= count:
        r = client.post(
            "/v1/fetch", {"url": url, "pages": f"{first}-{min(count, first + 9)}", "context": False}
        )
        if r.status != 200:
            raise RuntimeError(f"pages {first}-: {r.status} {r.body[:200]!r}")
        a, last = r.json["pdf"]["returned"]
        content = re.sub(r"\n\n\[returned [^\]]*\]$", "", r.json["content"])
        parts = _MARKER.split(content)
        if a == 1:
            texts.append(parts[0].strip("\n"))
        texts += [p.strip("\n") for p in parts[2::2]]
        first = last + 1
    return texts


def re2_grep(texts: list[str], pattern: str, limit: int = 100) -> tuple[list[str], int]:
    """The first `limit` matching lines with their context, and how many lines match."""
    from sift.documents.grep import compile_grep

    regex = compile_grep(pattern)
    out: list[str] = []
    hits = 0
    for n, text in enumerate(texts, start=1):
        lines = text.split("\n")
        for i, line in enumerate(lines):
            if regex.search(line):
                hits += 1
                if len(out) < limit:
                    context = lines[max(0, i - 1) : i + 2]
                    out.append(f"p. {n}: " + "\n".join(x.strip() for x in context))
    return out, hits


def run(ctx: Ctx) -> list[Row]:
    pages = 300 if ctx.quick else 2500
    ranged, pattern = (QUICK_PAGES, QUICK_GREP) if ctx.quick else (PAGES, GREP)
    ctx.log(f"generating a {pages}-page PDF")
    path = ctx.pdfs.path(pages)
    ctx.origin.set(f"/bench/cached{pages}.pdf", path.read_bytes(), "application/pdf")
    url = ctx.origin.url(f"/bench/cached{pages}.pdf")
    sift = ctx.sift()
    client = sift.client(timeout=300)
    runs = ctx.runs(15, 5)
    try:
        cold = client.post("/v1/fetch", {"url": url, "pages": ranged})
        if cold.status != 200 or cold.json["cached"]:
            raise RuntimeError(f"cold pages: {cold.status} {cold.body[:300]!r}")
        ctx.log(f"cold pages={ranged}: {cold.seconds:.1f} s")
        texts = page_texts(client, url, pages)
        if len(texts) != pages:
            raise RuntimeError(f"read back {len(texts)} pages of {pages}")
        ms_pages, ms_grep, ms_scan = [], [], []
        for i in range(-1, runs):  # one warm-up round
            rp = client.post("/v1/fetch", {"url": url, "pages": ranged})
            rg = client.post("/v1/fetch", {"url": url, "grep": pattern})
            started = time.perf_counter()
            shown, hits = re2_grep(texts, pattern)
            scan = time.perf_counter() - started
            if rp.status != 200 or rg.status != 200 or not rg.json["cached"]:
                raise RuntimeError(f"cached: {rp.status} {rg.status} {rg.body[:200]!r}")
            if rg.json["pdf"]["grep_hits"] != hits or not shown:
                raise RuntimeError(
                    f"grep: sift counted {rg.json['pdf']['grep_hits']}, the scan {hits}"
                )
            if i < 0:
                continue
            ms_pages.append(rp.seconds * 1000)
            ms_grep.append(rg.seconds * 1000)
            ms_scan.append(scan * 1000)
        ctx.log(
            f"{runs} runs: pages {sorted(ms_pages)[runs // 2]:.1f} ms, grep "
            f"{sorted(ms_grep)[runs // 2]:.1f} ms, re2 scan {sorted(ms_scan)[runs // 2]:.1f} "
            "ms (medians)"
        )
    finally:
        client.close()
        errors = ctx.done_with(sift)
    t = f"{TITLE}, {pages} pages"
    note = f"grep {pattern!r}: {rg.json['pdf']['grep_hits']} matching lines, first 100 shown"
    if errors:
        note += f"; sift logged {len(errors)} ERROR lines"
    return [
        Row(
            t,
            f"pages={ranged} latency ms",
            ms_pages,
            [cold.seconds * 1000],
            "the same request, cold (1 run)",
            ("ratio", "<=", 0.05),  # a cached range at least 20× the cold request's speed
            "ratio = cache's speed-up",
        ),
        # the store's read and the answer cost less than scanning the text again in-process
        Row(
            t,
            "grep latency ms",
            ms_grep,
            ms_scan,
            "RE2 scan in-process",
            ("ratio", "<=", 0.25),
            note,
        ),
    ]
