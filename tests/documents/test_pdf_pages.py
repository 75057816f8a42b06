"""Every page of a long PDF (no cap below `[pdf] max_pages`), and `sift extract` answering a
second call on the same file from the page cache."""

from __future__ import annotations

import json
import os
import sqlite3
import subprocess
import sys
from functools import cache
from pathlib import Path
from typing import Any

from tests.support.pdfs import big_pdf, pdf_extractions

PDF = "application/pdf"


@cache
def _long() -> bytes:
    return big_pdf(2500)


def test_pages_past_2000_are_reachable_by_pages_and_grep(make_sift, origin):
    sift = make_sift({"request_deadline": "300s", "pdf": {"deadline": "300s"}})
    origin.set("/pages-2500.pdf", _long(), PDF)
    r = sift.fetch(origin.url("/pages-2500.pdf"), pages="2401", context=False)
    assert r.status == 200, r.body
    assert "warning" not in r.json, r.json["warning"]  # kept in the page cache
    assert r.json["pdf"]["pages"] == 2500 and r.json["pdf"]["returned"] == [2401, 2401]
    assert "marker-2401." in r.json["content"] and "marker-2402." not in r.json["content"]
    before = pdf_extractions(sift)
    r = sift.fetch(origin.url("/pages-2500.pdf"), grep="marker-2401\\b")
    assert r.status == 200 and "p. 2401: " in r.json["content"], r.body
    r = sift.fetch(origin.url("/pages-2500.pdf"), pages="2499-2500", context=False)
    assert r.status == 200 and r.json["cached"] is True
    assert "marker-2500." in r.json["content"]
    # From the cache:
    assert origin.count("/pages-2500.pdf") == 1 and pdf_extractions(sift) == before


def _extract(tmp_path: Path, pdf: Path, pages: str, deadline: str = "60s") -> dict[str, Any]:
    """`sift extract FILE --pages R --json`, a real CLI process with its own state dir."""
    cfg = tmp_path / "sift.toml"
    cfg.write_text(f'state_dir = "{tmp_path / "state"}"\n[pdf]\ndeadline = "{deadline}"\n')
    env = {k: v for k, v in os.environ.items() if not k.startswith("SIFT_")}
    out = subprocess.run(
        [
            sys.executable,
            "-m",
            "sift",
            "--config",
            str(cfg),
            "extract",
            str(pdf),
            "--pages",
            pages,
            "--json",
            "--no-context",
        ],
        capture_output=True,
        text=True,
        env=env,
        timeout=120,
    )
    assert out.returncode == 0, out.stderr
    return json.loads(out.stdout)


def test_sift_extract_answers_a_second_call_from_the_cache(tmp_path: Path):
    pdf = tmp_path / "manual.pdf"
    pdf.write_bytes(big_pdf(450))  # over 100 pages: two children the first time
    env = _extract(tmp_path, pdf, "401-405")
    assert env["cached"] is False and env["pdf"]["returned"] == [401, 405]
    assert "marker-401." in env["content"] and "marker-406." not in env["content"]
    with sqlite3.connect(tmp_path / "state" / "cache.db") as db:
        assert db.execute("SELECT count(*) FROM pdf_page").fetchone() == (450,)
    # A 1 ms extraction deadline: any child started now would time out (exit 1), so an answer
    # means no extraction ran; the envelope says it came from the cache.
    copy = tmp_path / "copy.pdf"
    copy.write_bytes(pdf.read_bytes())  # the same bytes under another name: the same pages
    env = _extract(tmp_path, copy, "421-425", deadline="1ms")
    assert env["cached"] is True and env["pdf"]["returned"] == [421, 425]
    assert "marker-421." in env["content"] and "marker-426." not in env["content"]
    assert env["url"] == copy.resolve().as_uri()
