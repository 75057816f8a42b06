"""ExtractWorker: runs `sift pdftext` children (or the office child) for one document at a
time, on its own thread.

There is one worker per pool slot (`Lead.slot` picks it), so a worker is never asked twice at
once; while it extracts (up to the deadline) its inbox simply waits. The blocking happens here,
never on the IOLoop and never in another actor.

Shutdown: pykka stops an actor only after its current message (so `release` has no child left
to kill); the system calls `sift.documents.children.kill_all()` before stopping the workers, and a
running extraction then ends at once (as crashed: 503, retry).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

from sift.actors.base import SiftActor
from sift.core.answer import Answer
from sift.core.config import PdfConfig
from sift.documents.ocr.runner import OcrAsk, OcrResult, run_ocr
from sift.documents.office.runner import refill_office, run_office
from sift.documents.pdf.runner import Extraction, Progress, refill_spares, run_pdftext


@dataclass(frozen=True)
class ExtractRequest:
    """Extract `pdf` (its bytes or a spool file); `engine` / `deadline_s` None = the
    configured ones. Answers Extraction.

    `partial`: at the deadline, answer the pages extracted so far (see `run_pdftext`).
    """

    pdf: bytes | Path
    reply: Answer
    engine: str | None = None
    deadline_s: float | None = None
    partial: bool = False
    progress: Progress | None = None  # lets another thread read the pages done so far
    office: str | None = None  # an office file or e-book of this format, not a PDF
    ocr: bool = False  # Tesseract is there: image-only pages are marked, not a 422


@dataclass(frozen=True)
class OcrRequest:
    """OCR some pages of `source` (its bytes or a file) as `ask` says. Answers OcrResult."""

    source: bytes | Path
    reply: Answer
    ask: OcrAsk


@dataclass(frozen=True)
class Refill:
    """Start the spare children again (told once the answer that used them is out)."""


class ExtractWorker(SiftActor):
    def __init__(self, cfg: PdfConfig | None = None, child_args: Sequence[str] = ()) -> None:
        """`child_args` are appended to the child's arguments (tests: the sleep hook)."""
        super().__init__()
        self.cfg = cfg or PdfConfig()
        self.child_args = tuple(child_args)
        self._office = False  # an office file came: keep an office spare too

    def handle_extract_request(self, msg: ExtractRequest) -> Extraction:
        if msg.office is not None:
            self._office = True
            return run_office(
                msg.pdf,
                msg.office,
                deadline_s=float(self.cfg.deadline),
                memory=int(self.cfg.memory),
                progress=msg.progress,
                spares=1 if self.cfg.spares else 0,
            )
        return run_pdftext(
            msg.pdf,
            deadline_s=msg.deadline_s if msg.deadline_s is not None else float(self.cfg.deadline),
            engine=msg.engine or self.cfg.engine,
            max_pages=self.cfg.max_pages,
            page_time=float(self.cfg.page_time),
            memory=int(self.cfg.memory),
            children=self.cfg.children,
            spares=self._spares,
            refill=False,  # the service says when: `Refill`
            partial=msg.partial,
            progress=msg.progress,
            ocr=msg.ocr,
            _test_args=self.child_args,
        )

    def handle_ocr_request(self, msg: OcrRequest) -> OcrResult:
        return run_ocr(msg.source, msg.ask)

    def handle_refill(self, _msg: Refill) -> None:
        refill_spares(self._spares)
        if self._office:  # only once office files come: a spare holds every reader
            refill_office(1 if self.cfg.spares else 0)

    @property
    def _spares(self) -> int:
        return self.cfg.children if self.cfg.spares else 0
