"""Progress for the CLI's long waits, on a terminal only (tqdm, on stderr).

A wait shorter than a second shows nothing. Past it: the pages extracted of N when sift can
see them (an in-process `sift extract` or `sift fetch` of a PDF: `Progress.snapshot()`), else
a spinner with the elapsed time — over HTTP, /v1/fetch streams no progress, and a spinner is
the honest thing to show. When stderr is not a terminal (a pipe, a log, an agent's shell)
nothing is written at all. The display runs on its own thread, so it works whether the main
thread blocks in an HTTP call or runs the event loop.
"""

from __future__ import annotations

import os
import sys
import threading
from collections.abc import Callable
from types import TracebackType
from typing import TextIO

# (pages done, pages in all) of the work being waited for, or None while unknown.
Pages = Callable[[], "tuple[int, int] | None"]

SPIN = "|/-\\"
# The numbers first: a narrow terminal cuts the end of the line (the label), not them.
BAR = "{elapsed} {n}/{total} pages {percentage:3.0f}%|{bar:20}| {desc}"


class Waiting:
    """`with Waiting("fetching", pages):` shows progress while the body of the `with` runs."""

    def __init__(
        self,
        label: str,
        pages: Pages | None = None,
        *,
        after: float = 1.0,
        tick: float = 0.25,
        stream: TextIO | None = None,
    ) -> None:
        self.label, self.pages, self.after, self.tick = label, pages, after, tick
        self.stream = stream or sys.stderr
        self._stop = threading.Event()
        self._thread: threading.Thread | None = None

    def __enter__(self) -> Waiting:
        if self.stream.isatty():
            self._thread = threading.Thread(target=self._show, daemon=True, name="sift-progress")
            self._thread.start()
        return self

    def __exit__(
        self, kind: type[BaseException] | None, exc: BaseException | None, tb: TracebackType | None
    ) -> None:
        self._stop.set()
        if self._thread is not None:
            self._thread.join(2)

    def _show(self) -> None:
        if self._stop.wait(self.after):
            return
        from tqdm import tqdm  # late: a wait under a second, or off a terminal, draws nothing

        # Sizes given: tqdm shows nothing on a terminal that reports 0 rows (an unsized pty).
        bar = tqdm(
            total=None,
            file=self.stream,
            leave=False,
            bar_format="{elapsed} {desc}",
            desc=self.label,
            ncols=self._width(),
            nrows=24,
        )
        bar.start_t -= self.after  # the elapsed time of the whole wait
        turn = 0
        try:
            while True:
                known = self._pages()
                if known is not None and known[1] > 0:
                    done, total = known
                    if bar.total != total:
                        bar.total = total
                        bar.bar_format = BAR
                    bar.n = min(done, total)
                    bar.set_description_str(self.label, refresh=False)
                else:
                    bar.set_description_str(f"{SPIN[turn % 4]} {self.label}", refresh=False)
                    turn += 1
                bar.refresh()
                if self._stop.wait(self.tick):
                    return
        finally:
            bar.close()

    def _width(self) -> int:
        """The terminal's width; 80 when it says 0 (a pseudo-terminal nobody sized)."""
        try:
            return os.get_terminal_size(self.stream.fileno()).columns or 80
        except (OSError, ValueError):
            return 80

    def _pages(self) -> tuple[int, int] | None:
        if self.pages is None:
            return None
        try:
            return self.pages()
        except Exception:  # a snapshot that races the run's end is simply not shown
            return None
