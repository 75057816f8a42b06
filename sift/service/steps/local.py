"""A local file's identity for `sift extract` (and Firecrawl's `parse`): its content type by
name, its content hash, and the page-cache key of a PDF. A file's bytes are its identity, so
its cached pages never go stale."""

from __future__ import annotations

import os
import stat
import time
from pathlib import Path

from sift.clean import formats
from sift.store import stamps

LOCAL = "local"  # the caller class of local files in the cache

_TYPES = {
    ".pdf": "application/pdf",
    ".html": "text/html",
    ".htm": "text/html",
    ".json": "application/json",
    ".txt": "text/plain",
    ".md": "text/markdown",
    **{f".{fmt}": mt for mt, fmt in formats.MEDIA_TYPES.items() if not mt.startswith("text/r")},
    # Images, read by OCR: a file so named whose bytes are no image is refused, not sniffed.
    ".png": "image/png",
    ".jpg": "image/jpeg",
    ".jpeg": "image/jpeg",
    ".webp": "image/webp",
    ".tif": "image/tiff",
    ".tiff": "image/tiff",
    ".gif": "image/gif",
}


def content_type(name: str) -> str:
    """The type a file's name says ("" when it says none: the bytes are sniffed)."""
    suffix = name[name.rfind(".") :].lower() if "." in name else ""
    return _TYPES.get(suffix, "")


def content_hash(data: bytes) -> str:
    """The content hash of a body, fetched or local: the cache's `content_hash`."""
    import hashlib  # late: a file whose hash is remembered loads no OpenSSL

    return hashlib.sha256(data).hexdigest()[:32]


def file_hash(state: Path, path: Path) -> str:
    """The content hash of the file at `path` (absolute), remembered by its `stat` in the state
    directory (`store.stamps`): an unchanged file is not read again. Opened before its `stat`
    is taken, so the stamp is of the file read, and a network filesystem checks it anew."""
    read_at = time.time_ns()
    with path.open("rb") as f:
        st = os.fstat(f.fileno())
        if not stat.S_ISREG(st.st_mode):  # a pipe or a device: its bytes are not its stat's
            return content_hash(f.read())
        stamp = stamps.Stamp.of(st)
        known = stamps.recall(state, str(path), stamp)
        if known is not None:
            return known
        digest = content_hash(f.read())
        if stamps.Stamp.of(os.fstat(f.fileno())) == stamp:  # not written while it was read
            stamps.remember(state, str(path), stamp, digest, read_at)
    return digest


def pdf_key(digest: str) -> str:
    """The page-cache URL of a local PDF with content hash `digest` (class `LOCAL`)."""
    return f"sha256:{digest}"
