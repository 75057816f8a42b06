"""`sift pdftext`: extract a PDF read on stdin into JSON Lines on stdout, in a child process.

Parsing a PDF from the internet is the riskiest thing sift does, so it happens here, in a
fresh process the parent kills at a deadline, under RLIMIT_AS, with an empty environment.
This module reads no environment variable and opens no network connection.

Engines: pdfium (`auto`, the default: fast, and right on CJK and Arabic-script text that
pypdf garbles), pypdf for a file pdfium cannot open; a page that fails or reads as garbage
(sift.documents.pdf.plausible) is extracted again by the other engine and the less garbled
text kept.
Page text carries no control characters but newline and tab.

Output: one `{"meta": …}` line (flushed at once: the parent may start children for the other
ranges of a long document as soon as it knows the page count), then one
`{"page": n, "text"|"error": …, "warning"?: …}` line per page, written in batches (`Batch`). A
failing page does not stop the others. Exit codes: 0 ok, 3 encrypted, 4 unreadable.

Started with `--spare` alone, the child imports first and reads its arguments from stdin (a
JSON line before the document): the parent starts spares ahead of need.
"""

from __future__ import annotations

import argparse
import contextlib
import ctypes
import logging
import os
import sys
import time
import warnings
from collections.abc import Iterable, Iterator
from typing import BinaryIO, Literal

from sift.core import childproc
from sift.documents import wire
from sift.documents.pdf import plausible, scans
from sift.documents.pdf.engine import open_engine
from sift.documents.pdf.engine_base import Encrypted, Engine, Unreadable

MAX_INPUT = 200 * 1024**2


def _parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(prog="sift pdftext", description="internal: PDF → JSON Lines")
    p.add_argument("--engine", choices=("pypdf", "pdfium", "auto"), default="auto")
    p.add_argument("--first", type=int, default=1, help="first page to extract (1-based)")
    p.add_argument("--last", type=int, default=0, help="last page to extract (0 = the end)")
    p.add_argument("--max-pages", type=int, default=20_000)
    p.add_argument(
        "--split-over",
        type=int,
        default=0,
        help="past this many pages, extract only range --part of --parts (wire.split)",
    )
    p.add_argument("--parts", type=int, default=2, help="ranges a long document is split in")
    p.add_argument("--part", type=int, default=0, help="the range this child extracts (0-based)")
    p.add_argument(
        "--claims",
        default="",
        help="with --split-over: instead of range --part, extract the chunks of CLAIM_PAGES "
        "pages this child claims first in this directory (shared by the --parts children)",
    )
    p.add_argument("--no-outline", action="store_true", help="meta without the outline")
    p.add_argument("--memory", type=int, default=2 * 1024**3, help="RLIMIT_AS in bytes, 0 = none")
    p.add_argument("--allow-test-hooks", action="store_true", help=argparse.SUPPRESS)
    p.add_argument("--test-sleep", type=float, default=0.0, help=argparse.SUPPRESS)
    p.add_argument("--test-stall-after", type=int, default=0, help=argparse.SUPPRESS)
    p.add_argument("--test-stall-for", type=float, default=3600.0, help=argparse.SUPPRESS)
    return p


def main(argv: list[str] | None = None) -> int:
    argv = childproc.spare_argv(argv, _prepare)
    if argv is None:
        return wire.EXIT_OK  # the parent went away before it needed this spare
    args = _parser().parse_args(argv)
    _limit(args.memory)
    _keep_heap()
    if args.allow_test_hooks and args.test_sleep > 0:
        time.sleep(args.test_sleep)  # lets a test watch the parent kill a slow child
    data = sys.stdin.buffer.read(MAX_INPUT + 1)
    if len(data) > MAX_INPUT:
        return wire.EXIT_UNREADABLE
    logging.disable(logging.CRITICAL)  # libraries must not write text to stderr
    warnings.simplefilter("ignore")
    try:
        return extract(data, args, childproc.claim_stdout())
    except Encrypted:
        return wire.EXIT_ENCRYPTED
    except Unreadable:
        return wire.EXIT_UNREADABLE


def _prepare() -> None:
    """A spare (`sift.documents.children.Spares`) imports what a document needs first."""
    import pypdfium2  # noqa: F401


_limit = childproc.limit_memory  # before touching the document


# mallopt(3) parameters (glibc's malloc.h)
_M_TRIM_THRESHOLD = -1
_M_MMAP_THRESHOLD = -3


def _keep_heap() -> None:
    """Keep freed memory for the next page instead of giving it back to the kernel.

    pdfium allocates and frees ~1 MB a page; by default glibc trims the top of the heap and
    unmaps large blocks at once, so every page faults its memory in again (~270 page faults
    a page, a fifth of the child's CPU time). A child lives for one document, and its peak is
    bounded by RLIMIT_AS either way. Not glibc (no `mallopt`): nothing to do.
    """
    try:
        mallopt = ctypes.CDLL(None).mallopt
    except (OSError, AttributeError):
        return
    mallopt.argtypes = [ctypes.c_int, ctypes.c_int]
    mallopt(_M_MMAP_THRESHOLD, 32 * 1024**2)  # glibc's largest: big blocks come from the heap
    mallopt(_M_TRIM_THRESHOLD, 1024**3)


