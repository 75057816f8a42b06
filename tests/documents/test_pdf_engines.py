"""PDF engines through HTTP and `sift extract`: pdfium by default, garbled pages re-extracted
by the other engine, right-to-left damage flagged, no control characters in page text."""

from __future__ import annotations

import io
import logging
import os
import re
import subprocess
import sys
from pathlib import Path

import pypdf
import pytest

from tests.support.pdfs import CJK_LINES, PdfSet

PDF = "application/pdf"
CJK = [line for _, _, _, lines in CJK_LINES.values() for line in lines]
# Words of tests.support.pdfs.PERSIAN, in letters (not presentation forms) and in reading order.
PERSIAN_WORDS = ["تمام افراد بشر آزاد", "حقوق بشر است"]
SHAPED = re.compile("[\ufb50-\ufdff\ufe70-\ufefc]")
CONTROL = re.compile("[\x00-\x08\x0b-\x1f\x7f-\x9f]")


def _pypdf_text(data: bytes) -> str:
    """pypdf called directly (it logs an ERROR for each CMap it does not know: quiet here)."""
    log = logging.getLogger("pypdf")
    level, log.level = log.level, logging.CRITICAL + 1
    try:
        return "".join(p.extract_text() for p in pypdf.PdfReader(io.BytesIO(data)).pages)
    finally:
        log.setLevel(level)


def test_fixtures_are_what_pypdf_gets_wrong(pdfs: PdfSet):
    """Else the tests below would prove nothing: pypdf alone garbles these pages."""
    cjk = _pypdf_text(pdfs.cjk_unmapped)
    assert not any(line[:6] in cjk for line in CJK)
    shaped = _pypdf_text(pdfs.persian_shaped)
    assert len(SHAPED.findall(shaped)) > 100
    assert not any(w in shaped for w in PERSIAN_WORDS)


def test_cjk_font_without_unicode_map_comes_back_right_by_default(sift, origin, pdfs: PdfSet):
    origin.set("/cjk.pdf", pdfs.cjk_unmapped, PDF)
    r = sift.fetch(origin.url("/cjk.pdf"))
    assert r.status == 200, r.body
    for line in CJK:
        assert line in r.json["content"]
    assert "warning" not in r.json and "[warning: " not in r.json["content"]


def test_persian_comes_back_as_letters_by_default(sift, origin, pdfs: PdfSet):
    """pypdf answers presentation forms; auto (pdfium) answers the letters, unflagged."""
    origin.set("/fa.pdf", pdfs.persian_shaped, PDF)
    r = sift.fetch(origin.url("/fa.pdf"))
    assert r.status == 200, r.body
    for words in PERSIAN_WORDS:
        assert words in r.json["content"]
    assert not SHAPED.search(r.json["content"])
    assert "warning" not in r.json


def test_engine_pypdf_reads_its_garbled_pages_again_with_pdfium(make_sift, origin, pdfs: PdfSet):
    sift = make_sift({"pdf": {"engine": "pypdf"}})
    origin.set("/fa.pdf", pdfs.persian_shaped, PDF)
    origin.set("/cjk.pdf", pdfs.cjk_unmapped, PDF)
    fa = sift.fetch(origin.url("/fa.pdf"))
    assert fa.status == 200, fa.body
    for words in PERSIAN_WORDS:
        assert words in fa.json["content"]
    cjk = sift.fetch(origin.url("/cjk.pdf"))
    assert cjk.status == 200, cjk.body
    for line in CJK:
        assert line in cjk.json["content"]
    for r in (fa, cjk):  # pypdf's own warning went with its text
        assert "warning" not in r.json and "[warning: " not in r.json["content"]


@pytest.mark.parametrize(
    ("name", "warning"),
    [
        ("persian_reversed", "right-to-left words reversed"),
        ("persian_spaced", "letters separated by spaces"),
    ],
)
def test_damaged_right_to_left_page_is_flagged(sift, origin, pdfs: PdfSet, name, warning):
    """Both engines answer these wrong: the page carries a warning, never silent garbage."""
    origin.set(f"/{name}.pdf", getattr(pdfs, name), PDF)
    r = sift.fetch(origin.url(f"/{name}.pdf"))
    assert r.status == 200, r.body
    assert f"[warning: text may be garbled ({warning})]" in r.json["content"]
    assert warning in r.json["warning"]


@pytest.mark.parametrize("engine", ["auto", "pypdf", "pdfium"])
def test_page_text_carries_no_control_characters(make_sift, origin, pdfs: PdfSet, engine):
    sift = make_sift({"pdf": {"engine": engine}})
    origin.set("/ctl.pdf", pdfs.control_chars, PDF)
    origin.set("/unmapped.pdf", pdfs.unmapped_font, PDF)  # glyph ids read as control codes
    r = sift.fetch(origin.url("/ctl.pdf"))
    assert r.status == 200, r.body
    assert (
        "A line of plain prose with a NUL in it, a tab\there, a bell and then"
        in (r.json["content"])
    )
    assert not CONTROL.search(r.json["content"]) and "\r" not in r.json["content"]
    r = sift.fetch(origin.url("/unmapped.pdf"))
    assert r.status == 200, r.body
    assert "[warning: " in r.json["content"]  # still garbage on both engines: flagged,
    assert not CONTROL.search(r.json["content"])  # and unreadable codes shown as such
    assert r.json["content"].count("\ufffd") > 100


def _extract(tmp_path: Path, data: bytes, engine: str | None = None) -> str:
    """`sift extract FILE` as a user runs it: a real CLI process with its own config."""
    pdf = tmp_path / "doc.pdf"
    pdf.write_bytes(data)
    cfg = tmp_path / "sift.toml"
    text = f'state_dir = "{tmp_path / "state"}"\n'
    if engine:
        text += f'[pdf]\nengine = "{engine}"\n'
    cfg.write_text(text)
    env = {k: v for k, v in os.environ.items() if not k.startswith("SIFT_")}
    out = subprocess.run(
        [sys.executable, "-m", "sift", "--config", str(cfg), "extract", str(pdf)],
        capture_output=True,
        text=True,
        env=env,
        timeout=60,
    )
    assert out.returncode == 0, out.stderr
    return out.stdout


def test_sift_extract_reads_cjk_and_persian_right(tmp_path: Path, pdfs: PdfSet):
    out = _extract(tmp_path, pdfs.cjk_unmapped)
    for line in CJK:
        assert line in out
    out = _extract(tmp_path, pdfs.persian_shaped, engine="pypdf")
    for words in PERSIAN_WORDS:
        assert words in out
    assert "warning" not in out
