"""What the numbers were measured on: CPUs, CPU model, RAM, the commit, the date, the tools.

The commit is read from `.git` files (HEAD, then the ref it names, loose or packed): the
harness runs no git command.
"""

from __future__ import annotations

import datetime as dt
import os
import platform
import shutil
import sys
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent


def _cpu_model() -> str:
    try:
        for line in Path("/proc/cpuinfo").read_text().splitlines():
            if line.startswith("model name"):
                return line.split(":", 1)[1].strip()
    except OSError:
        pass
    return platform.processor() or "unknown"


def _ram_gb() -> float:
    try:
        for line in Path("/proc/meminfo").read_text().splitlines():
            if line.startswith("MemTotal:"):
                return int(line.split()[1]) / 1024**2
    except OSError:
        pass
    return 0.0


def loadavg() -> float:
    """The 1-minute load average: above the CPU count, other work shared the machine."""
    try:
        return os.getloadavg()[0]
    except OSError:
        return 0.0


def git_commit(root: Path = ROOT) -> str:
    git = root / ".git"
    if git.is_file():  # a worktree: "gitdir: <path>"
        git = Path(git.read_text().split(":", 1)[1].strip())
    try:
        head = (git / "HEAD").read_text().strip()
    except OSError:
        return "unknown"
    if not head.startswith("ref:"):
        return head
    ref = head.split(":", 1)[1].strip()
    for base in (git, Path(str(git).split("/worktrees/")[0])):
        try:
            return (base / ref).read_text().strip()
        except OSError:
            pass
        try:
            for line in (base / "packed-refs").read_text().splitlines():
                if line.endswith(" " + ref):
                    return line.split()[0]
        except OSError:
            pass
    return f"unknown ({ref})"


def describe() -> dict[str, Any]:
    import pypdf
    import tornado
    import trafilatura

    return {
        "nproc": os.cpu_count(),
        "cpu": _cpu_model(),
        "ram_gb": round(_ram_gb(), 1),
        "python": sys.version.split()[0],
        "commit": git_commit(),
        "date": dt.datetime.now(dt.UTC).strftime("%Y-%m-%d %H:%M UTC"),
        "tools": {
            "wrk": bool(shutil.which("wrk")),
            "pdftotext": bool(shutil.which("pdftotext")),
            "pypdf": pypdf.__version__,
            "trafilatura": trafilatura.__version__,
            "tornado": tornado.version,
        },
    }
