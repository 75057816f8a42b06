"""`/v2/parse` held to its deadline like `/v1/fetch` (issue 22 item 4): out of time it answers
the pages so far while the extraction goes on into the page cache, with nothing ready the
Firecrawl note to ask again, and its upload is hashed once, on a CPU thread."""

from __future__ import annotations

import hashlib
import re
import threading
from typing import Any

from firecrawl import Firecrawl
from firecrawl.v2.types import ParseOptions

from tests.support.pdfs import PdfSet, three_page_pdf
from tests.support.sift_server import FLEET_TOKEN, RESTRICTED_TOKEN
from tests.support.uploads import metric, parse_upload

STALL = ["--allow-test-hooks", "--test-stall-after", "30"]


def test_parse_out_of_time_answers_the_pages_so_far_and_extraction_goes_on(make_sift, pdfs: PdfSet):
    """The child pauses 15 s after page 30 (a test hook), then goes on. A parse answers at
    its 8 s deadline with the pages so far and a warning (main: 504, and the extraction
    cancelled); later parses of the same upload find the whole document, and then the page
    cache answers it with no extraction at all. One child: a second would claim the pages
    past 30 while the first pauses."""
    sift = make_sift(
        {"request_deadline": "8s", "pdf": {"children": 1}},
        extract_args=[*STALL, "--test-stall-for", "15"],
    )
    r = parse_upload(sift, "long.pdf", pdfs.big, {})
    assert r.status == 200, r.body
    data = r.json["data"]
    assert re.match(r"pages 1–\d+ of 2100 are ready", data["warning"]), data["warning"]
    assert "own request deadline" in data["warning"]
    assert data["metadata"]["numPages"] == 2100 and data["metadata"]["statusCode"] == 200
    assert "marker-1." in data["markdown"] or "pages 1–" in data["markdown"]
    for _ in range(60):  # each try held to 8 s: the pages so far, until the whole is there
        r = parse_upload(sift, "long.pdf", pdfs.big, {})
        assert r.status == 200, r.body
        if "warning" not in r.json["data"]:
            break
        assert "are ready" in r.json["data"]["warning"]
    whole = r.json["data"]
    assert "warning" not in whole and whole["metadata"]["numPages"] == 2100, whole
    extractions = metric(sift, "sift_pdf_pool_wait_seconds_count")
    r = parse_upload(sift, "long.pdf", pdfs.big, {})
    assert r.status == 200 and r.json["data"] == whole  # the same answer ...
    assert metric(sift, "sift_pdf_pool_wait_seconds_count") == extractions  # ... from the cache


def test_parse_with_nothing_ready_answers_a_note_to_ask_again(make_sift, pdfs: PdfSet):
    """One PDF slot, held by another caller's long upload whose child stalls after page 30:
    the SDK's parse waits for the slot and, at its `timeout`, gets Firecrawl's out-of-time
    answer (success, `statusCode` 202, a note to ask again) instead of an error (main: 504)."""
    sift = make_sift(
        {"pdf": {"slots": 1, "queue": 2, "wait": "20s", "deadline": "60s"}}, extract_args=STALL
    )
    r = parse_upload(sift, "long.pdf", pdfs.big, {"timeout": 4000}, token=RESTRICTED_TOKEN)
    assert r.status == 200 and "are ready" in r.json["data"]["warning"], r.body
    app = Firecrawl(api_key=FLEET_TOKEN, api_url=sift.url)
    doc = app.parse(three_page_pdf(), filename="three.pdf", options=ParseOptions(timeout=2000))
    assert doc.metadata.status_code == 202
    assert "ask again" in doc.markdown and doc.warning == doc.markdown


def test_an_upload_is_hashed_once_on_a_cpu_thread(make_sift, monkeypatch):
    """Every sha256 of the upload's bytes is recorded with its thread: one, on a CPU thread,
    never on the event loop's (main: two, both on the loop)."""
    sift = make_sift()
    upload = b"An uploaded line of plain text, repeated.\n" * 40_000  # 1.7 MB: over the inline cost
    calls: list[str] = []
    real = hashlib.sha256

    def spy(data: bytes = b"", **kw: Any) -> Any:
        if len(data) == len(upload):
            calls.append(threading.current_thread().name)
        return real(data, **kw)

    monkeypatch.setattr(hashlib, "sha256", spy)
    r = parse_upload(sift, "notes.txt", upload, {})
    assert r.status == 200 and "An uploaded line" in r.json["data"]["markdown"], r.body
    assert len(calls) == 1, calls
    assert calls[0].startswith("sift-cpu") and calls[0] != "sift-test-server", calls
