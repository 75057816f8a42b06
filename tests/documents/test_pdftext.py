"""The `sift pdftext` child contract: meta line, page lines, exit codes, ranges, engines."""

from __future__ import annotations

import io
import resource
import subprocess
import sys
from pathlib import Path
from typing import Any

import msgspec
import pytest

from sift.documents import wire
from sift.documents.pdf import plausible
from sift.documents.pdf.pdftext import Batch
from sift.documents.pdf.runner import CHILD_MODULE, SIFT_ROOT
from tests.support.pdfs import PHRASES, THREE_OUTLINE, THREE_TITLE, PdfSet

ENGINES = ["pypdf", "pdfium", "auto"]


def child(data: bytes, *args: str, timeout: float = 60) -> tuple[int, list[dict[str, Any]], bytes]:
    """Run the child as the runner does (empty environment); its exit code and lines."""
    proc = subprocess.run(
        [sys.executable, *CHILD_MODULE, *args],
        input=data,
        capture_output=True,
        env={},
        cwd=SIFT_ROOT,
        timeout=timeout,
    )
    lines = [msgspec.json.decode(line) for line in proc.stdout.splitlines()]
    return proc.returncode, lines, proc.stderr


@pytest.mark.parametrize("engine", ENGINES)
def test_three_pages_meta_then_pages(pdfs: PdfSet, engine: str) -> None:
    code, lines, stderr = child(pdfs.three, "--engine", engine)
    assert code == wire.EXIT_OK, stderr
    meta = lines[0]["meta"]
    assert meta["pages"] == 3
    assert meta["title"] == THREE_TITLE
    assert [(o["title"], o["page"], o["level"]) for o in meta["outline"]] == THREE_OUTLINE
    assert [line["page"] for line in lines[1:]] == [1, 2, 3]
    for line in lines[1:]:
        assert PHRASES[line["page"]] in line["text"]
        assert "warning" not in line and "error" not in line
    assert stderr == b""


@pytest.mark.parametrize("engine", ENGINES)
def test_outline_is_never_null(pdfs: PdfSet, engine: str) -> None:
    code, lines, _ = child(pdfs.scanned, "--engine", engine)
    assert code == 0
    assert lines[0]["meta"]["outline"] == []
    assert lines[0]["meta"]["title"] == ""


@pytest.mark.parametrize("engine", ENGINES)
def test_user_password_is_exit_3(pdfs: PdfSet, engine: str) -> None:
    code, lines, _ = child(pdfs.user_password, "--engine", engine)
    assert (code, lines) == (wire.EXIT_ENCRYPTED, [])


@pytest.mark.parametrize("engine", ENGINES)
def test_owner_only_encryption_opens_with_the_empty_password(pdfs: PdfSet, engine: str) -> None:
    code, lines, _ = child(pdfs.owner_only, "--engine", engine)
    assert code == 0
    assert PHRASES[1] in lines[1]["text"]


@pytest.mark.parametrize("engine", ENGINES)
@pytest.mark.parametrize("data", [b"", b"nope", b"%PDF-1.7\n%%EOF\n"])
def test_not_a_pdf_is_exit_4(data: bytes, engine: str) -> None:
    code, lines, _ = child(data, "--engine", engine)
    assert (code, lines) == (wire.EXIT_UNREADABLE, [])


@pytest.mark.parametrize("engine", ENGINES)
def test_truncated_is_salvaged_or_unreadable(pdfs: PdfSet, engine: str) -> None:
    code, lines, _ = child(pdfs.truncated, "--engine", engine)
    assert code in (wire.EXIT_OK, wire.EXIT_UNREADABLE)
    if code == wire.EXIT_OK:
        assert "meta" in lines[0]


@pytest.mark.parametrize("engine", ENGINES)
def test_font_without_unicode_map_is_flagged(pdfs: PdfSet, engine: str) -> None:
    """Garbage must never pass as good text: every page carries a warning."""
    code, lines, _ = child(pdfs.unmapped_font, "--engine", engine)
    assert code == 0
    pages = lines[1:]
    assert len(pages) == 2
    for line in pages:
        assert "quick brown fox" not in line["text"]
        assert line["warning"] == plausible.UNMAPPED_FONT


def test_page_range_and_max_pages(pdfs: PdfSet) -> None:
    code, lines, _ = child(pdfs.three, "--first", "2", "--last", "3")
    assert code == 0
    assert lines[0]["meta"]["pages"] == 3  # the whole document's count
    assert [line["page"] for line in lines[1:]] == [2, 3]
    code, lines, _ = child(pdfs.three, "--max-pages", "2", "--no-outline")
    assert lines[0]["meta"] == {"pages": 3, "title": THREE_TITLE, "outline": [], "unit": "page"}
    assert [line["page"] for line in lines[1:]] == [1, 2]


