"""PDF bodies on disk while they wait for a pool slot and while a child reads them.

A PDF may be 100 MB and several may wait for the pool at once: past a small size, a body is
written to a file under `<state_dir>/tmp` and the child reads the file as its stdin, so the
server does not hold the bytes. The file is deleted when its job ends; files a stopped sift
left behind are deleted at start.
"""

from __future__ import annotations

import contextlib
import os
import tempfile
from pathlib import Path


def clear(root: Path) -> None:
    """Create `root`, deleting what a previous run left in it."""
    root.mkdir(parents=True, exist_ok=True)
    for leftover in root.glob("*.pdf"):
        with contextlib.suppress(OSError):
            leftover.unlink()


def write(root: Path, data: bytes) -> Path:
    """`data` in a new file under `root` (mode 0600); blocking, so not on the event loop."""
    root.mkdir(parents=True, exist_ok=True)
    fd, name = tempfile.mkstemp(suffix=".pdf", dir=root)
    try:
        with os.fdopen(fd, "wb") as f:
            f.write(data)
    except BaseException:
        remove(Path(name))
        raise
    return Path(name)


def remove(path: Path | bytes) -> None:
    """Delete a spooled body (a body kept in memory is left alone)."""
    if isinstance(path, Path):
        with contextlib.suppress(OSError):
            path.unlink()
