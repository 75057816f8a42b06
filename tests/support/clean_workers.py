"""The clean worker processes of the sifts this test process runs, seen from /proc: which
they are, the CPU they burnt, their restarts (a metric), and a page long enough to keep one
busy."""

from __future__ import annotations

import os
import re
from pathlib import Path
from typing import Any


def worker_pids() -> set[int]:
    """The clean worker processes of the sift servers this test process runs."""
    found = set()
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit():
            continue
        try:
            cmd = (entry / "cmdline").read_bytes()
            ppid = int((entry / "stat").read_text().rsplit(")", 1)[1].split()[1])
        except (OSError, IndexError, ValueError):
            continue
        if ppid == os.getpid() and b"sift.clean.worker" in cmd:
            found.add(int(entry.name))
    return found


def cpu_ticks(pid: int) -> int:
    fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    return int(fields[11]) + int(fields[12])  # utime + stime


def restarts(sift: Any, reason: str) -> float:
    text = sift.request("GET", "/metrics", token=None).body.decode()
    m = re.search(rf'^sift_clean_worker_restarts_total{{reason="{reason}"}} (\S+)$', text, re.M)
    return float(m.group(1)) if m else 0.0


def long_page(paragraphs: int) -> bytes:
    body = "".join(
        f"<h2>Part {i}</h2><p>Paragraph {i} of a long page, with <a href='/l{i}'>a link</a> "
        f"and <b>some</b> <i>inline</i> markup to keep the cleaner busy.</p>"
        for i in range(paragraphs)
    )
    return f"<html><head><title>Long</title></head><body><article>{body}</article>".encode()
