"""False positives of the injection report (issue 35 item 2) on real pages: sift's cleaner and
then the scan every answer runs (`clean/injection_scan.py`) over every page of AEB (`aeb/html`)
and WCXB dev (`wcxb-dev/html`). None of these pages addresses an AI reader, so every page
flagged is a false positive (or a page that really does). Prints the counts by corpus and
what, and excerpts of flagged pages to read.

    python -m bench.injection_fp [--data ../shared/bench-data] [--show 10]
"""

from __future__ import annotations

import argparse
import gzip
import time
from collections import Counter
from pathlib import Path

from bench.aeb import CONTENT_TYPE

CORPORA = {"aeb": "aeb/html", "wcxb-dev": "wcxb-dev/html"}


def scan_page(html: bytes, url: str) -> list[tuple[str, str]]:
    """(what, excerpt) of each finding on one page, as an answer would report them."""
    from sift.clean.dispatch import clean
    from sift.clean.injection_scan import scan
    from sift.clean.protocol import CleanTask

    text = clean(CleanTask(kind="html", body=html, content_type=CONTENT_TYPE, url=url)).text
    return [(f.what, f.excerpt) for f in scan([("body", text)]).kept]


def main() -> None:
    ap = argparse.ArgumentParser()
    data = Path(__file__).resolve().parents[2] / "shared/bench-data"
    ap.add_argument("--data", default=str(data))
    ap.add_argument("--show", type=int, default=10)
    a = ap.parse_args()
    shown: list[str] = []
    for corpus, folder in CORPORA.items():
        files = sorted((Path(a.data) / folder).glob("*.html.gz"))
        flagged: Counter[str] = Counter()
        started = time.perf_counter()
        for path in files:
            found = scan_page(
                gzip.decompress(path.read_bytes()), f"https://example.com/{path.name}"
            )
            for what in {w for w, _ in found}:
                flagged[what] += 1
            shown += [f"{corpus}/{path.name[:12]} {w}: {e}" for w, e in found][:2]
        took = time.perf_counter() - started
        print(
            f"{corpus}: {len(files)} pages, flagged: instruction {flagged['instruction']}, "
            f"invisible {flagged['invisible']} ({took:.0f} s)"
        )
    for line in shown[: a.show]:
        print("  " + line)
    if len(shown) > a.show:
        print(f"  … {len(shown) - a.show} more")


if __name__ == "__main__":
    main()
