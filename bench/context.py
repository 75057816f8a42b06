"""What every scenario shares: the origin servers, the temp dir, the generated documents,
progress lines on stderr, and how many runs a scenario makes (full or `--quick`)."""

from __future__ import annotations

import sys
import time
from itertools import count
from pathlib import Path
from typing import Any

from bench.documents import PdfFiles
from bench.sift_proc import SiftProcess


class Ctx:
    def __init__(self, tmp: Path, quick: bool) -> None:
        from tests.support.origin import Origin

        self.tmp = tmp
        self.quick = quick
        self.pdfs = PdfFiles(tmp)
        self.origin = Origin("127.0.0.1")
        self._slow: Origin | None = None
        self._started = time.monotonic()
        self._ids = count(1)
        self.scenario = ""
        self.sifts: list[SiftProcess] = []

    def __enter__(self) -> Ctx:
        self.origin.start()
        return self

    def __exit__(self, *_exc: object) -> None:
        for s in self.sifts:
            s.stop()
        self.origin.stop()
        if self._slow is not None:
            self._slow.stop()

    @property
    def slow_origin(self) -> Any:
        """A second origin on 127.0.0.2: another host, for sift's per-host gate."""
        if self._slow is None:
            from tests.support.origin import Origin

            self._slow = Origin("127.0.0.2").start()
        return self._slow

    def log(self, message: str) -> None:
        elapsed = time.monotonic() - self._started
        print(f"[{elapsed:6.1f}s] {self.scenario}: {message}", file=sys.stderr, flush=True)

    def runs(self, full: int, quick: int) -> int:
        return quick if self.quick else full

    def sift(self, overrides: dict[str, Any] | None = None, callers: int = 1) -> SiftProcess:
        """A fresh, started `sift serve` for this scenario (stopped when the run ends)."""
        workdir = self.tmp / f"sift-{next(self._ids)}-{self.scenario}"
        s = SiftProcess(workdir, overrides, callers)
        self.sifts.append(s)
        s.start()
        self.log(f"sift serve up on :{s.port} (pid {s.pid})")
        return s

    def done_with(self, s: SiftProcess) -> list[str]:
        """Stop `s`; the ERROR lines it logged (each one is a bug worth reporting)."""
        s.stop()
        return s.errors_logged()
