"""`sift extract` of a PDF already in the page cache: answered without loading the service
(no actor, no child), with the same output and exit code as the full path; a changed file, a
corrupt cache or a digest take the full path. Real CLI processes; which path ran is read from
`python -X importtime` (every module the process imported)."""

from __future__ import annotations

import io
import json
import os
import sqlite3
import subprocess
import sys
import time
from functools import cache
from pathlib import Path
from typing import Any

import pytest

from sift.store import stamps
from tests.support.pdfs import PHRASES, big_pdf, three_page_pdf
from tests.support.until import until

SERVICE = "sift.service.services"  # the actor system, loaded by the full path only


@cache
def _long() -> bytes:
    return big_pdf(60)  # over the output cap: the whole-document answer is its map


def _sift(
    state: Path, *args: str, deadline: str = "60s", store: str = "sqlite:"
) -> tuple[int, str, str, set[str]]:
    """(exit code, stdout, stderr without the import lines, modules imported)."""
    cfg = state.parent / f"{state.name}.toml"
    cfg.write_text(
        f'state_dir = "{state}"\n[pdf]\ndeadline = "{deadline}"\n[store]\nurl = "{store}"\n'
    )
    env = {k: v for k, v in os.environ.items() if not k.startswith("SIFT_")}
    out = subprocess.run(
        [sys.executable, "-X", "importtime", "-m", "sift", "--config", str(cfg), "extract", *args],
        capture_output=True,
        text=True,
        env=env,
        timeout=120,
    )
    imports, errors = set(), []
    for line in out.stderr.splitlines():
        if line.startswith("import time:"):
            imports.add(line.rsplit("|", 1)[1].strip())
        else:
            errors.append(line)
    return out.returncode, out.stdout, "\n".join(errors), imports


def _same(first: str, second: str, as_json: bool) -> None:
    """The same answer, but for what a cache hit changes: `cached` and the time of the call."""
    if not as_json:
        assert second == first
        return
    a, b = json.loads(first), json.loads(second)
    assert a.pop("cached") is False and b.pop("cached") is True
    a.pop("fetched_at"), b.pop("fetched_at")
    assert b == a


@pytest.mark.parametrize(
    ("args", "code"),
    [
        (["--pages", "41-45"], 0),
        (["--pages", "58-"], 0),
        (["--pages", "20-26", "--max-chars", "9000"], 0),
        (["--grep", "marker-4[0-9]\\b"], 0),
        ([], 0),  # the map
        (["--json", "--pages", "3"], 0),
        (["--json", "--grep", "marker-7\\b"], 0),
        (["--json"], 0),
        (["--pages", "61"], 1),  # out of range
        (["--pages", "x"], 1),
        (["--grep", "("], 1),
        (["--max-chars", "0"], 1),
    ],
)
def test_a_second_extract_answers_from_the_cache_without_the_service(
    tmp_path: Path, args: list[str], code: int
) -> None:
    pdf = tmp_path / "manual.pdf"
    pdf.write_bytes(_long())
    state = tmp_path / "state"
    first = _sift(state, str(pdf), "--no-context", *args)
    assert first[0] == code, first[2]
    assert SERVICE in first[3]  # the full path: it extracts under the actors
    assert _sift(state, str(pdf), "--pages", "1")[0] == 0  # in the cache, whatever `args` did
    # A 1 ms extraction deadline: a child started now would time out, so the same answer
    # means none ran; and the service was never imported.
    again, out, err, imported = _sift(state, str(pdf), "--no-context", *args, deadline="1ms")
    assert SERVICE not in imported and "sift.actors" not in imported
    assert "tornado" not in imported and "pykka" not in imported
    assert (again, err) == (code, first[2])
    _same(first[1], out, "--json" in args)


def test_a_changed_file_is_extracted_again(tmp_path: Path) -> None:
    pdf, state = tmp_path / "paper.pdf", tmp_path / "state"
    pdf.write_bytes(_long())
    code, out, _, _ = _sift(state, str(pdf), "--grep", "marker-2\\b")
    assert code == 0 and "marker-2." in out
    pdf.write_bytes(three_page_pdf())  # the same path, other bytes: a miss
    code, out, err, imported = _sift(state, str(pdf), "--grep", "marmalade", "--json")
    assert code == 0, err
    env = json.loads(out)
    assert env["cached"] is False and PHRASES[2] in env["content"] and SERVICE in imported
    code, out, err, imported = _sift(state, str(pdf), "--grep", "marmalade", "--json")
    assert code == 0 and json.loads(out)["cached"] is True and SERVICE not in imported


