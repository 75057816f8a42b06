"""Office files and e-books through every door (`/v1/fetch`, `/v2/parse`, `sift extract`):
each format answers its map, a part by `pages` and `grep`; a DOCX served as octet-stream is
still a DOCX; a zip bomb and a billion-laughs document are a clear 422 with no child left."""

from __future__ import annotations

import io
import json
import os
import re
import subprocess
import sys
import zipfile
from pathlib import Path

import pytest

from sift.core.errors import Unprocessable
from sift.documents import children as children_mod
from tests.support import office
from tests.support.processes import children
from tests.support.until import until
from tests.support.uploads import parse_upload

FORMATS = list(office.MAKERS)
UNIT = {
    "docx": "section",
    "odt": "section",
    "rtf": "section",
    "pptx": "slide",
    "odp": "slide",
    "xlsx": "sheet",
    "ods": "sheet",
    "csv": "sheet",
    "tsv": "sheet",
    "epub": "chapter",
}


def _no_office_child() -> bool:
    """No converter child is running or unreaped (in this process's tree or its registry);
    a spare waiting for the next file (started ahead, idle) is no child left behind."""
    waiting = {proc.pid for proc in children_mod._waiting}
    mine = []
    for pid in children(os.getpid()) - waiting:
        try:
            cmd = Path(f"/proc/{pid}/cmdline").read_bytes()
        except OSError:
            continue
        if b"sift.documents.office.child" in cmd:
            mine.append(pid)
    return not mine and not children_mod._live


@pytest.fixture(scope="module")
def files() -> dict[str, bytes]:
    return {fmt: make() for fmt, make in office.MAKERS.items()}


def test_each_format_answers_its_map_a_part_and_grep(make_sift, origin, files):
    """Over the output cap a document answers its map (title, size in its unit, outline,
    how to ask); grep names the part that holds a phrase, and that part by `pages` holds it,
    from the page cache (no second conversion)."""
    sift = make_sift({"out_cap": 2_000})
    for fmt in FORMATS:
        origin.set(f"/doc.{fmt}", files[fmt], office.MEDIA[fmt])
        url = origin.url(f"/doc.{fmt}")
        whole = sift.fetch(url, context=False)
        assert whole.status == 200, (fmt, whole.body)
        env = whole.json
        assert env["kind"] == fmt and env["parts"]["unit"] == UNIT[fmt], (fmt, env)
        assert f"{UNIT[fmt]}s {env['parts']['pages']}" in env["content"] or not env["parts"]["map"]
        if env["parts"]["pages"] > 1:
            assert env["parts"]["outline"], fmt
        if env["parts"]["map"]:
            assert env["hint"] == "pages" and 'grep="<regex>"' in env["content"], fmt
        hits = sift.fetch(url, grep="quokka", context=False)
        assert hits.status == 200 and hits.json["parts"]["grep_hits"] >= 1, (fmt, hits.body)
        found = HIT.search(hits.json["content"])
        assert found, (fmt, hits.json["content"])
        part = int(found.group(1))
        one = sift.fetch(url, pages=str(part), context=False).json
        assert office.PHRASE in one["content"] and one["parts"]["returned"] == [part, part], fmt
        # the context header counts the parts by their own name ("· 3 sheets", "· 1 slide")
        size = env["parts"]["pages"]
        text = sift.fetch(url, pages=str(part)).json["content"]
        head = next(line for line in text.splitlines() if line.startswith("Source: "))
        assert head.endswith(f" · {size} {UNIT[fmt]}{'s' if size > 1 else ''}"), (fmt, head)
        assert one["cached"] is True, fmt
    assert origin.count("/doc.docx") == 1  # the parts came from the page cache
    until(_no_office_child, "no converter child left")


HIT = re.compile(r"^(?:s|sl|sh|ch)\. (\d+): .*quokka", re.MULTILINE)


def test_a_docx_served_as_octet_stream_or_zip_is_still_a_docx(sift, origin, files):
    for path, ctype in (("/dl", "application/octet-stream"), ("/z", "application/zip")):
        origin.set(path, files["docx"], ctype)
        r = sift.fetch(origin.url(path), grep="quokka")
        assert r.status == 200, (ctype, r.body)
        assert r.json["kind"] == "docx" and r.json["parts"]["grep_hits"] == 1, r.json
    origin.set("/plain.zip", _plain_zip(), "application/octet-stream")
    r = sift.fetch(origin.url("/plain.zip"))
    assert r.status == 415, r.body  # a zip with no document manifest is nothing sift reads


def _plain_zip() -> bytes:
    out = io.BytesIO()
    with zipfile.ZipFile(out, "w") as zf:
        zf.writestr("notes.txt", "just a file")
    return out.getvalue()


@pytest.mark.parametrize(
    ("attack", "says"),
    [(office.zip_bomb, "zip bomb: "), (office.billion_laughs, "XML entity declarations")],
)
def test_a_zip_bomb_and_a_billion_laughs_are_a_clear_422_with_no_child_left(
    sift, origin, attack, says
):
    data = attack()
    origin.set("/attack.docx", data, office.MEDIA["docx"])
    r = sift.fetch(origin.url("/attack.docx"))
    assert r.status == 422 and says in r.json["error"], r.body
    assert r.json["success"] is False
    up = parse_upload(sift, "attack.docx", data, {})
    assert up.status == 422 and says in up.json["error"], up.body
    until(_no_office_child, "no converter child left")


