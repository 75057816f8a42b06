"""`sift extract` of a PDF already in the page cache: answered without loading the service
(no actor, no child), with the same output and exit code as the full path; a changed file, a
corrupt cache or a digest take the full path. Real CLI processes; which path ran is read from
`python -X importtime` (every module the process imported)."""

from __future__ import annotations

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

from tests.support.pdfs import PHRASES, big_pdf, three_page_pdf

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
