"""run_pdftext: the parent side — deadline kill, empty environment, errors, parallel ranges."""

from __future__ import annotations

import contextlib
import threading
import time
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import pytest

from sift.core.errors import SiftError, Unavailable, Unprocessable
from sift.documents import children as children_mod
from sift.documents.children import Child, ChildSet
from sift.documents.pdf import plausible, runner, scans
from sift.documents.pdf.runner import Extraction, Progress, run_pdftext
from tests.support.pdfs import PHRASES, THREE_TITLE, PdfSet, big_pdf, mutants

ENGINES = ["pypdf", "pdfium", "auto"]


def _processes_with(marker: str) -> list[int]:
    """Pids of live processes whose command line contains `marker`."""
    found = []
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit():
            continue
        try:
            cmdline = (entry / "cmdline").read_bytes()
            state = (entry / "stat").read_text().split(") ", 1)[1][:1]
        except OSError:
            continue
        if marker.encode() in cmdline and state != "Z":
            found.append(int(entry.name))
    return found


@pytest.mark.parametrize("engine", ENGINES)
def test_three_pages(pdfs: PdfSet, engine: str) -> None:
    ex = run_pdftext(pdfs.three, engine=engine)
    assert ex.meta.pages == 3 and ex.extracted == 3 and ex.first == 1
    assert ex.meta.title == THREE_TITLE
    assert [o.page for o in ex.meta.outline] == [1, 2, 2, 3]
    for n, phrase in PHRASES.items():
        assert phrase in ex.texts[n - 1]
    assert ex.warnings == {} and ex.errors == {}


def test_deadline_kills_the_child(pdfs: PdfSet) -> None:
    """With a 1 s deadline the parent answers `timed out` within 2 s, no child left.

    The PDF is larger than a pipe buffer, so the parent is also blocked writing stdin to a
    child that does not read: the selector loop must not deadlock on it.
    """
    data = pdfs.big  # generated before the clock starts
    marker = f"{time.time_ns() % 10**9}.5"
    start = time.monotonic()
    with pytest.raises(Unprocessable, match="pdf extraction timed out") as err:
        run_pdftext(data, deadline_s=1, _test_args=["--allow-test-hooks", "--test-sleep", marker])
    assert time.monotonic() - start < 2
    assert err.value.status == 422
    assert _processes_with(marker) == []
    assert not children_mod._live


