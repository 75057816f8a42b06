"""The PDF rows of issue 13, on their own: `python -m bench.pdf_pages [--out DIR]`.

- cold pages/s on 300 and 2,000 pages: sift's children (`run_pdftext`, two page ranges at
  once past 200 pages) vs `pdftotext -layout` and vs pdfium called directly in one process;
- `sift extract FILE --pages 401-405`, a real CLI process, first call and cached calls, vs
  pdfium opening the file and reading the same range in one process (no interpreter start).

Pages past 2,000 by `pages`/`grep` through HTTP are measured by `bench/scenarios/pdf_cached.py`
on a real server; this script does not start one. Prints one line a row; writes nothing else.
"""

from __future__ import annotations

import argparse
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path


def _pdf(pages: int, where: Path) -> Path:
    from tests.pdfs import big_pdf  # the generator the tests use: `Page N marker-N.` a page

    path = where / f"doc{pages}.pdf"
    if not path.exists():
        path.write_bytes(big_pdf(pages))
    return path


def _best(fn, runs: int = 3) -> float:  # type: ignore[no-untyped-def]
    times = []
    for _ in range(runs):
        t = time.perf_counter()
        fn()
        times.append(time.perf_counter() - t)
    return min(times)


def _pdfium(path: Path, first: int = 1, last: int = 0) -> int:
    import pypdfium2 as pdfium

    doc = pdfium.PdfDocument(str(path))
    last = last or len(doc)
    for n in range(first - 1, last):
        doc[n].get_textpage().get_text_range()
    doc.close()
    return last - first + 1


def cold(where: Path) -> None:
    from sift.documents.runner import run_pdftext

    for pages in (300, 2000):
        path = _pdf(pages, where)
        data = path.read_bytes()
        sift = _best(lambda: run_pdftext(data, deadline_s=600))  # noqa: B023
        out = where / "out.txt"
        native = _best(lambda: subprocess.run(["pdftotext", "-layout", str(path), str(out)],  # noqa: B023
                                              check=True))  # fmt: skip
        direct = _best(lambda: _pdfium(path))  # noqa: B023
        print(f"pdf cold {pages} pages: sift {pages / sift:.0f} pages/s, pdftotext -layout "
              f"{pages / native:.0f} (sift at {native / sift:.2f}x), pdfium direct "
              f"{pages / direct:.0f} (sift at {direct / sift:.2f}x)")  # fmt: skip


def extract_chunks(where: Path) -> None:
    path = _pdf(2000, where)
    state = where / "state"
    shutil.rmtree(state, ignore_errors=True)
    cfg = where / "sift.toml"
    cfg.write_text(f'state_dir = "{state}"\n')
    env = {k: v for k, v in os.environ.items() if not k.startswith("SIFT_")}
    cmd = [sys.executable, "-m", "sift", "--config", str(cfg), "extract", str(path),
           "--pages", "401-405", "--no-context"]  # fmt: skip

    def once() -> float:
        t = time.perf_counter()
        subprocess.run(cmd, check=True, capture_output=True, env=env)
        return time.perf_counter() - t

    first = once()
    cached = statistics.median(once() for _ in range(5))
    direct = statistics.median(_timed(lambda: _pdfium(path, 401, 405)) for _ in range(5))
    print(f"sift extract --pages 401-405 of 2000: first {first * 1000:.0f} ms, cached p50 "
          f"{cached * 1000:.0f} ms (a whole CLI process), pdfium direct in-process "
          f"{direct * 1000:.0f} ms ({cached / direct:.1f}x)")  # fmt: skip


def _timed(fn) -> float:  # type: ignore[no-untyped-def]
    t = time.perf_counter()
    fn()
    return time.perf_counter() - t


def main() -> None:
    p = argparse.ArgumentParser(prog="python -m bench.pdf_pages")
    p.add_argument("--out", help="where the generated PDFs are kept (default: a temp dir)")
    a = p.parse_args()
    where = Path(a.out or tempfile.mkdtemp(prefix="sift-pdf-bench-"))
    where.mkdir(parents=True, exist_ok=True)
    cold(where)
    extract_chunks(where)


if __name__ == "__main__":
    main()