def test_parse_uploads_every_format(sift, files):
    for fmt in FORMATS:
        r = parse_upload(sift, f"upload.{fmt}", files[fmt], {"formats": ["markdown"]})
        assert r.status == 200, (fmt, r.body)
        data = r.json["data"]
        assert data["metadata"]["numPages"] >= 1, (fmt, data["metadata"])
        assert "quokka" in data["markdown"] or 'grep="<regex>"' in data["markdown"], fmt
    formats = sift.request("GET", "/v2/parse/formats").json["data"]["formats"]
    offered = {ext for f in formats for ext in f["extensions"]}
    assert {f".{fmt}" for fmt in FORMATS} <= offered


def test_sift_extract_reads_parts_by_pages_and_grep(tmp_path: Path, files):
    """`sift extract` on local files: the map, a part, grep; a bomb is an error naming it."""
    cfg = tmp_path / "sift.toml"
    cfg.write_text(f'state_dir = "{tmp_path / "state"}"\nout_cap = 2000\n')
    doc = tmp_path / "report.docx"
    doc.write_bytes(files["docx"])
    deck = tmp_path / "deck"  # no extension: the bytes say what it is
    deck.write_bytes(files["pptx"])

    def run(*args: str) -> subprocess.CompletedProcess[str]:
        env = {k: v for k, v in os.environ.items() if not k.startswith("SIFT_")}
        command = [sys.executable, "-m", "sift", "--config", str(cfg), "extract", *args]
        return subprocess.run(command, capture_output=True, text=True, env=env, timeout=120)

    mapped = run(str(doc), "--json")
    assert mapped.returncode == 0, mapped.stderr
    env = json.loads(mapped.stdout)
    assert env["kind"] == "docx" and env["parts"]["map"] is True
    part = run(str(doc), "--pages", "2")
    assert part.returncode == 0 and office.PHRASE in part.stdout, part.stderr
    hits = run(str(deck), "--grep", "quokka")
    assert hits.returncode == 0 and "sl. 2: quokka lantern" in hits.stdout, hits.stderr
    bomb = tmp_path / "bomb.docx"
    bomb.write_bytes(office.zip_bomb())
    refused = run(str(bomb))
    assert refused.returncode == 1 and "zip bomb: " in refused.stderr, refused.stderr


def test_office_files_have_their_own_cap(make_sift, origin, files):
    """`[fetch] office_max_body` bounds an office file (typed, or a zip by its first bytes),
    not `max_body`, which bounds pages."""
    size = len(files["docx"])
    roomy = make_sift({"fetch": {"max_body": size // 2, "office_max_body": size * 2}})
    origin.set("/cap.docx", files["docx"], office.MEDIA["docx"])
    origin.set("/cap.bin", files["docx"], "application/octet-stream")
    for path in ("/cap.docx", "/cap.bin"):
        r = roomy.fetch(origin.url(path))
        assert r.status == 200 and r.json["kind"] == "docx", (path, r.body)
    tight = make_sift({"fetch": {"max_body": size * 2, "office_max_body": size // 2}})
    for path in ("/cap.docx", "/cap.bin"):
        r = tight.fetch(origin.url(path))
        assert r.status == 413 and "too large" in r.json["error"], (path, r.body)


def test_firecrawl_scrape_answers_an_office_file_as_a_pdf(sift, origin, files):
    """`/v2/scrape`: the markdown of every part, `numPages` the parts; `parsers` `maxPages`
    keeps the first parts only, as for a PDF."""
    origin.set("/deck.pptx", files["pptx"], office.MEDIA["pptx"])
    body = {"url": origin.url("/deck.pptx"), "formats": ["markdown"]}
    r = sift.post("/v2/scrape", body)
    assert r.status == 200, r.body
    data = r.json["data"]
    assert data["metadata"]["numPages"] == 3 and "quokka lantern" in data["markdown"], data
    first = sift.post("/v2/scrape", {**body, "parsers": [{"type": "pdf", "maxPages": 1}]})
    markdown = first.json["data"]["markdown"]
    assert "Slide title 1" in markdown and "quokka" not in markdown, markdown


def test_a_conversion_past_its_deadline_is_killed_and_reaped(files):
    """The converter child under its deadline: killed, reaped, a clear 422."""
    from sift.documents.office.runner import run_office

    with pytest.raises(Unprocessable, match="docx conversion timed out"):
        run_office(files["docx"], "docx", deadline_s=0.05)
    assert not children_mod._live


def test_a_sheet_cut_at_its_caps_says_so_in_sifts_own_words(sift, origin):
    """A sheet over 100,000 rows or 200 columns is cut (DESIGN §4): the cut is said by a
    warning of sift's (the envelope's and a `[warning: …]` line under the part's marker),
    never as a line of the document's (escaped by the fence) nor left out; the outline's
    size says "+" where it was cut."""
    rows = "".join(f"{i},v{i}\n" for i in range(100_010))
    origin.set("/long.csv", ("name,value\n" + rows).encode(), "text/csv")
    wide_csv = ",".join(f"c{i}" for i in range(205)) + "\n1,2\n"
    origin.set("/wide.csv", wide_csv.encode(), "text/csv")
    long = sift.fetch(origin.url("/long.csv"), pages="200", context=False).json
    assert "cut at 100,000 rows" in long["warning"], long.get("warning")
    lines = long["content"].split("\n")
    assert "[warning: sheet cut at 100,000 rows]" in lines, long["content"][-300:]
    assert "\\[sheet cut" not in long["content"], long["content"][-300:]
    wide = sift.fetch(origin.url("/wide.csv"), context=False).json
    assert "cut at 200 columns" in (wide.get("warning") or ""), wide
    assert "[warning: sheet cut at 200 columns]" in wide["content"].split("\n"), wide["content"]
    assert wide["parts"]["outline"][0]["title"] == "Table · 2 rows × 200+ columns", wide["parts"]
    again = sift.fetch(origin.url("/wide.csv"), context=False).json  # from the page cache
    assert again["cached"] and again["content"] == wide["content"], again
