"""Run `sift pdftext` children for one document and turn their JSON Lines into an Extraction.

Blocking: an ExtractWorker actor calls it on its own thread. Every child gets an empty
environment and its own session (so the deadline kill takes its whole process group), the PDF
on stdin, and is always reaped before this returns. One selector loop feeds stdin and drains
stdout and stderr of all children, so a child that stops reading cannot deadlock the parent.

A long document is extracted by `children` children at once (the first sends the outline).
Each child opens the document and counts its pages; past `split_over` pages they share them
in chunks, each claiming the next chunk as it finishes one (`pdftext --claims`, a directory
made here for the run), so the last finishes within a chunk of the others; on a document of
`split_over` pages or fewer the first child extracts every page and the others exit after
counting. A body of `EAGER_BYTES` or more starts them all at
once; a smaller one (most likely a short document) starts the first alone and the others only
when its meta line shows more than `split_over` pages.
"""

from __future__ import annotations

import contextlib
import signal
import tempfile
import time
from collections.abc import Sequence
from pathlib import Path

import msgspec

from sift.core.childproc import SIFT_ROOT as SIFT_ROOT
from sift.core.childproc import Broken, LineDecoder
from sift.core.errors import Unavailable, Unprocessable
from sift.documents import wire
from sift.documents.children import Child, ChildSet, Spares, kill
from sift.documents.children import kill_all as kill_all
from sift.documents.pages import PagedText, page_kind
from sift.documents.pdf import scans

# How the child is started: the module itself, not `python -m sift pdftext` (the CLI's imports
# cost ~50 ms a child).
CHILD_MODULE: tuple[str, ...] = ("-m", "sift.documents.pdf.pdftext")
SPLIT_OVER = 100  # pages; past this a document is extracted by several children at once
CHILDREN = 2  # children per long document (`[pdf] children`)
EAGER_BYTES = 100_000  # a body this large starts every child at once
_spares = Spares(CHILD_MODULE, SIFT_ROOT)
STDOUT_CAP = 64 * 1024**2
STDERR_CAP = 4096
MEMORY = 2 * 1024**3
OCR_NEEDS = f"OCR needs Tesseract: {scans.INSTALL}"

_meta_decoder = LineDecoder(wire.MetaLine, STDOUT_CAP)
_page_decoder = LineDecoder(wire.PageLine, STDOUT_CAP)


class Extraction(msgspec.Struct, frozen=True, kw_only=True):
    """An extracted document: texts[i] is page first+i; warnings/errors keyed by page number.

    Pages first–extracted of meta.pages were extracted. `complete` is False for what a
    `partial` run had when its deadline came (pages 1–extracted; not for the cache).
    """

    meta: wire.Meta
    texts: tuple[str, ...]
    warnings: dict[int, str] = {}
    errors: dict[int, str] = {}
    first: int = 1
    extracted: int = 0
    complete: bool = True

    def document(self) -> PagedText:
        """The pages as `PagedText`; a failed page carries its failure as warning."""
        flagged = dict(self.warnings)
        for page in self.errors:
            flagged[page] = "this page could not be extracted"
        if self.first != 1:
            raise ValueError("paged text starts at page 1")
        meta = self.meta
        return PagedText(
            kind=page_kind(meta.unit),
            title=meta.title,
            pages=self.texts,
            outline=meta.outline,
            warnings=flagged,
            total=meta.pages,
        )


class Progress:
    """A window on a running extraction for another thread: what came out so far.

    The runner hands it its children; `snapshot()` copies their output (a copy of a bytearray
    is atomic under the GIL) and reads pages 1–k from the copy, never touching the live run.
    """

    def __init__(self) -> None:
        self._kids: list[Child] = []
        self._max_pages = 0
        self.cancelled = False

    def attach(self, kids: list[Child], max_pages: int) -> None:
        self._kids, self._max_pages = kids, max_pages

    def cancel(self) -> None:
        """Stop the run (nobody wants its pages any more): kill its children now; the runner
        starts no more and answers `Unavailable`. Safe from any thread."""
        self.cancelled = True
        for kid in list(self._kids):
            kill(kid.proc)

    def snapshot(self) -> Extraction | None:
        """Pages 1–k extracted so far (`complete=False`), or None before the first page."""
        copies = [_Frozen(bytes(k.out)) for k in list(self._kids)]
        return _partial(copies, self._max_pages) if copies else None  # type: ignore[arg-type]


