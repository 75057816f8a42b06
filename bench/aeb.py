"""Article-extraction benchmark: sift's clean mode against trafilatura called directly.

The data is the article-extraction benchmark (MIT) in ../shared/bench-data/aeb: gzipped pages
in `html/<id>.html.gz` and `ground-truth.json` with each page's `articleBody` and `url`. The
metric is the benchmark's own: each text is split into `\\w+` tokens, the tokens into word
4-gram shingles (a text shorter than four tokens is one shingle), and a page's true/false
positives and false negatives are counted over the shingle multisets and normalised to sum to
one, so long pages weigh no more than short ones. Precision is averaged over pages that
predicted anything, recall over pages with a ground truth; F1 is that of the two averages.
Link URLs and markdown's backslash escapes are stripped first: a reader sees neither.

    python -m bench.aeb [--data DIR] [--limit N] [--synthetic] [--cpu RUNS]

(in-process, for a quick look; `python -m bench --only quality` is the benchmark's row: the
pages through `/v1/fetch` for quality, through a clean worker process for speed).

`--cpu RUNS` gives only sift's clean pages/s over trafilatura direct's by CPU time, page by page
in turn (what row 7 measures by wall clock, without a shared machine's scheduling in it).

`--synthetic` scores pages built from the ground truth inside a boilerplate template (for
when the HTML is missing); that checks post-processing costs nothing, it is not the benchmark.
"""

from __future__ import annotations

import argparse
import gzip
import json
import re
import statistics
import sys
import time
from collections import Counter
from collections.abc import Callable, Iterator
from pathlib import Path

DATA = Path(__file__).resolve().parents[2] / "shared" / "bench-data" / "aeb"
_TOKEN = re.compile(r"\w+")
# (link text may hold escaped brackets: `[git-add\[1\]](…)`)
_MD_LINK = re.compile(r"!?\[((?:\\.|[^\]\\])*)\]\([^)\s]*\)")
_MD_ESCAPE = re.compile(r"\\([!-/:-@\[-`{-~])")

CONTENT_TYPE = "text/html; charset=utf-8"
Page = tuple[str, bytes, str, str]  # id, html, url, true article body
Extractor = Callable[[bytes, str], str]


def strip_links(markdown: str) -> str:
    """The markdown as a reader sees it: `[text](url)` → `text`, `\\_` → `_`.

    Without the unescaping, `@PFF\\_Browns` would score as two tokens where the ground truth
    (plain text) has one.
    """
    return _MD_ESCAPE.sub(r"\1", _MD_LINK.sub(r"\1", markdown))


def shingles(text: str, n: int = 4) -> Counter[tuple[str, ...]]:
    tokens = _TOKEN.findall(text or "")
    if not tokens:
        return Counter()
    return Counter(tuple(tokens[i : i + n]) for i in range(max(1, len(tokens) - n + 1)))


def page_counts(true: str, pred: str) -> tuple[float, float, float]:
    """Normalised (tp, fp, fn) of one page's shingles."""
    t, p = shingles(true), shingles(pred)
    tp = sum((t & p).values())
    fp = sum((p - t).values())
    fn = sum((t - p).values())
    total = tp + fp + fn
    return (tp / total, fp / total, fn / total) if total else (0.0, 0.0, 0.0)


def _precision(tp: float, fp: float, fn: float) -> float:
    if fp == fn == 0:
        return 1.0
    return tp / (tp + fp) if tp + fp else 0.0


def _recall(tp: float, fp: float, fn: float) -> float:
    if fp == fn == 0:
        return 1.0
    return tp / (tp + fn) if tp + fn else 0.0


def metrics(counts: list[tuple[float, float, float]]) -> dict[str, float]:
    """Precision and recall averaged over pages, F1 of the averages (as the benchmark does)."""
    precision = statistics.mean([_precision(*c) for c in counts if c[0] + c[1] > 0] or [0.0])
    recall = statistics.mean([_recall(*c) for c in counts if c[0] + c[2] > 0] or [0.0])
    f1 = 2 * precision * recall / (precision + recall) if precision + recall else 0.0
    return {"f1": f1, "precision": precision, "recall": recall}


def load_pages(data: Path, limit: int | None = None) -> Iterator[Page]:
    truth = json.loads((data / "ground-truth.json").read_text(encoding="utf-8"))
    for key in sorted(truth)[:limit]:
        path = data / "html" / f"{key}.html.gz"
        html = gzip.decompress(path.read_bytes())
        yield key, html, truth[key].get("url", ""), truth[key].get("articleBody", "")


