"""OCR through HTTP, `/v2/parse` and `sift extract` (issue 24 item 1): scanned PDFs generated
at test time answer their text with the OCR'd pages marked, a mixed PDF OCRs only its image
pages, a later range OCRs only its own pages (the rest come from the page cache: counted by
`sift_ocr_pages_total`), images answer their text frame by frame, a whole-document grep OCRs
the rest in the background, a child past its deadline leaves no process behind, and without
Tesseract a scan is the old 422 hint `ocr`. Real Tesseract (the system's `tesseract-ocr`)."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from tests.support import scans
from tests.support.until import until
from tests.support.uploads import metric, parse_upload

pytestmark = pytest.mark.skipif(
    shutil.which("tesseract") is None,
    reason="Tesseract is not installed (.ci/run installs tesseract-ocr; `make serve` too)",
)
PDF = "application/pdf"
NO_TESSERACT = {"ocr": {"tesseract": "/nonexistent/tesseract"}}


def _ocr_pages(sift) -> float:
    return metric(sift, "sift_ocr_pages_total")


def _has(content: str, page: int) -> bool:
    return scans.PHRASES[page - 1] in " ".join(content.lower().split())


def test_scanned_pdf_answers_its_text_with_the_ocr_pages_marked(sift, origin):
    origin.set("/scan.pdf", scans.scanned_pdf(3), PDF)
    r = sift.fetch(origin.url("/scan.pdf"))
    assert r.status == 200, r.body
    env = r.json
    assert env["kind"] == "pdf" and env["pdf"]["pages"] == 3
    assert env["ocr_pages"] == [1, 2, 3]
    assert all(_has(env["content"], n) for n in (1, 2, 3)), env["content"]
    assert "[warning: OCR text" in env["content"] and "OCR text" in env["warning"]


def test_mixed_pdf_ocrs_only_its_image_pages(sift, origin):
    origin.set("/mixed.pdf", scans.mixed_pdf(), PDF)
    before = _ocr_pages(sift)
    r = sift.fetch(origin.url("/mixed.pdf"))
    assert r.status == 200, r.body
    assert r.json["ocr_pages"] == [2]
    assert all(_has(r.json["content"], n) for n in (1, 2, 3))
    assert _ocr_pages(sift) == before + 1


def test_a_later_range_ocrs_only_its_own_pages(make_sift, origin):
    """The first answer OCRs the first page; `pages=1-3` then OCRs 2 and 3 alone, and
    `pages=2-3` again none: the page cache has them. The map marks the pages not read yet."""
    sift = make_sift({"ocr": {"lead_pages": 1}})
    origin.set("/six.pdf", scans.scanned_pdf(6), PDF)
    before = _ocr_pages(sift)  # the counter is the test process's: other tests count too
    r = sift.fetch(origin.url("/six.pdf"))
    assert r.status == 200, r.body
    assert r.json["ocr_pages"] == [1] and _has(r.json["content"], 1)
    assert "pages 2, 3, 4, 5, 6: image-only page" in r.json["warning"]
    assert _ocr_pages(sift) == before + 1
    r = sift.fetch(origin.url("/six.pdf"), pages="1-3")
    assert r.status == 200 and r.json["cached"] is True
    assert r.json["ocr_pages"] == [1, 2, 3] and all(_has(r.json["content"], n) for n in (1, 2, 3))
    assert _ocr_pages(sift) == before + 3
    r = sift.fetch(origin.url("/six.pdf"), pages="2-3")
    assert r.json["ocr_pages"] == [2, 3] and _has(r.json["content"], 3)
    assert _ocr_pages(sift) == before + 3
    assert origin.count("/six.pdf") == 1


def test_the_same_scan_at_another_url_is_not_read_again(sift, origin):
    """OCR text is kept by the document's bytes: a copy at another URL (or the same one
    fetched again) takes it from the page cache."""
    origin.set("/first.pdf", scans.scanned_pdf(2), PDF)
    origin.set("/copy.pdf", scans.scanned_pdf(2), PDF)
    assert sift.fetch(origin.url("/first.pdf")).json["ocr_pages"] == [1, 2]
    before = _ocr_pages(sift)
    r = sift.fetch(origin.url("/copy.pdf"))
    assert r.status == 200 and r.json["ocr_pages"] == [1, 2] and _has(r.json["content"], 2)
    assert _ocr_pages(sift) == before


def test_whole_document_grep_ocrs_the_rest_in_the_background(make_sift, origin):
    sift = make_sift({"ocr": {"lead_pages": 1}})
    origin.set("/grep.pdf", scans.scanned_pdf(6), PDF)
    before = _ocr_pages(sift)
    r = sift.fetch(origin.url("/grep.pdf"), grep="ferryman")
    assert r.status == 200, r.body
    assert "searched 1 of 6 pages" in r.json["warning"]

    def found() -> bool:
        again = sift.fetch(origin.url("/grep.pdf"), grep="ferryman")
        return "p. 5: " in again.json["content"]

    until(found, "the background OCR", timeout=240, every=2)
    assert _ocr_pages(sift) == before + 6  # each page once


def test_image_url_answers_its_text(sift, origin):
    origin.set("/page.png", scans.png(2), "image/png")
    origin.set("/blob", scans.png(3), "application/octet-stream")
    r = sift.fetch(origin.url("/page.png"))
    assert r.status == 200, r.body
    assert r.json["kind"] == "image" and r.json["ocr_pages"] == [1]
    assert _has(r.json["content"], 2)
    r = sift.fetch(origin.url("/blob"))
    assert r.status == 200 and r.json["kind"] == "image" and _has(r.json["content"], 3)


def test_an_ocr_answers_content_hash_is_one_if_none_match_takes(sift, origin):
    """A scan's answer names its version with its OCR state (`<hash>:ocr<pages>`): sent back
    as `if_none_match`, the same scan answers unchanged, not a 400."""
    origin.set("/inm.png", scans.png(1), "image/png")
    first = sift.fetch(origin.url("/inm.png"))
    assert first.status == 200, first.body
    same = sift.fetch(origin.url("/inm.png"), if_none_match=first.json["content_hash"])
    assert same.status == 200, same.json
    assert same.json["unchanged"] is True and same.json["content"] == ""


def test_multi_page_tiff_upload_is_a_page_a_frame(make_sift):
    """An upload through `/v2/parse`: the first answer reads the first frames, marks the rest;
    the same upload again is answered from the page cache."""
    sift = make_sift({"ocr": {"lead_pages": 2}})
    before = _ocr_pages(sift)
    for _ in range(2):
        r = parse_upload(sift, "scan.tiff", scans.tiff(3), {})
        assert r.status == 200, r.body
        md = r.json["data"]["markdown"]
        assert _has(md, 1) and _has(md, 2) and not _has(md, 3)
        assert "--- page 3 ---\n\n[warning: image-only page" in md
        assert _ocr_pages(sift) == before + 2


def test_sift_extract_reads_a_scan(tmp_path: Path):
    scan = tmp_path / "scan.pdf"
    scan.write_bytes(scans.scanned_pdf(3))
    cfg = tmp_path / "sift.toml"
    cfg.write_text(f'state_dir = "{tmp_path / "state"}"\n')
    env = {k: v for k, v in os.environ.items() if not k.startswith("SIFT_")}
    argv = [sys.executable, "-m", "sift", "--config", str(cfg), "extract", str(scan), "--json"]
    out = subprocess.run(argv, capture_output=True, text=True, env=env, timeout=300)
    assert out.returncode == 0, out.stderr
    answer = json.loads(out.stdout)
    assert answer["ocr_pages"] == [1, 2, 3] and _has(answer["content"], 2)
    tiff = tmp_path / "scan.tif"  # a frame asked by `--pages`: read alone
    tiff.write_bytes(scans.tiff(6))
    argv[-2:] = [str(tiff), "--pages", "5", "--json"]
    out = subprocess.run(argv, capture_output=True, text=True, env=env, timeout=300)
    assert out.returncode == 0, out.stderr
    answer = json.loads(out.stdout)
    assert answer["kind"] == "image" and answer["ocr_pages"] == [5], answer
    assert _has(answer["content"], 5) and not _has(answer["content"], 1)


def test_an_ocr_child_past_its_deadline_leaves_no_process(make_sift, origin, tmp_path: Path):
    """A Tesseract that never answers (a script that notes its pid and sleeps): the child's
    deadline kills its whole group, Tesseract with it, and the answer is a 422."""
    pids = tmp_path / "pids"
    fake = tmp_path / "tesseract"
    fake.write_text(f"#!/bin/sh\necho $$ >> {pids}\nexec sleep 600\n")
    fake.chmod(0o755)
    sift = make_sift({"ocr": {"tesseract": str(fake), "page_time": "1s"}})
    origin.set("/slow.pdf", scans.scanned_pdf(2), PDF)
    r = sift.fetch(origin.url("/slow.pdf"))
    assert r.status == 422 and r.json["error"] == "OCR timed out", r.body
    started = [int(p) for p in pids.read_text().split()]
    assert started
    for pid in started:
        proc = Path(f"/proc/{pid}")

        def gone(proc: Path = proc) -> bool:
            return not proc.exists()

        until(gone, f"pid {pid} gone", timeout=10)


def test_without_tesseract_a_scan_stays_422_hint_ocr(make_sift, origin):
    sift = make_sift(NO_TESSERACT)
    origin.set("/scan.pdf", scans.scanned_pdf(2), PDF)
    origin.set("/page.png", scans.png(1), "image/png")
    origin.set("/mixed.pdf", scans.mixed_pdf(), PDF)
    r = sift.fetch(origin.url("/scan.pdf"))
    assert r.status == 422 and r.json["hint"] == "ocr", r.body
    assert "apt-get install tesseract-ocr" in r.json["error"]
    r = sift.fetch(origin.url("/page.png"))
    assert r.status == 422 and r.json["hint"] == "ocr"
    r = sift.fetch(origin.url("/mixed.pdf"))
    assert r.status == 200 and "ocr_pages" not in r.json
    assert "OCR needs Tesseract" in r.json["warning"]


def test_a_missing_language_pack_is_named(make_sift, origin):
    sift = make_sift({"ocr": {"languages": "eng+xyz"}})
    origin.set("/lang.pdf", scans.scanned_pdf(2), PDF)
    r = sift.fetch(origin.url("/lang.pdf"))
    assert r.status == 422 and r.json["hint"] == "ocr", r.body
    assert "apt-get install tesseract-ocr-eng tesseract-ocr-xyz" in r.json["error"]