def test_a_corrupt_cache_is_answered_by_the_full_path(tmp_path: Path) -> None:
    pdf, state = tmp_path / "manual.pdf", tmp_path / "state"
    pdf.write_bytes(_long())
    code, first, _, _ = _sift(state, str(pdf), "--pages", "41-42", "--no-context")
    assert code == 0
    for side in ("cache.db-wal", "cache.db-shm"):
        (state / side).unlink(missing_ok=True)
    (state / "cache.db").write_bytes(b"not a database" * 1000)
    code, out, err, imported = _sift(state, str(pdf), "--pages", "41-42", "--no-context")
    assert code == 0, err
    assert out == first and SERVICE in imported  # extracted again: the file was moved aside
    assert any(p.name.startswith("cache.db.corrupt-") for p in state.iterdir())
    code, out, _, imported = _sift(state, str(pdf), "--pages", "41-42", "--no-context")
    assert code == 0 and out == first and SERVICE not in imported


def test_a_question_takes_the_full_path(tmp_path: Path) -> None:
    pdf, state = tmp_path / "paper.pdf", tmp_path / "state"
    pdf.write_bytes(three_page_pdf())
    assert _sift(state, str(pdf))[0] == 0
    code, out, err, imported = _sift(state, str(pdf), "-q", "which theorem?", "--json")
    assert code == 0, err
    assert json.loads(out)["cached"] is True and SERVICE in imported


def test_postgresql_takes_the_full_path(tmp_path: Path, pg_cluster: Any) -> None:
    """The page cache in PostgreSQL is read by the store actors: every call is the full path."""
    pdf, state, url = tmp_path / "paper.pdf", tmp_path / "state", pg_cluster.create()
    pdf.write_bytes(three_page_pdf())
    code, first, err, _ = _sift(
        state, str(pdf), "--grep", "marmalade", "--json", "--no-context", store=url
    )
    assert code == 0 and json.loads(first)["cached"] is False, err
    code, out, err, imported = _sift(
        state, str(pdf), "--grep", "marmalade", "--json", "--no-context", store=url
    )
    assert code == 0 and SERVICE in imported, err
    _same(first, out, as_json=True)


def test_a_missing_file_is_the_same_error_without_the_service(tmp_path: Path) -> None:
    code, out, err, imported = _sift(tmp_path / "state", str(tmp_path / "missing.pdf"))
    assert code == 1 and out == "" and SERVICE not in imported
    assert err == f"sift: cannot read {tmp_path / 'missing.pdf'}: No such file or directory"


def test_a_cached_read_marks_the_document_used(tmp_path: Path) -> None:
    """Eviction is least recently used: a read from the cache renews `used_at` (at most once a
    minute: a write costs more than the read)."""
    pdf, state = tmp_path / "paper.pdf", tmp_path / "state"
    pdf.write_bytes(three_page_pdf())
    assert _sift(state, str(pdf))[0] == 0
    with sqlite3.connect(state / "cache.db") as db:
        db.execute("UPDATE pdf_doc SET used_at = 0")
    code, _, _, imported = _sift(state, str(pdf), "--pages", "2")
    assert code == 0 and SERVICE not in imported
    with sqlite3.connect(state / "cache.db") as db:
        (marked,) = db.execute("SELECT used_at FROM pdf_doc").fetchone()
    assert time.time() - 60 < marked <= time.time()
    assert _sift(state, str(pdf), "--pages", "3")[0] == 0
    with sqlite3.connect(state / "cache.db") as db:
        assert db.execute("SELECT used_at FROM pdf_doc").fetchone() == (marked,)


def _same_size(word: bytes) -> bytes:
    """Two pages that say `word`: a PDF whose text a word of the same length changes without
    changing its size (its streams are not compressed)."""
    from reportlab.pdfgen import canvas

    buf = io.BytesIO()
    c = canvas.Canvas(buf, pageCompression=0, invariant=1)
    for n in (1, 2):
        c.drawString(72, 720, f"Page {n} says {word.decode()}.")
        c.showPage()
    c.save()
    return buf.getvalue()


def _settled(path: Path) -> None:
    """Wait until the file's times are old enough for its hash to be remembered."""
    ctime = path.stat().st_ctime_ns
    until(lambda: time.time_ns() > ctime + stamps.SETTLED, "the file's times to settle")


def _text(state: Path, pdf: Path) -> tuple[str, bool]:
    """What a cached `--pages 1-2` printed, and whether the process hashed the file."""
    code, out, err, imported = _sift(state, str(pdf), "--pages", "1-2", "--no-context")
    assert code == 0 and SERVICE not in imported, err
    return out, "hashlib" in imported


