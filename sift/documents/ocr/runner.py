"""Run `ocrtext` children for some pages of one document: OCR text by page number.

Blocking: an ExtractWorker calls it on its own thread, as it runs `sift pdftext`. The pages are
dealt to up to `children` children in turn (page i to child i mod k, so the first pages come
first), each fed the document on stdin, under one deadline (`base` seconds plus `page_time` a
page of the busiest child), with the PDF children's empty environment, RLIMIT_AS and group kill
(Tesseract runs inside each child's group); every child is reaped before this returns.
"""

from __future__ import annotations

import shutil
import time
from dataclasses import dataclass, field
from pathlib import Path

from sift.core.childproc import SIFT_ROOT, Broken, LineDecoder
from sift.core.errors import Unprocessable
from sift.documents import wire
from sift.documents.children import ChildSet
from sift.documents.pdf.runner import MEMORY, STDERR_CAP, STDOUT_CAP, crashed_or_locked
from sift.documents.pdf.scans import INSTALL

CHILD_MODULE = ("-m", "sift.documents.ocr.ocrtext")
_meta = LineDecoder(wire.MetaLine, STDOUT_CAP)
_page = LineDecoder(wire.PageLine, STDOUT_CAP)


@dataclass(frozen=True)
class OcrAsk:
    """Which pages of what to OCR, and how (`[ocr]`, `[pdf] memory`, `[pdf] children`)."""

    kind: str  # "pdf" or "image"
    pages: tuple[int, ...]
    languages: str = "eng"
    dpi: int = 200
    tesseract: str = "/usr/bin/tesseract"
    base_s: float = 10.0
    page_time: float = 30.0
    memory: int = MEMORY
    children: int = 2


@dataclass(frozen=True)
class OcrResult:
    """The document's page (frame) count, and the text or the failure of each asked page."""

    count: int
    texts: dict[int, str] = field(default_factory=dict)
    errors: dict[int, str] = field(default_factory=dict)


def tesseract(path: str) -> str | None:
    """Tesseract's full path when it is installed there (or on PATH, for a bare name)."""
    return shutil.which(path)


def missing_language(errors: dict[int, str], languages: str) -> str | None:
    """The error to answer when Tesseract could not load a language pack, else None."""
    if any("Failed loading language" in e or "loading language" in e for e in errors.values()):
        packs = " ".join(f"tesseract-ocr-{name.replace('_', '-')}" for name in languages.split("+"))
        return f"OCR language not installed (`[ocr] languages`): apt-get install {packs}"
    return None


def run_ocr(source: bytes | Path, ask: OcrAsk) -> OcrResult:
    """OCR `ask.pages` of `source` (the document's bytes, or a file holding them).

    Raises:
        Unprocessable: Tesseract missing (hint "ocr"), the deadline passed, a language pack
            missing, or a document that does not open.
        Unavailable: a child killed by the kernel (out of memory, say).
    """
    binary = tesseract(ask.tesseract)
    if binary is None:
        raise Unprocessable(f"OCR needs Tesseract: {INSTALL}", hint="ocr")
    k = max(1, min(ask.children, len(ask.pages)))
    shares = [ask.pages[i::k] for i in range(k)]
    deadline = time.monotonic() + ask.base_s + ask.page_time * len(shares[0])
    base = ["--kind", ask.kind, "--languages", ask.languages, "--dpi", str(ask.dpi)]
    base += ["--tesseract", binary, "--memory", str(ask.memory)]
    with ChildSet(deadline, STDOUT_CAP, STDERR_CAP, SIFT_ROOT) as kids:
        for share in shares:
            kids.start([*CHILD_MODULE, *base, "--pages", ",".join(map(str, share))], source)
        while kids.pump():
            pass
    if kids.timed_out:
        raise Unprocessable("OCR timed out")
    crashed_or_locked(kids.all, "OCR")
    if kids.overflowed or any(c.returncode != wire.EXIT_OK for c in kids.all):
        raise Unprocessable("unreadable image" if ask.kind == "image" else "unreadable pdf")
    return _result(kids, ask)


def _result(kids: ChildSet, ask: OcrAsk) -> OcrResult:
    try:
        count = _meta.decode(kids.all[0].first_line() or b"").meta.pages
        lines = [_page.decode(raw) for c in kids.all for raw in c.lines()[1:]]
    except Broken:
        raise Unprocessable("unreadable pdf") from None
    texts = {ln.page: ln.text or "" for ln in lines if ln.error is None}
    errors = {ln.page: ln.error for ln in lines if ln.error is not None}
    errors.update({n: "missing" for n in ask.pages if n <= count and n not in texts | errors})
    lost = missing_language(errors, ask.languages)
    if lost:
        raise Unprocessable(lost, hint="ocr")
    return OcrResult(count=count, texts=texts, errors=errors)