def synthetic_pages(data: Path, limit: int | None = None) -> Iterator[Page]:
    """The ground truth in a page with navigation, a sidebar, a comment form and a footer."""
    from html import escape

    truth = json.loads((data / "ground-truth.json").read_text(encoding="utf-8"))
    menu = "".join(f'<li><a href="/{w.lower()}">{w}</a></li>' for w in ("News", "Sport", "Tech"))
    related = "".join(f'<li><a href="/r/{i}">Related story number {i}</a></li>' for i in range(8))
    for key in sorted(truth)[:limit]:
        body = truth[key].get("articleBody", "")
        paras = "".join(f"<p>{escape(p)}</p>" for p in body.split("\n") if p.strip())
        html = (
            f"<html><head><title>Story | Example News</title></head><body>"
            f"<header><nav><ul>{menu}</ul></nav></header>"
            f'<div class="ad">Advertisement: buy one, get one free today</div>'
            f"<main><article>{paras}</article></main>"
            f'<aside class="sidebar"><h3>Most read</h3><ul>{related}</ul></aside>'
            f'<div id="comments"><h3>Leave a comment</h3><form><textarea></textarea>'
            f"<button>Post</button></form></div>"
            f"<footer><p>© 2024 Example News. All rights reserved.</p></footer></body></html>"
        )
        yield key, html.encode(), truth[key].get("url", ""), body


def trafilatura_direct(html: bytes, url: str) -> str:
    """As the benchmark runs it: the decoded page, comments off, everything else default."""
    import trafilatura

    return trafilatura.extract(html.decode("utf-8", "replace"), include_comments=False) or ""


def sift_clean(html: bytes, url: str) -> str:
    from sift.clean.dispatch import clean
    from sift.clean.protocol import CleanTask

    task = CleanTask(kind="html", body=html, content_type=CONTENT_TYPE, url=url)
    return clean(task).text


def score(extract: Extractor, pages: list[Page]) -> dict[str, float]:
    """The benchmark's metric for `extract`, plus empty answers and pages with bad tables."""
    from sift.clean.tables import problems

    counts, empty, bad_tables = [], 0, 0
    started = time.perf_counter()
    for _key, html, url, true in pages:
        text = extract(html, url)
        empty += not text.strip()
        bad_tables += bool(problems(text))
        counts.append(page_counts(true, strip_links(text)))
    result = metrics(counts)
    result.update(empty=empty, bad_tables=bad_tables, pages=len(pages))
    result["seconds"] = time.perf_counter() - started
    return result


def cpu_ratio(pages: list[Page]) -> tuple[float, float]:
    """CPU seconds of sift's clean path and of trafilatura direct over `pages`, taken page by
    page in turn (a shared machine's load drifts alike for both)."""
    sift = direct = 0.0
    for _key, html, url, _true in pages:
        started = time.process_time()
        sift_clean(html, url)
        sift += time.process_time() - started
        started = time.process_time()
        trafilatura_direct(html, url)
        direct += time.process_time() - started
    return sift, direct


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--data", type=Path, default=DATA)
    parser.add_argument("--limit", type=int, default=None)
    parser.add_argument("--synthetic", action="store_true")
    parser.add_argument("--cpu", type=int, default=0, help="runs of `cpu_ratio` only")
    args = parser.parse_args(argv)
    if not (args.data / "ground-truth.json").exists():
        print(f"no benchmark data in {args.data}", file=sys.stderr)
        return 2
    if not args.synthetic and not (args.data / "html").is_dir():
        print(f"no html/ in {args.data}; --synthetic scores a stand-in", file=sys.stderr)
        return 2
    load = synthetic_pages if args.synthetic else load_pages
    pages = list(load(args.data, args.limit))
    for run in range(args.cpu):
        sift, direct = cpu_ratio(pages)
        print(f"run {run + 1}: sift {sift:.2f}, trafilatura {direct:.2f}: {direct / sift:.3f}×")
    if args.cpu:
        return 0
    print(
        f"{'synthetic ' if args.synthetic else ''}article-extraction benchmark, {len(pages)} pages"
    )
    for name, extract in (("trafilatura direct", trafilatura_direct), ("sift clean", sift_clean)):
        r = score(extract, pages)
        print(
            f"{name:<20} F1={r['f1']:.3f} precision={r['precision']:.3f} "
            f"recall={r['recall']:.3f} empty={r['empty']} bad_tables={r['bad_tables']} "
            f"({r['pages'] / r['seconds']:.1f} pages/s)"
        )
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
