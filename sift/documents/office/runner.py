"""Run the office child for one document and turn its JSON Lines into an `Extraction`, as the
PDF runner does: an empty environment, its own session, RLIMIT_AS, a deadline after which its
process group is killed, a cap on its output; always reaped before this returns.

Blocking: an ExtractWorker calls it on its own thread, in a slot of the PDF pool.
"""

from __future__ import annotations

import time
from pathlib import Path

from sift.core.childproc import SIFT_ROOT
from sift.core.errors import Unavailable, Unprocessable
from sift.documents import wire
from sift.documents.children import ChildSet, Spares
from sift.documents.pdf.runner import (
    MEMORY,
    STDERR_CAP,
    STDOUT_CAP,
    Extraction,
    Progress,
    _meta,
    _pages,
    _signal_name,
)

CHILD_MODULE = ("-m", "sift.documents.office.child")
_spares = Spares(CHILD_MODULE, SIFT_ROOT)


def run_office(
    data: bytes | Path,
    fmt: str,
    *,
    deadline_s: float = 60.0,
    memory: int = MEMORY,
    progress: Progress | None = None,
    spares: int = 0,
) -> Extraction:
    """Convert `data` (the bytes, or a file holding them) of format `fmt` into its parts; in a
    spare started ahead (its readers imported) when `spares` and one waits. The caller starts
    spares again with `refill_office` once it has answered.

    Raises:
        Unprocessable: refused (a zip bomb, XML entity declarations), unreadable, over the
            memory bound, timed out, or more text than the output cap.
        Unavailable: killed by the kernel, or `progress.cancel()` stopped it.
    """
    kids = ChildSet(time.monotonic() + deadline_s, STDOUT_CAP, STDERR_CAP, SIFT_ROOT)
    if progress is not None:
        progress.attach(kids.all, 1 << 30)
    args = ["--format", fmt, "--memory", str(memory)]
    try:
        with kids:
            if progress is None or not progress.cancelled:
                spare = _spares.take() if spares else None
                kids.start(args if spare else [*CHILD_MODULE, *args], data, spare)
            while kids.pump():
                if progress is not None and progress.cancelled:
                    progress.cancel()
                    break
    except FileNotFoundError:  # a spooled body deleted under a job nobody holds any more
        raise Unavailable("conversion stopped: its document file is gone", hint="retry") from None
    if progress is not None and progress.cancelled:
        raise Unavailable(f"{fmt} conversion stopped: every caller went away")
    if kids.timed_out:
        raise Unprocessable(f"{fmt} conversion timed out")
    if kids.overflowed:
        raise Unprocessable(f"{fmt} text over the output limit (64 MiB)")
    child = kids.all[0]
    code = child.returncode or 0
    if code < 0:
        raise Unavailable(
            f"{fmt} conversion crashed (its process was killed by {_signal_name(-code)}, "
            "perhaps out of memory); try again later",
            hint="retry",
            retry_after=10,
        )
    if code == wire.EXIT_REFUSED:
        why = bytes(child.err).decode("utf-8", "replace").partition("\nrefused: ")[2].strip()
        raise Unprocessable(f"{fmt} file refused: {why or 'unsafe archive'}")
    if code == wire.EXIT_MEMORY:
        raise Unprocessable(f"{fmt} file needs more memory than the bound ([pdf] memory)")
    meta = _meta(child.first_line() or b"")
    if meta is None or code != wire.EXIT_OK:
        raise Unprocessable(f"unreadable {fmt} file")
    texts, warnings, errors = _pages([child], 1, meta.pages)
    if errors:
        raise Unprocessable(f"unreadable {fmt} file")
    return Extraction(meta=meta, texts=tuple(texts), warnings=warnings, extracted=meta.pages)


def refill_office(n: int) -> None:
    """Start office spares until `n` wait, for the next file (after an answer is out)."""
    _spares.fill(n)