def test_an_unchanged_file_is_not_hashed_again(tmp_path: Path) -> None:
    pdf, state = tmp_path / "paper.pdf", tmp_path / "state"
    pdf.write_bytes(_same_size(b"ALPHA"))
    _settled(pdf)
    assert _sift(state, str(pdf), "--pages", "1")[0] == 0  # extracted: the cache is made
    first, hashed = _text(state, pdf)
    assert "ALPHA" in first and hashed  # read, hashed, and its hash remembered
    assert _text(state, pdf) == (first, False)  # the same file: its hash by its stat


def test_a_file_rewritten_in_place_with_its_times_restored_is_read_again(
    tmp_path: Path,
) -> None:
    """The same size and mtime, other bytes: the write gave the file a new ctime, which no
    call can set back, so its remembered hash does not answer it."""
    pdf, state = tmp_path / "paper.pdf", tmp_path / "state"
    old, new = _same_size(b"ALPHA"), _same_size(b"OMEGA")
    assert len(old) == len(new) and old != new
    pdf.write_bytes(old)
    _settled(pdf)
    assert _sift(state, str(pdf), "--pages", "1")[0] == 0
    assert _text(state, pdf)[1] and not _text(state, pdf)[1]  # remembered
    before = pdf.stat()
    with pdf.open("r+b") as f:  # in place: the same inode
        f.write(new)
    os.utime(pdf, ns=(before.st_atime_ns, before.st_mtime_ns))
    after = pdf.stat()
    assert (after.st_ino, after.st_size, after.st_mtime_ns) == (
        before.st_ino,
        before.st_size,
        before.st_mtime_ns,
    )
    assert _sift(state, str(pdf), "--pages", "1")[0] == 0  # the new bytes into the cache
    out, hashed = _text(state, pdf)
    assert "OMEGA" in out and "ALPHA" not in out and hashed


def test_a_file_replaced_by_a_rename_is_read_again(tmp_path: Path) -> None:
    """A file renamed over the old one, with its size and mtime: a new inode."""
    pdf, state, spare = tmp_path / "paper.pdf", tmp_path / "state", tmp_path / "new.tmp"
    pdf.write_bytes(_same_size(b"ALPHA"))
    spare.write_bytes(_same_size(b"OMEGA"))
    _settled(spare)
    assert _sift(state, str(pdf), "--pages", "1")[0] == 0
    assert _sift(state, str(spare), "--pages", "1")[0] == 0  # both in the cache
    assert _text(state, pdf)[1] and not _text(state, pdf)[1]  # remembered
    before = pdf.stat()
    os.utime(spare, ns=(before.st_atime_ns, before.st_mtime_ns))
    spare.replace(pdf)
    assert pdf.stat().st_size == before.st_size and pdf.stat().st_ino != before.st_ino
    out, hashed = _text(state, pdf)  # a cache hit of the other bytes: the right one
    assert "OMEGA" in out and "ALPHA" not in out and hashed


def test_a_file_just_written_is_hashed_every_time(tmp_path: Path) -> None:
    """Times of a moment ago may be the times of a write yet to come in the same tick: until
    they are SETTLED old, the file is read and hashed on every call, its hash not kept."""
    state, data = tmp_path / "state", _same_size(b"ALPHA")
    (tmp_path / "seed.pdf").write_bytes(data)  # its pages into the cache, by content
    assert _sift(state, str(tmp_path / "seed.pdf"), "--pages", "1")[0] == 0
    fresh = 0
    for name in ("a.pdf", "b.pdf", "c.pdf"):
        pdf = tmp_path / name
        pdf.write_bytes(data)
        ctime = pdf.stat().st_ctime_ns
        hashed = [_text(state, pdf)[1] for _ in range(2)]
        if time.time_ns() < ctime + stamps.SETTLED:  # both calls read it before it settled
            fresh += 1
            assert hashed == [True, True]
    assert fresh  # the machine was not so slow that every file settled first


def test_a_pipe_is_read_once(tmp_path: Path) -> None:
    """A named pipe is no file whose hash can be remembered: its bytes are read once, and
    answer both the cache's lookup and the extraction."""
    fifo, state = tmp_path / "piped.pdf", tmp_path / "state"
    os.mkfifo(fifo)
    for _ in range(2):  # extracted, then from the cache
        writer = subprocess.Popen(  # the other end, as a shell's `cat f > piped.pdf`
            [sys.executable, "-c", f"open({str(fifo)!r}, 'wb').write({three_page_pdf()!r})"]
        )
        code, out, err, _ = _sift(state, str(fifo), "--pages", "2", "--no-context")
        assert writer.wait(timeout=60) == 0
        assert code == 0 and PHRASES[2] in out, err