def extract(data: bytes, args: argparse.Namespace, out: BinaryIO) -> int:
    """Write the meta line and the page lines of `data`; raises Encrypted / Unreadable."""
    engine, name = _open(args.engine, data)
    meta = engine.meta(outline=not args.no_outline)
    childproc.send(out, wire.MetaLine(meta=meta))
    first, last = args.first, args.last
    numbers: Iterable[int] | None = None
    if args.split_over > 0 and last == 0:
        ranges = wire.split(engine.pages, args.max_pages, args.split_over, args.parts)
        if not 0 <= args.part < len(ranges):
            return wire.EXIT_OK  # a short document: the other children have every page
        first, last = ranges[args.part]
        if args.claims and len(ranges) > 1:
            numbers = _claimed(args.claims, ranges[-1][1])
    last = min(last or engine.pages, engine.pages, args.max_pages)
    other = _Other(data, "pypdf" if name == "pdfium" else "pdfium")
    batch = Batch(out)
    for number in numbers or range(max(1, first), last + 1):
        line = _page(engine, number)
        scanned = line[0].warning == scans.IMAGE_ONLY  # no engine finds text in an image
        if (line[0].error or line[0].warning) and not scanned and other.useful():
            line = other.better(line)
        batch.send(line[0])
        if args.allow_test_hooks and number == args.test_stall_after:
            batch.flush()
            time.sleep(args.test_stall_for)  # lets a test see what a partial run answers
    batch.flush()
    return wire.EXIT_OK


class Batch:
    """Page lines written a batch at a time: a flush a page woke the parent once a page (a
    system call and a switch, on a core the children need); now once BYTES wait or SECONDS
    have passed since the last flush, so the parent still sees pages as they come."""

    BYTES = 64 * 1024
    SECONDS = 0.05

    def __init__(self, out: BinaryIO) -> None:
        self._out = out
        self._lines: list[bytes] = []
        self._size = 0
        self._since = time.monotonic()

    def send(self, msg: wire.PageLine) -> None:
        line = childproc.encode(msg)
        self._lines.append(line)
        self._size += len(line)
        if self._size >= self.BYTES or time.monotonic() - self._since >= self.SECONDS:
            self.flush()

    def flush(self) -> None:
        self._out.write(b"".join(self._lines))
        self._out.flush()
        self._lines, self._size, self._since = [], 0, time.monotonic()


CLAIM_PAGES = 10


def _claimed(claims: str, n: int) -> Iterator[int]:
    """Pages 1–n, CLAIM_PAGES at a time, of the chunks this child claims before its siblings:
    a chunk is claimed by creating its file (O_EXCL: one child wins). The children of a long
    document share the pages as they go, so one slowed down (a busy core) holds none back."""
    for start in range(1, n + 1, CLAIM_PAGES):
        flags = os.O_CREAT | os.O_EXCL | os.O_WRONLY
        try:
            os.close(os.open(os.path.join(claims, str(start)), flags, 0o600))
        except FileExistsError:
            continue
        yield from range(start, min(start + CLAIM_PAGES - 1, n) + 1)


def _open(choice: str, data: bytes) -> tuple[Engine, str]:
    """The engine for `choice`; `auto` is pdfium, and pypdf for a file pdfium cannot open."""
    if choice != "auto":
        name: Literal["pypdf", "pdfium"] = "pdfium" if choice == "pdfium" else "pypdf"
        return open_engine(name, data), name
    try:
        return open_engine("pdfium", data), "pdfium"
    except Unreadable:
        return open_engine("pypdf", data), "pypdf"


# A page's line and the engine's raw text (judged before control characters are stripped).
_Page = tuple[wire.PageLine, str]


def _page(engine: Engine, number: int) -> _Page:
    try:
        text, warning = engine.page(number)
    except Exception as exc:  # one bad page must not cost the others
        return wire.PageLine(page=number, error=f"{type(exc).__name__}: {str(exc)[:200]}"), ""
    line = wire.PageLine(page=number, text=plausible.clean(text, bool(warning)), warning=warning)
    return line, text


def _rank(page: _Page) -> float:
    """Lower is better: a page that reads as text, then less garbage, then an error."""
    line, raw = page
    return 3.0 if line.error else plausible.badness(raw, line.warning)


class _Other:
    """The second engine, for the pages the first fails or flags: opened once, on need.

    When it has done no better on GIVE_UP pages in a row, it is asked no more: a document
    both engines read badly must not cost pypdf's time on every page (a timeout).
    """

    GIVE_UP = 5

    def __init__(self, data: bytes, name: Literal["pypdf", "pdfium"]) -> None:
        self._data: bytes | None = data
        self._name = name
        self._engine: Engine | None = None
        self._losses = 0

    def useful(self) -> bool:
        return self._losses < self.GIVE_UP

    def better(self, first: _Page) -> _Page:
        """The less garbled of `first` and this engine's reading of the same page."""
        if self._engine is None and self._data is not None:
            with contextlib.suppress(Exception):  # it may not open what the first one did
                self._engine = open_engine(self._name, self._data)
            self._data = None
        if self._engine is None:
            self._losses = self.GIVE_UP
            return first
        second = _page(self._engine, first[0].page)
        if _rank(second) < _rank(first):
            self._losses = 0
            return second
        self._losses += 1
        return first


if __name__ == "__main__":
    code = main()
    sys.stderr.flush()
    os._exit(code)  # every line is written and flushed: skip the interpreter's teardown
