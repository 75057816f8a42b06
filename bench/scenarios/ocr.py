"""9. OCR: scanned PDFs (text PDFs rendered at 300 dpi and rebuilt as images, the text layer
dropped; `bench.ocr_corpus`) through `/v1/fetch` with `pages` asking for every page.

- Speed, in pages/s: the whole request as a client sees it (the origin sends the scan, sift
  extracts it, finds its pages image-only, renders each at `[ocr] dpi` and runs Tesseract in
  `[pdf] children` children) against the `tesseract` CLI run by hand on the same page images
  (rendered at the same dpi, saved as PNG beforehand: not timed), one page after the other,
  as it comes (its own threads). Each run asks for a new URL, so nothing is cached.
- Word recall of sift's OCR text against the PDF's own text layer (a word counts as often as
  the truth has it): Latin pages at least 0.95; Cyrillic and CJK (Han characters), each read
  with its own `[ocr] languages`, at least the CLI's recall on the same images (within 2 %).
"""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import time
from concurrent.futures import ThreadPoolExecutor
from functools import partial
from pathlib import Path
from typing import Any

from bench import ocr_corpus as corpus
from bench.context import Ctx
from bench.results import Row, absent, skipped

NAME = "ocr"
TITLE = "9 OCR"
SCAN_DPI = 300  # the scanner's resolution
_NOTES = re.compile(r"^(--- page \d+ ---|\[warning: [^\]]*\])$", re.MULTILINE)


def run(ctx: Ctx) -> list[Row]:
    if shutil.which("tesseract") is None:
        return [
            skipped(TITLE, "pages/s", "tesseract not installed (apt-get install tesseract-ocr)")
        ]
    latin, source = corpus.latin_pdf()
    rows = _speed_and_recall(ctx, latin, "eng", f"Latin ({source})", target=True)
    rows.append(_recall(ctx, corpus.cyrillic_pdf(), "rus", "Cyrillic (generated Russian)"))
    cjk = corpus.cjk_pdf()
    if cjk is None:
        why = "no CJK font: apt-get install fonts-wqy-microhei"
        rows.append(absent(TITLE, "word recall, CJK", why))
    else:
        rows.append(_recall(ctx, cjk, "chi_sim", "CJK (generated Chinese)", cjk=True))
    return rows


def _images(ctx: Ctx, scan: bytes, dpi: int, name: str) -> list[Path]:
    """The scan's pages rendered as sift renders them, as PNG files for the CLI."""
    import pypdfium2 as pdfium

    doc = pdfium.PdfDocument(scan)
    paths = []
    for i in range(len(doc)):
        path = ctx.tmp / f"{name}-{i + 1}.png"
        doc[i].render(scale=dpi / 72, grayscale=True).to_pil().save(path)
        paths.append(path)
    return paths


def _cli(paths: list[Path], languages: str) -> tuple[float, list[str]]:
    """(seconds, texts) of the `tesseract` CLI on each image in turn."""
    texts = []
    started = time.perf_counter()
    for path in paths:
        out = subprocess.run(
            ["tesseract", str(path), "stdout", "-l", languages],
            capture_output=True,
            check=True,
            timeout=600,
        )
        texts.append(out.stdout.decode())
    return time.perf_counter() - started, texts


def _cli_two(paths: list[Path], languages: str) -> float:
    """Seconds of the `tesseract` CLI on the images two at a time, one thread each (as sift's
    children run on 2 cores): the best a shell script does by hand."""
    env = {**os.environ, "OMP_THREAD_LIMIT": "1"}
    started = time.perf_counter()
    with ThreadPoolExecutor(2) as pool:
        argv = [["tesseract", str(p), "stdout", "-l", languages] for p in paths]
        run = partial(subprocess.run, capture_output=True, check=True, timeout=600, env=env)
        list(pool.map(run, argv))
    return time.perf_counter() - started


