"""Memory of a process tree, read from /proc while it runs.

A child's peak is its own `VmHWM` (the kernel's high-water mark of its resident set): a
sampler that reads it every few milliseconds misses only what a child grows in the last
interval before it exits. The concurrent total is the sum of `VmRSS` over the tree at one
sample, so it is a lower bound of the true peak (two samples apart by one interval).
"""

from __future__ import annotations

import threading
import time
from dataclasses import dataclass, field
from pathlib import Path

_PROC = Path("/proc")


def _status_kib(pid: int, key: str) -> int:
    """A `Vm*` line of /proc/<pid>/status in KiB; 0 once the process is gone."""
    try:
        for line in (_PROC / str(pid) / "status").read_text().splitlines():
            if line.startswith(key + ":"):
                return int(line.split()[1])
    except (OSError, ValueError, IndexError):
        pass
    return 0


def peak_rss_mb(pid: int) -> float:
    """The high-water mark of `pid`'s resident set so far (VmHWM), in MB."""
    return _status_kib(pid, "VmHWM") / 1024


def rss_mb(pid: int) -> float:
    return _status_kib(pid, "VmRSS") / 1024


def pss_mb(pid: int) -> float:
    """`pid`'s proportional set size (a page shared by n processes counts 1/n in each), in
    MiB, from /proc/<pid>/smaps_rollup; 0 once the process is gone or unreadable."""
    try:
        for line in (_PROC / str(pid) / "smaps_rollup").read_text().splitlines():
            if line.startswith("Pss:"):
                return int(line.split()[1]) / 1024
    except (OSError, ValueError, IndexError):
        pass
    return 0.0


def tree_pss_mb(pid: int) -> float:
    """PSS summed over `pid` and every descendant: what the tree really holds (summed RSS
    counts Chromium's shared pages once a process)."""
    return pss_mb(pid) + sum(pss_mb(p) for p in descendants(pid))


def _children(pid: int) -> set[int] | None:
    """Direct children from /proc/<pid>/task/*/children; None where the kernel lacks it."""
    found: set[int] = set()
    try:
        tasks = list((_PROC / str(pid) / "task").iterdir())
    except OSError:
        return found
    for task in tasks:
        try:
            found.update(int(x) for x in (task / "children").read_text().split())
        except FileNotFoundError:
            if not (task / "children").exists() and task.exists():
                return None
        except (OSError, ValueError):
            continue
    return found


def descendants(pid: int) -> set[int]:
    """Every live descendant of `pid` (cheap: follows the children lists, no /proc scan)."""
    found: set[int] = set()
    frontier = [pid]
    while frontier:
        kids = _children(frontier.pop())
        if kids is None:
            return _scan_descendants(pid)
        kids -= found
        found |= kids
        frontier.extend(kids)
    return found


def _scan_descendants(pid: int) -> set[int]:
    parents: dict[int, int] = {}
    for entry in _PROC.iterdir():
        if entry.name.isdigit():
            try:
                fields = (entry / "stat").read_text().rsplit(")", 1)[1].split()
                parents[int(entry.name)] = int(fields[1])
            except (OSError, IndexError, ValueError):
                continue
    found: set[int] = set()
    frontier = {pid}
    while frontier:
        frontier = {p for p, pp in parents.items() if pp in frontier} - found
        found |= frontier
    return found


def cmdline(pid: int) -> str:
    try:
        return (_PROC / str(pid) / "cmdline").read_bytes().replace(b"\0", b" ").decode()
    except OSError:
        return ""


@dataclass
class TreePeaks:
    """What a `MemWatch` saw: peaks in MB, per child and summed over the tree."""

    root_peak: float = 0.0  # VmHWM of the root process
    child_peak: dict[int, float] = field(default_factory=dict)  # pid → its VmHWM
    child_cmd: dict[int, str] = field(default_factory=dict)
    total_peak: float = 0.0  # max over samples of root VmRSS + every descendant's VmRSS
    children_total_peak: float = 0.0  # the same without the root
    samples: int = 0

    def peak_of(self, marker: str) -> float:
        """The largest single-child peak among children whose command line holds `marker`."""
        return max(
            (mb for p, mb in self.child_peak.items() if marker in self.child_cmd[p]), default=0.0
        )

    def total_of(self, marker: str) -> int:
        return sum(1 for p in self.child_peak if marker in self.child_cmd[p])


class MemWatch:
    """Samples a process tree on a thread until `stop()`; use as a context manager."""

    def __init__(self, root: int, interval: float = 0.01, marker: str = "") -> None:
        self.root = root
        self.interval = interval
        self.marker = marker  # count only children whose command line holds this
        self.peaks = TreePeaks()
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._run, name="memwatch", daemon=True)

    def __enter__(self) -> MemWatch:
        self._thread.start()
        return self

    def __exit__(self, *_exc: object) -> None:
        self.stop()

    def stop(self) -> TreePeaks:
        self._stop.set()
        self._thread.join(5)
        return self.peaks

    def _run(self) -> None:
        p = self.peaks
        root_cmd = cmdline(self.root)
        while not self._stop.is_set():
            total = 0.0
            for pid in descendants(self.root):
                if pid not in p.child_cmd:
                    cmd = cmdline(pid)
                    if cmd == root_cmd:  # forked, not yet exec'd: look again next time
                        continue
                    p.child_cmd[pid] = cmd
                if self.marker not in p.child_cmd[pid]:
                    continue
                hwm = peak_rss_mb(pid)
                if hwm:
                    p.child_peak[pid] = max(p.child_peak.get(pid, 0.0), hwm)
                total += rss_mb(pid)
            p.children_total_peak = max(p.children_total_peak, total)
            p.total_peak = max(p.total_peak, total + rss_mb(self.root))
            p.root_peak = max(p.root_peak, peak_rss_mb(self.root))
            p.samples += 1
            time.sleep(self.interval)
