"""The pipeline's steps, seen from outside: every request that goes upstream counts exactly
one fetch outcome in `sift_fetch_total`, whichever step ends it (the fetch, the target's
error, the clean, the PDF extraction, a stale answer); a request the cache answers counts
none."""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path

from prometheus_client.parser import text_string_to_metric_families

from tests.support.pdfs import PdfSet
from tests.support.sift_server import SiftServer

PAGES = Path(__file__).resolve().parents[1] / "pages"
ARTICLE = (
    "<html><head><title>Outcome</title></head><body><article><h1>Outcome</h1>"
    + "<p>"
    + " ".join(f"word{i}" for i in range(300))
    + "</p></article></body></html>"
)


def _outcomes(sift: SiftServer) -> dict[str, float]:
    text = sift.request("GET", "/metrics", token=None).body.decode()
    return {
        s.labels["outcome"]: s.value
        for fam in text_string_to_metric_families(text)
        for s in fam.samples
        if s.name == "sift_fetch_total"
    }


def _counted(sift: SiftServer, fields: Mapping[str, object], url: str) -> dict[str, float]:
    """What one request added to `sift_fetch_total`, by outcome (only what changed)."""
    before = _outcomes(sift)
    sift.fetch(url, **fields)
    after = _outcomes(sift)
    return {k: v - before.get(k, 0.0) for k, v in after.items() if v != before.get(k, 0.0)}


def test_each_request_upstream_counts_one_outcome_whichever_step_ends_it(
    make_sift, origin, pdfs: PdfSet
):
    no_ocr = {"tesseract": "/nonexistent/tesseract"}  # a scan's extraction fails, as before
    sift = make_sift({"cache": {"ttl": "1h"}, "fetch": {"timeout": "1s"}, "ocr": no_ocr})
    origin.set("/outcome/page", ARTICLE)
    origin.set_etag("/outcome/etag", '"v1"', ARTICLE)
    origin.set("/outcome/missing", "no such page", "text/plain", status=404)
    origin.set("/outcome/down", "down", "text/plain", status=503)
    origin.set("/outcome/audio", b"ID3\x04" + b"\0" * 64, "audio/mpeg")
    origin.set("/outcome/check", (PAGES / "hcaptcha.html").read_bytes())
    origin.set("/outcome/scan.pdf", pdfs.scanned, "application/pdf")
    origin.set("/outcome/three.pdf", pdfs.three, "application/pdf")
    origin.set("/outcome/stale", ARTICLE)
    cases = [
        ("/outcome/page", {}, {"ok": 1}),  # fetched, cleaned, kept
        ("/outcome/page", {}, {}),  # a hit: nothing went upstream
        ("/outcome/etag", {}, {"ok": 1}),
        ("/outcome/etag", {"max_age": 0}, {"ok": 1}),  # revalidated: a 304
        ("/outcome/missing", {}, {"upstream_4xx": 1}),
        ("/outcome/down", {}, {"upstream_5xx": 1}),
        ("/outcome/audio", {}, {"unsupported": 1}),
        ("/outcome/check", {}, {"challenge": 1}),
        ("/outcome/three.pdf", {}, {"ok": 1}),  # extracted
        ("/outcome/scan.pdf", {}, {"other": 1}),  # fetched, then the extraction failed
        ("/outcome/stale", {}, {"ok": 1}),
    ]
    for path, fields, want in cases:
        assert _counted(sift, fields, origin.url(path)) == want, (path, fields)
    origin.set("/outcome/stale", "down", "text/plain", status=503)
    stale = {"max_age": 0, "recover": True}
    assert _counted(sift, stale, origin.url("/outcome/stale")) == {"upstream_5xx": 1}
    origin.set_slow("/outcome/stale", 5)
    assert _counted(sift, stale, origin.url("/outcome/stale")) == {"timeout": 1}