class _Frozen:
    """A child's output as it was at one moment (the part of `Child` `_partial` reads)."""

    def __init__(self, out: bytes) -> None:
        self.out = out

    first_line = Child.first_line
    lines = Child.lines


def run_pdftext(
    pdf: bytes | Path,
    *,
    deadline_s: float = 60.0,
    engine: str = "auto",
    first: int | None = None,
    last: int | None = None,
    max_pages: int = 20_000,
    page_time: float = 0.0,
    memory: int = MEMORY,
    split_over: int = SPLIT_OVER,
    children: int = CHILDREN,
    spares: int = 0,
    refill: bool = True,
    partial: bool = False,
    progress: Progress | None = None,
    ocr: bool = False,
    _test_args: Sequence[str] = (),
) -> Extraction:
    """Extract `pdf` (all pages up to `max_pages`, or `first`–`last`) within `deadline_s`,
    plus `page_time` per page to extract once the child has counted them.

    `spares`: keep this many children started ahead for the next documents (`Spares`); a
    document takes them instead of starting its own (a spooled one is fed to a spare's stdin
    from its file, a chunk at a time). They are started again when the run ends, unless not
    to `refill`: then the caller does it with `refill_spares` when it has answered.

    `pdf` is the document's bytes, or a file holding them (each child reads it as stdin).
    With `ocr` (Tesseract is there), a document whose pages are images is answered with
    those pages marked `scans.IMAGE_ONLY`, for OCR later; without, it is a 422 (hint "ocr").
    With `partial`, a deadline that passes after pages 1–k came out answers those pages
    (`complete=False`) instead of timing out.

    Raises:
        Unprocessable: timed out, encrypted, unreadable, no text layer (hint "ocr"), or
            more text than the output cap.
        Unavailable: `progress.cancel()` stopped the run.
    """
    base = ["--engine", engine, "--max-pages", str(max_pages), "--memory", str(memory), *_test_args]
    ranged = first is not None or last is not None
    if ranged:
        base += ["--first", str(first or 1), "--last", str(last or 0)]
    parts = children if split_over > 0 and not ranged else 1
    with contextlib.ExitStack() as stack:
        if parts > 1:
            claims = stack.enter_context(tempfile.TemporaryDirectory(prefix="sift-claims-"))
            base += ["--split-over", str(split_over), "--parts", str(parts), "--claims", claims]
        try:
            kids = _run(
                pdf, base, deadline_s, max_pages, (split_over, parts), progress, page_time, spares
            )
        except FileNotFoundError:  # a spooled body deleted under a job nobody holds any more
            raise Unavailable(
                "pdf extraction stopped: its document file is gone", hint="retry", retry_after=2
            ) from None
    if spares and refill:
        refill_spares(spares)
    if progress is not None and progress.cancelled:
        raise Unavailable("pdf extraction stopped: every caller went away")
    return _answer(kids, (first, last) if ranged else None, max_pages, partial, ocr)


def _answer(
    kids: ChildSet,
    ranged: tuple[int | None, int | None] | None,
    max_pages: int,
    partial: bool,
    ocr: bool,
) -> Extraction:
    """The pages the children wrote (`ranged`: the first and last asked), or why none."""
    if kids.timed_out:
        ex = _partial(kids.all, max_pages) if partial and not ranged else None
        if ex is None:
            raise Unprocessable("pdf extraction timed out")
        return ex
    if kids.overflowed:
        raise Unprocessable("pdf text over the output limit (64 MiB)")
    crashed_or_locked(kids.all, "pdf extraction")
    meta = _meta(kids.all[0].first_line() or b"")
    if meta is None or any(c.returncode != wire.EXIT_OK for c in kids.all):
        raise Unprocessable("unreadable pdf")
    first, last = ranged or (None, None)
    lo = max(1, first or 1) if ranged else 1
    hi = min((last or meta.pages) if ranged else meta.pages, meta.pages, max_pages)
    texts, warnings, errors = _pages(kids.all, lo, hi)
    if texts and len(errors) == len(texts):
        raise Unprocessable("unreadable pdf")
    scanned = ocr and scans.IMAGE_ONLY in warnings.values()
    if not scanned and not any(t.strip() for t in texts):
        raise Unprocessable(f"no text layer (scanned PDF?); {OCR_NEEDS}", hint="ocr")
    return Extraction(
        meta=meta, texts=tuple(texts), warnings=warnings, errors=errors, first=lo, extracted=hi
    )


