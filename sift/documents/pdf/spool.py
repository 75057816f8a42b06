"""PDF bodies on disk while they wait for a pool slot and while a child reads them.

A PDF may be 100 MB and several may wait for the pool at once: past a small size, a body is
written to a file under `<state_dir>/tmp` and the child reads the file as its stdin, so the
server does not hold the bytes. The request and the job each hold a name for the file
(`hold`) and each deletes its own when it ends, so the file lives while either needs it;
files a stopped sift left behind are deleted at start.
"""

from __future__ import annotations

import contextlib
import os
import tempfile
import uuid
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


def hold(path: Path | bytes) -> Path | bytes:
    """A second name for a spooled body, owned by the job that reads it: the request that
    spooled it may end (its client left) while the job goes on for others."""
    if not isinstance(path, Path):
        return path
    held = path.with_name(f"{path.stem}-{uuid.uuid4().hex[:12]}.pdf")
    os.link(path, held)
    return held


def remove(path: Path | bytes) -> None:
    """Delete a spooled body (a body kept in memory is left alone)."""
    if isinstance(path, Path):
        with contextlib.suppress(OSError):
            path.unlink()
