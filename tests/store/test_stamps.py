"""The rule of `store.stamps` on its own, with times chosen: a hash is remembered only for a
file whose times are SETTLED older than its read and finer than a millisecond, and answers
only the same path and stamp. The CLI's tests (`tests/documents/test_extract_cached.py`)
show it on real files."""

from __future__ import annotations

import sqlite3
from pathlib import Path

from msgspec.structs import astuple, replace

from sift.store import stamps
from sift.store.stamps import SETTLED, Stamp

NOW = 1_800_000_000_123_456_789  # ns
OLD = Stamp(device=1, inode=2, size=3, mtime_ns=NOW - 10 * SETTLED, ctime_ns=NOW - 9 * SETTLED)


def test_a_settled_stamp_is_remembered_and_answers_only_itself(tmp_path: Path) -> None:
    stamps.remember(tmp_path, "/a.pdf", OLD, "h1", NOW)
    assert stamps.recall(tmp_path, "/a.pdf", OLD) == "h1"
    assert stamps.recall(tmp_path, "/b.pdf", OLD) is None
    for field in Stamp.__struct_fields__:
        other = replace(OLD, **{field: getattr(OLD, field) + 1})
        assert stamps.recall(tmp_path, "/a.pdf", other) is None, field


def test_times_near_the_read_are_never_remembered(tmp_path: Path) -> None:
    near = NOW - SETTLED + 1
    for stamp in (replace(OLD, ctime_ns=near), replace(OLD, mtime_ns=near)):
        assert not stamps.settled(stamp, NOW)
        stamps.remember(tmp_path, "/a.pdf", stamp, "h1", NOW)
        assert stamps.recall(tmp_path, "/a.pdf", stamp) is None


def test_a_coarse_filesystems_times_are_never_remembered(tmp_path: Path) -> None:
    """A ctime of whole milliseconds (FAT, HFS+, ext3): a rewrite within its tick keeps it."""
    coarse = replace(OLD, ctime_ns=OLD.ctime_ns // 1_000_000 * 1_000_000)
    assert stamps.settled(OLD, NOW) and not stamps.settled(coarse, NOW)
    stamps.remember(tmp_path, "/a.pdf", coarse, "h1", NOW)
    assert stamps.recall(tmp_path, "/a.pdf", coarse) is None


def test_nothing_is_remembered_without_a_state_directory(tmp_path: Path) -> None:
    stamps.remember(tmp_path / "none", "/a.pdf", OLD, "h1", NOW)
    assert not (tmp_path / "none").exists()
    assert stamps.recall(tmp_path / "none", "/a.pdf", OLD) is None


def test_a_broken_file_is_a_miss(tmp_path: Path) -> None:
    (tmp_path / stamps.FILE).write_bytes(b"not a database" * 100)
    stamps.remember(tmp_path, "/a.pdf", OLD, "h1", NOW)
    assert stamps.recall(tmp_path, "/a.pdf", OLD) is None


def test_the_files_hashed_longest_ago_go_first(tmp_path: Path) -> None:
    stamps.remember(tmp_path, "/0.pdf", OLD, "h0", NOW)
    with sqlite3.connect(tmp_path / stamps.FILE) as db:  # as many more as it keeps, at once
        db.executemany(
            "INSERT INTO file_hash VALUES (?, ?, ?, ?, ?, ?, ?, ?)",
            [(f"/{n}.pdf", *astuple(OLD), f"h{n}", NOW + n) for n in range(1, stamps.KEPT + 1)],
        )
    stamps.remember(tmp_path, "/new.pdf", OLD, "h", NOW + stamps.KEPT + 1)
    with sqlite3.connect(tmp_path / stamps.FILE) as db:
        assert db.execute("SELECT count(*) FROM file_hash").fetchone() == (stamps.KEPT,)
    assert stamps.recall(tmp_path, "/0.pdf", OLD) is None
    assert stamps.recall(tmp_path, "/1.pdf", OLD) is None
    assert stamps.recall(tmp_path, "/2.pdf", OLD) == "h2"
    assert stamps.recall(tmp_path, "/new.pdf", OLD) == "h"
