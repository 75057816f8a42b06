"""The spare PDF children are started again once the answer that used them is out: their
imports would take the cores the service needs then to decode, store and answer the pages.
Nothing waits on an HTTP answer for ever: without one (a batch target), they start after
`WRITE_DELAY`. Through a real server (its held work, pool, ExtractWorker and children)."""

from __future__ import annotations

import asyncio
import time

import pytest

from sift.documents.children import kill_all
from sift.documents.pdf import runner
from sift.service.parts import held
from tests.support.pdfs import PdfSet
from tests.support.sift_server import SiftServer
from tests.support.until import until

PDF = "application/pdf"


def _idle() -> set[int]:
    """The spares waiting now (the runner's, shared by every server in this process)."""
    return {p.pid for p in list(runner._spares._idle) if p.poll() is None}


def _extract(sift: SiftServer, name: str, pdf: bytes) -> int:
    """One extraction under the pool, as a request does it, but with no answer after it."""
    work = sift.svc.pdfs.extract(("fleet", name), "agent", pdf)
    return asyncio.run_coroutine_threadsafe(work, sift.loop).result(60).meta.pages


def test_the_spares_start_again_once_the_answer_is_out(make_sift, pdfs: PdfSet, monkeypatch):
    monkeypatch.setattr(held, "WRITE_DELAY", 30.0)  # only an answer lets the held work go
    sift = make_sift({"pdf": {"children": 2, "spares": True}})
    before = _idle()
    assert _extract(sift, "first", pdfs.three) == 3
    time.sleep(0.5)
    assert _idle() <= before  # the run ended: no spare started while nothing was answered
    sift.loop.call_soon_threadsafe(sift.svc.held.answered)
    until(lambda: len(_idle()) == 2, "two idle spares")
    ready = _idle()
    assert _extract(sift, "second", pdfs.three) == 3
    assert len(_idle() & ready) == 1  # one child for 3 pages: it took one of them


def test_an_http_answer_starts_the_spares_again(make_sift, origin, pdfs: PdfSet, monkeypatch):
    monkeypatch.setattr(held, "WRITE_DELAY", 30.0)
    sift = make_sift({"pdf": {"children": 2, "spares": True}})
    origin.set("/spares/three.pdf", pdfs.three, PDF)
    for run in range(2):
        r = sift.fetch(origin.url(f"/spares/three.pdf?run={run}"))
        assert r.status == 200 and r.json["pdf"]["pages"] == 3, r.body
        until(lambda: len(_idle()) == 2, "two idle spares")


def test_without_an_answer_the_spares_start_after_the_delay(make_sift, pdfs: PdfSet):
    """A batch target has no HTTP answer: the held refill goes after `WRITE_DELAY` anyway."""
    sift = make_sift({"pdf": {"children": 2, "spares": True}})
    assert held.WRITE_DELAY < 1
    assert _extract(sift, "alone", pdfs.three) == 3
    until(lambda: len(_idle()) == 2, "two idle spares")


@pytest.fixture(autouse=True)
def _no_spares_left() -> None:
    """Each test starts with no spare waiting (an earlier server's, if any, are ended)."""
    kill_all()
    runner._spares.fill(0)
