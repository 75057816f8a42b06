"""Multi-type extraction benchmark: sift's clean mode against trafilatura, per page type.

The data is the dev split of WCXB (CC-BY-4.0) in ../shared/bench-data/wcxb-dev: gzipped pages
in `html/NNNN.html.gz`, and `ground-truth/NNNN.json` with each page's type
(`_internal.page_type.primary`) and its `main_content`. Its seven types (article,
documentation, service, forum, collection, listing, product) are where an extractor tuned on
articles loses. The metric is the benchmark's own: the texts are split into `\\w+` words,
lower-cased; a page's precision and recall are the bag-of-words overlap with the true main
content, its score their F1 (an empty truth scores 1 for an empty answer, else 0); the score
of a set is the mean over its pages. Link targets and markdown escapes are stripped first.

    python -m bench.wcxb [--data DIR] [--type T] [--limit N] [--dump FILE]

(in-process, for a quick look and to find the pages that lose: `--dump` writes each page's
scores as JSON lines; `python -m bench --only wcxb` is the benchmark's row, through
`/v1/fetch`).
"""

from __future__ import annotations

import argparse
import gzip
import json
import re
import statistics
import sys
import time
from collections import Counter, defaultdict
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path

from bench.aeb import strip_links, trafilatura_direct

DATA = Path(__file__).resolve().parents[2] / "shared" / "bench-data" / "wcxb-dev"
TYPES = ("article", "documentation", "service", "forum", "collection", "listing", "product")
_WORD = re.compile(r"\w+")


@dataclass(frozen=True)
class Page:
    key: str
    html: bytes
    url: str
    kind: str  # the page type
    truth: str


# An extractor: (page) → (text, verdict), the verdict "content" unless it called the page
# something else (a block page, a soft 404, an error status).
Extractor = Callable[[Page], tuple[str, str]]


def load_pages(
    data: Path, limit: int | None = None, kind: str | None = None, every: int = 1
) -> Iterator[Page]:
    """The pages in file order, of type `kind` if given, every `every`th, up to `limit`."""
    n = 0
    for path in sorted((data / "ground-truth").glob("*.json"))[::every]:
        record = json.loads(path.read_text(encoding="utf-8"))
        page_type = record.get("_internal", {}).get("page_type", {}).get("primary", "")
        if kind and page_type != kind:
            continue
        if limit is not None and n >= limit:
            return
        html = gzip.decompress((data / "html" / f"{path.stem}.html.gz").read_bytes())
        truth = record.get("ground_truth", {}).get("main_content") or ""
        yield Page(path.stem, html, record.get("url", ""), page_type, truth)
        n += 1


def word_f1(truth: str, pred: str) -> float:
    """The benchmark's page score: bag-of-words F1 of `pred` against `truth`."""
    t = Counter(_WORD.findall(truth.lower()))
    p = Counter(_WORD.findall(pred.lower()))
    if not t:
        return 0.0 if p else 1.0
    common = sum((t & p).values())
    if not common:
        return 0.0
    precision, recall = common / sum(p.values()), common / sum(t.values())
    return 2 * precision * recall / (precision + recall)


@dataclass
class Scores:
    """Each page's F1 and verdict, by page key, with the time taken."""

    f1: dict[str, float]
    kind: dict[str, str]
    verdict: dict[str, str]
    empty: int
    seconds: float

    def mean(self, kind: str | None = None) -> float:
        values = [v for k, v in self.f1.items() if kind is None or self.kind[k] == kind]
        return statistics.mean(values) if values else 0.0

    def count(self, kind: str | None = None) -> int:
        return sum(1 for k in self.f1 if kind is None or self.kind[k] == kind)

    def not_content(self) -> list[str]:
        return [k for k, v in self.verdict.items() if v != "content"]


def score(extract: Extractor, pages: list[Page]) -> Scores:
    f1: dict[str, float] = {}
    kinds: dict[str, str] = {}
    verdicts: dict[str, str] = {}
    empty = 0
    started = time.perf_counter()
    for page in pages:
        text, verdict = extract(page)
        empty += not text.strip()
        f1[page.key] = word_f1(page.truth, strip_links(text))
        kinds[page.key] = page.kind
        verdicts[page.key] = verdict
    return Scores(f1, kinds, verdicts, empty, time.perf_counter() - started)


def trafilatura(page: Page) -> tuple[str, str]:
    return trafilatura_direct(page.html, page.url), "content"


def sift_clean(page: Page) -> tuple[str, str]:
    from bench.aeb import CONTENT_TYPE
    from sift.clean.dispatch import clean
    from sift.clean.protocol import CleanTask

    task = CleanTask(kind="html", body=page.html, content_type=CONTENT_TYPE, url=page.url)
    result = clean(task)
    return result.text, result.page or "content"


def types_of(pages: list[Page]) -> list[str]:
    present = {p.kind for p in pages}
    return [t for t in TYPES if t in present] + sorted(present - set(TYPES))


def table(sift: Scores, direct: Scores, kinds: list[str]) -> str:
    lines = [f"{'type':<14} {'pages':>5} {'sift':>6} {'traf.':>6} {'diff':>7}"]
    for kind in [*kinds, None]:
        s, d = sift.mean(kind), direct.mean(kind)
        lines.append(f"{kind or 'all':<14} {sift.count(kind):>5} {s:6.3f} {d:6.3f} {s - d:+7.3f}")
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--data", type=Path, default=DATA)
    parser.add_argument("--type", dest="kind", choices=TYPES, default=None)
    parser.add_argument("--limit", type=int, default=None)
    parser.add_argument("--dump", type=Path, default=None, help="per-page scores (JSON lines)")
    args = parser.parse_args(argv)
    if not (args.data / "ground-truth").is_dir():
        print(f"no benchmark data in {args.data}", file=sys.stderr)
        return 2
    pages = list(load_pages(args.data, args.limit, args.kind))
    print(f"WCXB dev, {len(pages)} pages")
    direct = score(trafilatura, pages)
    sift = score(sift_clean, pages)
    print(table(sift, direct, types_of(pages)))
    blocked: dict[str, list[str]] = defaultdict(list)
    for key in sift.not_content():
        blocked[sift.verdict[key]].append(key)
    print(f"empty: sift {sift.empty}, trafilatura {direct.empty}; not content: {dict(blocked)}")
    print(
        f"pages/s: sift {len(pages) / sift.seconds:.1f}, "
        f"trafilatura {len(pages) / direct.seconds:.1f}"
    )
    if args.dump:
        with args.dump.open("w") as out:
            for page in pages:
                k = page.key
                record = {
                    "key": k,
                    "type": page.kind,
                    "sift": round(sift.f1[k], 4),
                    "trafilatura": round(direct.f1[k], 4),
                    "verdict": sift.verdict[k],
                }
                out.write(json.dumps(record) + "\n")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