def crashed_or_locked(kids: list[Child], what: str) -> None:
    """Raise for a child killed by a signal (not by us, when the deadline and cap were checked
    first: the kernel, e.g. out of memory; 503), or for an encrypted document (422)."""
    killed = next((-(c.returncode or 0) for c in kids if (c.returncode or 0) < 0), None)
    if killed is not None:
        raise Unavailable(
            f"{what} crashed (its process was killed by {_signal_name(killed)}, "
            "perhaps out of memory); try again later",
            hint="retry",
            retry_after=10,
        )
    if any(c.returncode == wire.EXIT_ENCRYPTED for c in kids):
        raise Unprocessable("pdf is encrypted")


def _signal_name(number: int) -> str:
    try:
        return signal.Signals(number).name
    except ValueError:
        return f"signal {number}"


def _run(
    pdf: bytes | Path,
    args: list[str],
    deadline_s: float,
    max_pages: int,
    split: tuple[int, int],
    progress: Progress | None = None,
    page_time: float = 0.0,
    spares: int = 0,
) -> ChildSet:
    """Run the children (one, or with `split` = (over, parts) that many sharing a document
    over `over` pages), taking waiting spares first; all reaped. The deadline grows by
    `page_time` a page when the first child's meta line counts them."""
    kids = ChildSet(time.monotonic() + deadline_s, STDOUT_CAP, STDERR_CAP, SIFT_ROOT)
    if progress is not None:
        progress.attach(kids.all, max_pages)

    def start(part: int) -> Child:
        argv = [*args, *(["--part", str(part), "--no-outline"] if part else [])]
        spare = _spares.take() if spares else None
        return kids.start(argv if spare else [*CHILD_MODULE, *argv], pdf, spare)

    over, parts = split
    with kids:
        if progress is not None and progress.cancelled:
            return kids
        eager = parts > 1 and _size(pdf) >= EAGER_BYTES
        lead = start(0)
        for part in range(1, parts if eager else 1):
            start(part)
        counted = False
        while kids.pump():
            if progress is not None and progress.cancelled:
                progress.cancel()  # again: a child may have started since
                break
            if not counted and (line := lead.first_line()) is not None:
                counted = True
                meta = _meta(line)
                if meta is not None:
                    kids.deadline += page_time * min(meta.pages, max_pages)
                if meta is not None and parts > 1 and not eager:
                    for part in range(1, len(wire.split(meta.pages, max_pages, over, parts))):
                        start(part)
    return kids


def refill_spares(n: int) -> None:
    """Start spares until `n` wait, for the next document. The service calls this once the
    answer of the run that used them is out: a spare's imports take a core for ~0.1 s, which
    the parent needs then to decode, store and answer the pages."""
    _spares.fill(n)


def _size(pdf: bytes | Path) -> int:
    return len(pdf) if isinstance(pdf, bytes) else pdf.stat().st_size


def _meta(line: bytes) -> wire.Meta | None:
    try:
        return _meta_decoder.decode(line).meta
    except Broken:
        return None


def _pages(kids: list[Child], lo: int, hi: int) -> tuple[list[str], dict[int, str], dict[int, str]]:
    """Texts of pages lo–hi from every child's page lines; a page never seen is an error."""
    texts: list[str | None] = [None] * max(0, hi - lo + 1)
    warnings: dict[int, str] = {}
    errors: dict[int, str] = {}
    for child in kids:
        for raw in child.lines()[1:]:
            try:
                line = _page_decoder.decode(raw)
            except Broken:
                raise Unprocessable("unreadable pdf") from None
            if not lo <= line.page <= hi:
                continue
            texts[line.page - lo] = line.text or ""
            if line.error is not None:
                errors[line.page] = line.error
            if line.warning is not None:
                warnings[line.page] = line.warning
    for i, text in enumerate(texts):
        if text is None:
            errors[lo + i] = "missing"
    return [t or "" for t in texts], warnings, errors


def _partial(kids: list[Child], max_pages: int) -> Extraction | None:
    """What came out before the deadline: pages 1–k with every one of them present."""
    meta = _meta(kids[0].first_line() or b"")
    if meta is None:
        return None
    hi = min(meta.pages, max_pages)
    texts, warnings, errors = _pages(kids, 1, hi)
    k = next((p - 1 for p in range(1, hi + 1) if errors.get(p) == "missing"), hi)
    if k == 0 or not any(t.strip() for t in texts[:k]):
        return None
    return Extraction(
        meta=meta,
        texts=tuple(texts[:k]),
        warnings={p: w for p, w in warnings.items() if p <= k},
        errors={p: e for p, e in errors.items() if p <= k},
        extracted=k,
        complete=False,
    )
