"""The bodies of scanned documents, kept on disk (`state_dir/scans`) so that a later request
can OCR the pages it asks for: the page cache holds text, and an image-only page has none yet.

One file per content hash, written whole (a temporary name, then a rename); the oldest used
go once the directory holds more than its byte budget. Blocking file work: run it on a CPU
thread. A private request's body is never kept.
"""

from __future__ import annotations

import contextlib
import os
import re
import shutil
import tempfile
from pathlib import Path

_NAME = re.compile(r"[0-9a-f]{16,64}")


def root(state_dir: Path) -> Path:
    """Where the bodies are kept, in the state directory."""
    return state_dir / "scans"


def path(root: Path, digest: str) -> Path | None:
    """The kept body with content hash `digest`, marked as just used; None when not kept."""
    if not _NAME.fullmatch(digest):
        return None
    found = root / digest
    try:
        os.utime(found)
    except OSError:
        return None
    return found


def put(root: Path, digest: str, body: bytes | Path, budget: int) -> None:
    """Keep `body` (its bytes, or a file holding them) as `digest`, then trim to `budget`."""
    if not _NAME.fullmatch(digest) or path(root, digest) is not None:
        return
    root.mkdir(parents=True, exist_ok=True, mode=0o700)
    fd, tmp = tempfile.mkstemp(dir=root, prefix=".part-")
    try:
        with os.fdopen(fd, "wb") as out:
            if isinstance(body, bytes):
                out.write(body)
            else:
                with body.open("rb") as src:
                    shutil.copyfileobj(src, out)
        os.replace(tmp, root / digest)
    except BaseException:
        with contextlib.suppress(OSError):
            os.unlink(tmp)
        raise
    trim(root, budget)


def trim(root: Path, budget: int) -> None:
    """Remove the least recently used bodies until the rest fit in `budget` bytes."""
    files = []
    for entry in os.scandir(root):
        with contextlib.suppress(OSError):
            st = entry.stat()
            files.append((st.st_mtime, st.st_size, entry.path))
    total = sum(size for _, size, _ in files)
    for _, size, name in sorted(files):
        if total <= budget:
            break
        with contextlib.suppress(OSError):
            os.unlink(name)
            total -= size