def test_split_over_extracts_the_first_half() -> None:
    from tests.support.pdfs import big_pdf

    data = big_pdf(9)
    code, lines, _ = child(data, "--split-over", "4")
    assert code == 0
    assert wire.split(9, 2000, 4) == [(1, 5), (6, 9)]
    assert [line["page"] for line in lines[1:]] == [1, 2, 3, 4, 5]
    code, lines, _ = child(data, "--split-over", "4", "--first", "6", "--last", "9")
    assert [line["page"] for line in lines[1:]] == [6, 7, 8, 9]


def test_part_of_parts_extracts_its_range() -> None:
    from tests.support.pdfs import big_pdf

    data = big_pdf(9)
    assert wire.split(9, 2000, 4, 3) == [(1, 3), (4, 6), (7, 9)]
    code, lines, _ = child(data, "--split-over", "4", "--parts", "3", "--part", "2")
    assert code == 0 and lines[0]["meta"]["pages"] == 9
    assert [line["page"] for line in lines[1:]] == [7, 8, 9]
    code, lines, _ = child(data, "--split-over", "20", "--parts", "3", "--part", "1")
    assert code == 0 and len(lines) == 1  # a short document: the first child has every page


def test_children_share_a_long_document_by_claiming_chunks(tmp_path: Path) -> None:
    """With --claims, a child takes the next unclaimed chunk of CLAIM_PAGES pages, not a
    fixed half: alone it extracts every page; started together, two extract each page once."""
    from tests.support.pdfs import big_pdf

    data = big_pdf(45)
    split = ("--split-over", "20", "--parts", "2")
    (tmp_path / "alone").mkdir()
    code, lines, _ = child(data, *split, "--claims", str(tmp_path / "alone"))
    assert code == 0 and [line["page"] for line in lines[1:]] == list(range(1, 46))
    (tmp_path / "two").mkdir()
    args = [sys.executable, *CHILD_MODULE, *split, "--claims", str(tmp_path / "two")]
    pipe = subprocess.PIPE
    procs = []
    for part in (0, 1):
        argv = [*args, "--part", str(part)]
        procs.append(subprocess.Popen(argv, stdin=pipe, stdout=pipe, env={}, cwd=SIFT_ROOT))
    pages = []
    for proc in procs:
        out, _ = proc.communicate(data, timeout=60)
        assert proc.returncode == 0
        pages += [msgspec.json.decode(line)["page"] for line in out.splitlines()[1:]]
    assert sorted(pages) == list(range(1, 46))
    code, lines, _ = child(big_pdf(9), *split, "--claims", str(tmp_path / "short"))
    assert code == 0 and len(lines) == 10  # a short document: part 0 has it all, no claims


def test_a_spare_reads_its_arguments_first(pdfs: PdfSet) -> None:
    """`--spare`: the arguments come as a JSON line before the document; the same lines."""
    fresh = child(pdfs.three, "--engine", "pdfium", "--first", "2")
    args = msgspec.json.encode(["--engine", "pdfium", "--first", "2"]) + b"\n"
    assert child(args + pdfs.three, "--spare") == fresh
    assert child(b"", "--spare") == (0, [], b"")  # the parent went away: nothing to do


def test_the_child_keeps_its_heap_from_page_to_page(pdfs: PdfSet) -> None:
    """Memory freed after a page is reused by the next, not given back to the kernel and
    faulted in again (it was ~140 page faults a page, a fifth of the child's time)."""

    def faults(last: int) -> int:
        before = resource.getrusage(resource.RUSAGE_CHILDREN).ru_minflt
        code, lines, _ = child(pdfs.big, "--engine", "pdfium", "--last", str(last))
        assert code == 0 and len(lines) == 1 + last
        return resource.getrusage(resource.RUSAGE_CHILDREN).ru_minflt - before

    assert faults(201) - faults(1) < 10 * 200


def test_sleep_hook_needs_the_test_flag(pdfs: PdfSet) -> None:
    """Without --allow-test-hooks the sleep is ignored (else this would hit the timeout)."""
    code, _, _ = child(pdfs.three, "--test-sleep", "600", timeout=60)
    assert code == 0


def test_split_ranges() -> None:
    assert wire.split(0, 2000, 200) == []
    assert wire.split(150, 2000, 200) == [(1, 150)]
    assert wire.split(201, 2000, 200) == [(1, 101), (102, 201)]
    assert wire.split(2100, 2000, 200) == [(1, 1000), (1001, 2000)]
    assert wire.split(2100, 2000, 0) == [(1, 2000)]