def _sift(ctx: Ctx, client: Any, name: str, scan: bytes, pages: int, run: int) -> tuple[float, str]:
    path = f"/bench/ocr/{name}.pdf"
    # bytes of their own each run (a comment past the end): sift reuses the OCR text of bytes
    # it has read before, whatever their URL
    ctx.origin.set(path, scan + f"\n% run {run}\n".encode(), "application/pdf")
    body = {"url": f"{ctx.origin.url(path)}?run={run}", "pages": f"1-{pages}", "context": False}
    r = client.post("/v1/fetch", body)
    if r.status != 200 or r.json.get("ocr_pages") != list(range(1, pages + 1)):
        raise RuntimeError(f"sift OCR of {name}: {r.status} {r.body[:300]!r}")
    return r.seconds, _NOTES.sub("", r.json["content"])


def _speed_and_recall(ctx: Ctx, pdf: bytes, languages: str, what: str, target: bool) -> list[Row]:
    sift = ctx.sift({"ocr": {"languages": languages}, "request_deadline": "600s"})
    client = sift.client(timeout=900)
    truth = "\n".join(corpus.text_layer(pdf))
    scan, _ = corpus.scanned(pdf, SCAN_DPI)
    pages = len(corpus.text_layer(pdf))
    dpi = sift_dpi()
    images = _images(ctx, scan, dpi, f"latin-{languages}")
    pps_sift, pps_cli, pps_two, rec_sift, rec_cli = [], [], [], [], []
    for i in range(ctx.runs(3, 1)):
        seconds, text = _sift(ctx, client, f"latin-{languages}", scan, pages, i)
        pps_sift.append(pages / seconds)
        rec_sift.append(corpus.recall(truth, text))
        cli_seconds, cli_texts = _cli(images, languages)
        pps_cli.append(pages / cli_seconds)
        rec_cli.append(corpus.recall(truth, "\n".join(cli_texts)))
        pps_two.append(pages / _cli_two(images, languages))
        ctx.log(f"{what} run {i + 1}: sift {seconds:.1f} s, tesseract CLI {cli_seconds:.1f} s")
    errors = ctx.done_with(sift)
    note = f"{pages} pages, scanned at {SCAN_DPI} dpi, read at {dpi} dpi"
    note += f"; sift logged errors: {errors[:2]}" if errors else ""
    return [
        Row(
            TITLE,
            f"pages/s, {what}",
            pps_sift,
            pps_cli,
            "tesseract CLI on the same page images, one after another",
            target=("ratio", ">=", 1.0),
            note=note,
        ),
        Row(
            TITLE,
            f"pages/s, {what}",
            pps_sift,
            pps_two,
            "tesseract CLI, 2 at a time, 1 thread each (context)",
            # sift also downloads, extracts and renders the pages: within 30 % of the CLI's pace
            target=("ratio", ">=", 0.7),
            note="sift's figure includes the download, extraction and rendering",
        ),
        Row(
            TITLE,
            f"word recall, {what}",
            rec_sift,
            rec_cli,
            "tesseract CLI on the same page images",
            target=("sift", ">=", 0.95) if target else None,
            note="words of the text layer found in the OCR text",
        ),
    ]


def _recall(ctx: Ctx, pdf: bytes, languages: str, what: str, cjk: bool = False) -> Row:
    sift = ctx.sift({"ocr": {"languages": languages}, "request_deadline": "600s"})
    client = sift.client(timeout=900)
    truth = "\n".join(corpus.text_layer(pdf))
    scan, _ = corpus.scanned(pdf, SCAN_DPI)
    pages = len(corpus.text_layer(pdf))
    name = f"recall-{languages}"
    _, text = _sift(ctx, client, name, scan, pages, 0)
    _, cli_texts = _cli(_images(ctx, scan, sift_dpi(), name), languages)
    ctx.done_with(sift)
    unit = "Han characters" if cjk else "words"
    return Row(
        TITLE,
        f"word recall, {what}",
        [corpus.recall(truth, text, cjk)],
        [corpus.recall(truth, "\n".join(cli_texts), cjk)],
        "tesseract CLI on the same page images",
        ("ratio", ">=", 0.98),  # sift runs the same engine: what the CLI reads, sift reads
        note=f"{unit} of the text layer found in the OCR text; {pages} pages",
    )


def sift_dpi() -> int:
    from sift.core.config import OcrConfig

    return OcrConfig().dpi
