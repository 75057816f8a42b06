"""`GET /healthz` every `interval` s on one kept-alive connection, in a process of its own,
until its stdin closes; then the timings as JSON on stdout.

    python -m bench.healthz PORT [INTERVAL] > result.json

It runs apart from the harness for the same reason as `bench.loadgen`: a poller thread in the
bench process shares that process's GIL with the memory sampler (which reads /proc for every
child every 50 ms), so its timings would hold the sampler's work as well as sift's answer.
"""

from __future__ import annotations

import json
import subprocess
import sys
import threading
from typing import Any

from bench.client import Client


def poll(port: int, interval: float, stop: threading.Event) -> dict[str, Any]:
    client = Client(port, timeout=20)
    ms: list[float] = []
    failures = 0
    while not stop.is_set():
        try:
            r = client.get("/healthz")
            ms.append(r.seconds * 1000)
            failures += r.status != 200
        except OSError:
            failures += 1
            client.close()
        stop.wait(interval)
    client.close()
    return {"ms": ms, "failures": failures}


class HealthPoller:
    """`python -m bench.healthz` for the length of a `with` block: `ms` and `failures` after."""

    def __init__(self, port: int, interval: float = 0.05) -> None:
        self.port = port
        self.interval = interval
        self.ms: list[float] = []
        self.failures = 0
        self._proc: subprocess.Popen[str] | None = None

    def __enter__(self) -> HealthPoller:
        self._proc = subprocess.Popen(
            [sys.executable, "-m", "bench.healthz", str(self.port), str(self.interval)],
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            text=True,
        )
        return self

    def __exit__(self, *_exc: object) -> None:
        assert self._proc is not None
        out, _ = self._proc.communicate(timeout=60)  # closing stdin stops it
        result = json.loads(out)
        self.ms, self.failures = result["ms"], result["failures"]


def main() -> None:
    port = int(sys.argv[1])
    interval = float(sys.argv[2]) if len(sys.argv) > 2 else 0.05
    stop = threading.Event()

    def wait_for_eof() -> None:
        sys.stdin.read()
        stop.set()

    threading.Thread(target=wait_for_eof, daemon=True).start()
    print(json.dumps(poll(port, interval, stop)))


if __name__ == "__main__":
    main()
