"""The baselines: the same work done directly, in one process, with no service around it.

- HTML: a pycurl GET (one reused handle, as sift's fetcher keeps its handles) and
  `trafilatura.extract` with sift's settings (`sift/clean/html.py`: markdown, tables,
  formatting and links on, images and comments off).
- PDF: pypdf or pdfium on the whole document in a fresh process (`python -m bench.direct
  pypdf|pdfium FILE`), timed inside it from the bytes in memory to the last page's text —
  interpreter start-up and imports are not counted, which favours the baseline — and its
  peak memory; `pdfium_pages` reads a page range in this process. And `pdftotext -layout`
  (poppler) where it is installed, timed from outside.

Peak memory is the process's own `VmHWM`, never `ru_maxrss`: a child started by `vfork`
(as `subprocess` does) counts its parent's resident set in `ru_maxrss` until it execs, so
every child of a 100 MB harness would seem to peak at 100 MB. pypdf's child reads its
VmHWM at the end; pdftotext's is sampled from /proc while it runs (`bench.procmem`).
"""

from __future__ import annotations

import io
import json
import os
import shutil
import subprocess
import sys
import time
from pathlib import Path

import pycurl


class CurlGetter:
    """GETs over one pycurl handle; no proxy, no name lookup (the URLs are numeric)."""

    def __init__(self) -> None:
        self.curl = pycurl.Curl()

    def get(self, url: str) -> tuple[bytes, str]:
        buf = io.BytesIO()
        c = self.curl
        c.setopt(pycurl.URL, url)
        c.setopt(pycurl.WRITEDATA, buf)
        c.setopt(pycurl.NOSIGNAL, 1)
        c.setopt(pycurl.PROXY, "")
        c.setopt(pycurl.ACCEPT_ENCODING, "")
        c.setopt(pycurl.TIMEOUT, 30)
        c.perform()
        status = c.getinfo(pycurl.RESPONSE_CODE)
        if status != 200:
            raise RuntimeError(f"direct GET {url}: {status}")
        return buf.getvalue(), c.getinfo(pycurl.CONTENT_TYPE) or ""

    def close(self) -> None:
        self.curl.close()


def trafilatura_markdown(html: bytes, url: str) -> str:
    """trafilatura as sift calls it, on the page decoded as UTF-8."""
    import trafilatura

    from sift.clean.html import EXTRACT_OPTIONS

    text = trafilatura.extract(html.decode("utf-8", "replace"), url=url, **EXTRACT_OPTIONS)
    return text or ""


def fetch_and_clean(getter: CurlGetter, url: str) -> str:
    body, _ctype = getter.get(url)
    return trafilatura_markdown(body, url)


def _pypdf(data: bytes) -> tuple[int, int]:
    import logging

    logging.getLogger("pypdf").setLevel(logging.CRITICAL + 1)
    from pypdf import PdfReader

    reader = PdfReader(io.BytesIO(data), strict=False)
    return len(reader.pages), sum(len(page.extract_text() or "") for page in reader.pages)


def pdfium_pages(data: bytes | Path, first: int = 1, last: int = 0) -> tuple[int, int]:
    """pdfium's text of pages first–last (0: the end), as sift reads it: (pages, chars)."""
    import pypdfium2 as pdfium

    doc = pdfium.PdfDocument(data)
    last = last or len(doc)
    chars = 0
    for n in range(first - 1, last):
        page = doc[n]
        textpage = page.get_textpage()
        chars += len(textpage.get_text_bounded())
        textpage.close()
        page.close()
    doc.close()
    return last - first + 1, chars


def _direct_main(engine: str, path: str) -> int:
    """Child side: extract every page; print seconds, pages, chars, peak MB."""
    extract = _pypdf if engine == "pypdf" else pdfium_pages
    if engine == "pdfium":
        import pypdfium2  # noqa: F401  (imports are not counted, as for pypdf)
    data = Path(path).read_bytes()
    started = time.perf_counter()
    pages, chars = extract(data)
    seconds = time.perf_counter() - started
    from bench.procmem import peak_rss_mb

    peak = peak_rss_mb(os.getpid())
    json.dump({"seconds": seconds, "pages": pages, "chars": chars, "peak_mb": peak}, sys.stdout)
    return 0


def pypdf_direct(path: Path, timeout: float = 300) -> dict[str, float]:
    """pypdf on `path` in a fresh process: {"seconds", "pages", "chars", "peak_mb"}."""
    return _direct(["pypdf", str(path)], timeout)


def pdfium_direct(path: Path, timeout: float = 300) -> dict[str, float]:
    """pdfium on `path` in one fresh process, as `pypdf_direct`."""
    return _direct(["pdfium", str(path)], timeout)


def _direct(args: list[str], timeout: float) -> dict[str, float]:
    out = subprocess.run(
        [sys.executable, "-m", "bench.direct", *args],
        capture_output=True,
        text=True,
        timeout=timeout,
        check=True,
    )
    return json.loads(out.stdout)


def pdftotext_available() -> bool:
    return shutil.which("pdftotext") is not None


def pdftotext_direct(path: Path, timeout: float = 300) -> dict[str, float]:
    """`pdftotext -layout path -`: wall seconds, chars of output, peak MB (sampled VmHWM)."""
    from bench.procmem import MemWatch

    started = time.perf_counter()
    with MemWatch(os.getpid(), interval=0.01, marker="pdftotext") as watch:
        out = subprocess.run(
            ["pdftotext", "-layout", str(path), "-"],
            capture_output=True,
            timeout=timeout,
            check=True,
        )
    seconds = time.perf_counter() - started
    return {
        "seconds": seconds,
        "chars": len(out.stdout),
        "peak_mb": watch.peaks.peak_of("pdftotext"),
    }


if __name__ == "__main__":
    if sys.argv[1:2] in (["pypdf"], ["pdfium"]) and len(sys.argv) == 3:
        raise SystemExit(_direct_main(sys.argv[1], sys.argv[2]))
    print("usage: python -m bench.direct pypdf|pdfium FILE", file=sys.stderr)
    raise SystemExit(2)