class FakeEngine:
    """Page 2 raises on both engines; page 3 reads as garbage for pypdf and as text for pdfium."""

    pages = 3

    def __init__(self, name: str) -> None:
        self.name = name

    def meta(self, outline: bool) -> wire.Meta:
        return wire.Meta(pages=3, title=self.name)

    def page(self, number: int) -> tuple[str, str | None]:
        if number == 2:
            raise RuntimeError(f"broken content stream ({self.name})")
        if number == 3 and self.name == "pypdf":
            return "\x01\x02\x03", plausible.CONTROL
        return f"{self.name} page {number}", None


def _extract(
    monkeypatch: pytest.MonkeyPatch, engine: str, opens: tuple[str, ...]
) -> list[dict[str, Any]]:
    """Run the child's extraction over FakeEngines; only the engines in `opens` open."""
    import io

    from sift.documents.pdf import pdftext
    from sift.documents.pdf.engine_base import Unreadable

    def open_engine(name: str, data: bytes) -> FakeEngine:
        if name not in opens:
            raise Unreadable(name)
        return FakeEngine(name)

    monkeypatch.setattr(pdftext, "open_engine", open_engine)
    args = pdftext._parser().parse_args(["--engine", engine] if engine else [])
    out = io.BytesIO()
    assert pdftext.extract(b"%PDF-", args, out) == 0
    return [msgspec.json.decode(line) for line in out.getvalue().splitlines()]


def test_a_failing_page_does_not_stop_the_others(monkeypatch: pytest.MonkeyPatch) -> None:
    lines = _extract(monkeypatch, "pypdf", opens=("pypdf", "pdfium"))
    assert lines[0]["meta"]["title"] == "pypdf"
    assert lines[1] == {"page": 1, "text": "pypdf page 1"}
    assert lines[2] == {"page": 2, "error": "RuntimeError: broken content stream (pypdf)"}
    assert lines[3] == {"page": 3, "text": "pdfium page 3"}  # read again by the other engine


def test_auto_is_pdfium_and_pypdf_for_what_pdfium_cannot_open(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    lines = _extract(monkeypatch, "", opens=("pypdf", "pdfium"))  # auto is the default
    assert lines[0]["meta"]["title"] == "pdfium"
    assert [line.get("text") for line in lines[1:]] == ["pdfium page 1", None, "pdfium page 3"]
    lines = _extract(monkeypatch, "auto", opens=("pypdf",))
    assert lines[0]["meta"]["title"] == "pypdf"
    # pdfium cannot open it to read page 3 again: pypdf's page stays, with its warning,
    # its control characters shown as unreadable.
    assert lines[3] == {"page": 3, "text": "\ufffd" * 3, "warning": plausible.CONTROL}


class GarbledEngine(FakeEngine):
    """Twenty pages that both engines read as garbage; counts the pages it is asked for."""

    pages = 20
    asked: dict[str, int] = {}

    def page(self, number: int) -> tuple[str, str | None]:
        GarbledEngine.asked[self.name] = GarbledEngine.asked.get(self.name, 0) + 1
        return "\x01\x02\x03", plausible.CONTROL


def test_the_other_engine_is_asked_no_more_once_it_never_helps(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    import io

    from sift.documents.pdf import pdftext

    GarbledEngine.asked = {}
    monkeypatch.setattr(pdftext, "open_engine", lambda name, data: GarbledEngine(name))
    out = io.BytesIO()
    assert pdftext.extract(b"%PDF-", pdftext._parser().parse_args([]), out) == 0
    lines = [msgspec.json.decode(line) for line in out.getvalue().splitlines()]
    assert len(lines) == 21 and all(line["warning"] == plausible.CONTROL for line in lines[1:])
    assert GarbledEngine.asked == {"pdfium": 20, "pypdf": pdftext._Other.GIVE_UP}


class _Flushes(io.BytesIO):
    def __init__(self) -> None:
        super().__init__()
        self.flushes = 0

    def flush(self) -> None:
        self.flushes += 1


def test_page_lines_go_out_in_batches_not_one_write_a_page() -> None:
    out = _Flushes()
    batch = Batch(out)
    lines = [wire.PageLine(page=n, text="x" * 8000) for n in range(1, 41)]
    for line in lines:
        batch.send(line)
    batch.flush()
    assert out.getvalue().splitlines() == [msgspec.json.encode(line) for line in lines]
    assert out.flushes <= 40 * 8000 // Batch.BYTES + 2  # one a page would wake the parent 40 times
