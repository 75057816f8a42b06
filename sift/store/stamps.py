"""The content hashes of local files, remembered by what `stat` says of them, for the cached
`sift extract`: an unchanged file is not read and hashed again (a 2,000-page PDF is 1.8 MB of
SHA-256 on every call). Kept in `files.db` of the state directory, beside the page cache.

A remembered hash answers only a file whose path, device, inode, size, mtime and ctime are
all the ones it was hashed with. Writing a file's bytes, `utime`, `chmod` or a rename over it
give it a new ctime (the kernel's clock; no call sets it) or a new inode. Like git's index, a
hash is remembered only when the file's times are clearly older than the moment its bytes
were read (`SETTLED`): a file written again within the same timestamp tick keeps its times,
and its new bytes must not be answered with the old hash. A filesystem that keeps times to
whole milliseconds or coarser (FAT, HFS+, ext3, some network shares) never has a hash
remembered. Not seen by any `stat`-based check (git's and make's alike): a change written
through a shared writable memory map to a page already written, which the kernel does not
stamp again."""

from __future__ import annotations

import contextlib
import os
import sqlite3
from pathlib import Path

import msgspec

FILE = "files.db"
SETTLED = 2_000_000_000  # ns: a timestamp this much older than the read is not of a later write
_COARSE = 1_000_000  # ns: a ctime that is a whole number of these comes from a coarse filesystem
KEPT = 4_096  # files remembered; the ones hashed longest ago go first
_SCHEMA = """CREATE TABLE IF NOT EXISTS file_hash (
    path TEXT PRIMARY KEY, device INTEGER NOT NULL, inode INTEGER NOT NULL,
    size INTEGER NOT NULL, mtime_ns INTEGER NOT NULL, ctime_ns INTEGER NOT NULL,
    content_hash TEXT NOT NULL, hashed_at_ns INTEGER NOT NULL)"""


class Stamp(msgspec.Struct, frozen=True):
    """What `stat` says of a file that a change of its bytes changes."""

    device: int
    inode: int
    size: int
    mtime_ns: int
    ctime_ns: int

    @classmethod
    def of(cls, st: os.stat_result) -> Stamp:
        return cls(st.st_dev, st.st_ino, st.st_size, st.st_mtime_ns, st.st_ctime_ns)


def settled(stamp: Stamp, read_at_ns: int) -> bool:
    """Whether a file with `stamp`, whose bytes were read from `read_at_ns` on, can have its
    hash remembered: both its times are older than the read by SETTLED (a later write gets a
    later ctime), and its ctime has finer than whole milliseconds."""
    oldest = read_at_ns - SETTLED
    return stamp.ctime_ns < oldest and stamp.mtime_ns < oldest and stamp.ctime_ns % _COARSE != 0


def recall(state: Path, path: str, stamp: Stamp) -> str | None:
    """The content hash remembered for the file at `path` as `stamp` says it is, or None."""
    try:
        db = sqlite3.connect(f"file:{state / FILE}?mode=ro", uri=True, timeout=0)
    except sqlite3.Error:
        return None
    try:
        found = db.execute(
            "SELECT content_hash FROM file_hash WHERE path = ? AND device = ? AND inode = ? "
            "AND size = ? AND mtime_ns = ? AND ctime_ns = ?",
            (path, *msgspec.structs.astuple(stamp)),
        ).fetchone()
    except sqlite3.Error:
        return None
    finally:
        db.close()
    return found[0] if found else None


def remember(state: Path, path: str, stamp: Stamp, content_hash: str, read_at_ns: int) -> None:
    """Remember `content_hash` for the file at `path`, if `settled`. A state directory that
    does not exist yet, a busy or broken file: nothing is remembered, the next call hashes."""
    if not settled(stamp, read_at_ns) or not state.is_dir():
        return
    with contextlib.suppress(sqlite3.Error):
        db = sqlite3.connect(state / FILE, timeout=0, isolation_level=None)
        try:
            db.execute(_SCHEMA)
            db.execute("BEGIN IMMEDIATE")
            db.execute(
                "INSERT OR REPLACE INTO file_hash VALUES (?, ?, ?, ?, ?, ?, ?, ?)",
                (path, *msgspec.structs.astuple(stamp), content_hash, read_at_ns),
            )
            db.execute(
                "DELETE FROM file_hash WHERE path NOT IN (SELECT path FROM file_hash "
                "ORDER BY hashed_at_ns DESC LIMIT ?)",
                (KEPT,),
            )
            db.execute("COMMIT")
        finally:
            db.close()