def test_child_gets_an_empty_environment(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    monkeypatch.setenv("SIFT_TEST_SECRET", "must-not-leak")
    script = "import os, sys; sys.stdout.write(repr(sorted(os.environ)))"
    with ChildSet(time.monotonic() + 30, 1 << 20, 4096, str(tmp_path)) as kids:
        kid = kids.start(["-c", script], b"")
        while kids.pump():
            pass
    assert kid.returncode == 0
    env = eval(bytes(kid.out))  # a list of names printed by the child
    assert "SIFT_TEST_SECRET" not in env and "PATH" not in env and "HOME" not in env


def test_stderr_is_capped_and_drained(tmp_path: Path) -> None:
    """A child writing lots to stderr neither blocks nor floods the parent."""
    script = "import sys; sys.stderr.write('x' * 1_000_000); print('done')"
    with ChildSet(time.monotonic() + 30, 1 << 20, 4096, str(tmp_path)) as kids:
        kid = kids.start(["-c", script], b"")
        while kids.pump():
            pass
    assert kid.returncode == 0 and bytes(kid.out) == b"done\n" and len(kid.err) == 4096


def test_stdout_cap(pdfs: PdfSet, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(runner, "STDOUT_CAP", 100)
    with pytest.raises(Unprocessable, match="output limit"):
        run_pdftext(pdfs.three)
    assert not children_mod._live


@pytest.mark.parametrize("engine", ENGINES)
def test_scanned_is_422_with_hint_ocr(pdfs: PdfSet, engine: str) -> None:
    with pytest.raises(Unprocessable, match=r"no text layer \(scanned PDF\?\)") as err:
        run_pdftext(pdfs.scanned, engine=engine)
    assert err.value.hint == "ocr" and err.value.status == 422


@pytest.mark.parametrize("engine", ENGINES)
def test_encrypted_and_unreadable(pdfs: PdfSet, engine: str) -> None:
    with pytest.raises(Unprocessable, match="pdf is encrypted"):
        run_pdftext(pdfs.user_password, engine=engine)
    with pytest.raises(Unprocessable, match="unreadable pdf"):
        run_pdftext(b"<html>not a pdf</html>", engine=engine)
    assert PHRASES[1] in run_pdftext(pdfs.owner_only, engine=engine).texts[0]


@pytest.mark.parametrize("engine", ENGINES)
def test_truncated_never_500(pdfs: PdfSet, engine: str) -> None:
    with contextlib.suppress(Unprocessable):
        run_pdftext(pdfs.truncated, engine=engine)


@pytest.mark.parametrize("engine", ENGINES)
def test_garbled_pages_carry_warnings(pdfs: PdfSet, engine: str) -> None:
    ex = run_pdftext(pdfs.unmapped_font, engine=engine)
    assert ex.warnings == {1: plausible.UNMAPPED_FONT, 2: plausible.UNMAPPED_FONT}


def test_two_children_give_what_one_gives(tmp_path: Path) -> None:
    data = big_pdf(45)
    one = run_pdftext(data, split_over=0)
    two = run_pdftext(data, split_over=20)
    assert two == one
    assert [t.split("\n", 1)[0] for t in two.texts[:2]] == ["Page 1 marker-1.", "Page 2 marker-2."]


def test_three_children_give_what_one_gives() -> None:
    """A small body: the first child alone, the two others once its meta line counts 45."""
    data = big_pdf(45)
    assert len(data) < runner.EAGER_BYTES
    assert run_pdftext(data, split_over=20, children=3) == run_pdftext(data, split_over=0)


def test_a_large_body_starts_every_child_at_once() -> None:
    """Each child sleeps 2 s before reading the document: all three are running before any
    of them has written a line (started one after the other, the rest would wait for the
    first's meta line)."""
    data = big_pdf(130)
    assert len(data) >= runner.EAGER_BYTES
    progress = runner.Progress()
    silent = 0  # the most children seen running while none had written anything
    with ThreadPoolExecutor(1) as pool:
        run = pool.submit(
            run_pdftext,
            data,
            split_over=20,
            children=3,
            deadline_s=30,
            progress=progress,
            _test_args=["--allow-test-hooks", "--test-sleep", "2"],
        )
        while not run.done():
            kids = list(progress._kids)
            if kids and not any(k.out for k in kids):
                silent = max(silent, len(kids))
            time.sleep(0.01)
        three = run.result()
    assert silent == 3
    assert three == run_pdftext(data, split_over=0)


def test_spares_extract_as_fresh_children_do() -> None:
    """The first run starts three spares when it is done; the second takes them."""
    data = big_pdf(45)
    fresh = run_pdftext(data, split_over=20, children=3)
    assert run_pdftext(data, split_over=20, children=3, spares=3) == fresh
    assert run_pdftext(data, split_over=20, children=3, spares=3) == fresh
    runner.kill_all()  # the three started for a next document


def test_a_spooled_document_takes_the_spares_too(tmp_path: Path) -> None:
    """A document on disk is fed to the waiting spares from its file (no fresh interpreter);
    a file gone before it starts answers 503 and leaves them waiting."""
    data = big_pdf(45)
    fresh = run_pdftext(data, split_over=20, children=3)
    path = tmp_path / "doc.pdf"
    path.write_bytes(data)
    run_pdftext(data, split_over=20, children=3, spares=3)  # leaves three spares waiting
    waiting = {p.pid for p in runner._spares._idle}
    progress = runner.Progress()
    assert run_pdftext(path, split_over=20, children=3, spares=3, progress=progress) == fresh
    assert {k.proc.pid for k in progress._kids} == waiting and len(waiting) == 3
    path.unlink()
    with pytest.raises(Unavailable, match="file is gone"):
        run_pdftext(path, split_over=20, children=3, spares=3)
    assert len(runner._spares._idle) == 3
    runner.kill_all()


def test_2100_pages_extract_the_first_max_pages(pdfs: PdfSet) -> None:
    ex = run_pdftext(pdfs.big, deadline_s=110, max_pages=2000)
    assert ex.meta.pages == 2100 and ex.extracted == 2000 and len(ex.texts) == 2000
    assert ex.texts[0].startswith("Page 1 marker-1.")
    assert ex.texts[999].startswith("Page 1000 marker-1000.")
    assert ex.texts[1000].startswith("Page 1001 marker-1001.")
    assert ex.texts[1999].startswith("Page 2000 marker-2000.")
    assert [o.page for o in ex.meta.outline[:3]] == [1, 51, 101]
    assert len(ex.meta.outline) == 42


def test_page_range(pdfs: PdfSet) -> None:
    ex = run_pdftext(pdfs.three, first=2, last=3)
    assert ex.first == 2 and ex.extracted == 3 and len(ex.texts) == 2
    assert PHRASES[2] in ex.texts[0]


def test_mutants_answer_or_422_never_crash(pdfs: PdfSet) -> None:
    """20 byte-level mutants: each an Extraction or a 422 within the deadline."""

    def one(data: bytes) -> Extraction | SiftError:
        try:
            return run_pdftext(data, deadline_s=30)
        except Unprocessable as exc:
            return exc

    with ThreadPoolExecutor(4) as pool:
        results = list(pool.map(one, mutants(pdfs.three, 20)))
    assert len(results) == 20
    outcomes = {type(r).__name__ for r in results}
    assert outcomes <= {"Extraction", "Unprocessable"}
    assert not any(isinstance(r, Unprocessable) and "timed out" in r.message for r in results)
    assert not children_mod._live


def test_kill_all_ends_a_running_extraction(pdfs: PdfSet, monkeypatch: pytest.MonkeyPatch) -> None:
    """Shutdown: kill_all from another thread ends a running extraction at once."""
    started = threading.Event()

    class Live(set):  # type: ignore[type-arg]
        def add(self, item: object) -> None:
            super().add(item)
            started.set()

    monkeypatch.setattr(children_mod, "_live", Live())
    with ThreadPoolExecutor(1) as pool:
        fut = pool.submit(
            run_pdftext,
            pdfs.three,
            deadline_s=60,
            _test_args=["--allow-test-hooks", "--test-sleep", "60"],
        )
        assert started.wait(30)
        runner.kill_all()
        with pytest.raises(Unavailable, match="crashed"):  # 503: ask again (another replica)
            fut.result(timeout=30)
    assert not children_mod._live


def test_partial_answers_what_is_ready_at_the_deadline() -> None:
    data = big_pdf(30)
    stall = ["--allow-test-hooks", "--test-stall-after", "12"]
    with pytest.raises(Unprocessable, match="timed out"):
        run_pdftext(data, deadline_s=3, _test_args=stall)
    ex = run_pdftext(data, deadline_s=3, partial=True, _test_args=stall)
    assert not ex.complete and ex.extracted == 12 and len(ex.texts) == 12
    assert ex.meta.pages == 30 and ex.texts[11].startswith("Page 12 marker-12.")
    doc = ex.document()
    assert doc.count == 12 and doc.size == 30
    assert not children_mod._live


def test_extraction_as_document(pdfs: PdfSet) -> None:
    doc = run_pdftext(pdfs.unmapped_font).document()
    assert doc.kind == "pdf" and doc.count == 2 and set(doc.warnings) == {1, 2}
    three = run_pdftext(pdfs.three).document()
    assert three.title == THREE_TITLE and len(three.outline) == 4


def test_with_ocr_a_scan_is_its_image_only_pages(pdfs: PdfSet) -> None:
    """With Tesseract there, a scan is no error: its pages come back marked for OCR."""
    ex = run_pdftext(pdfs.scanned, engine="pdfium", ocr=True)
    assert ex.meta.pages == 2 and ex.warnings == {1: scans.IMAGE_ONLY, 2: scans.IMAGE_ONLY}
    assert ex.document().warnings == {1: scans.IMAGE_ONLY, 2: scans.IMAGE_ONLY}


class _Watch(Progress):
    """A progress that keeps the run's children, to see who extracted what."""

    def attach(self, kids: list[Child], max_pages: int) -> None:
        super().attach(kids, max_pages)
        self.kids = kids


def test_a_document_over_a_hundred_pages_is_shared_by_two_children() -> None:
    watch = _Watch()
    ex = run_pdftext(big_pdf(150), children=2, progress=watch)
    assert len(ex.texts) == 150 and ex == run_pdftext(big_pdf(150), split_over=0)
    assert [len(kid.lines()) > 1 for kid in watch.kids] == [True, True]  # pages past the meta
