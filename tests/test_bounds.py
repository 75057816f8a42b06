"""Answers and memory have bounds (issue 11, item 3): outlines within the answer cap, bounded
in-memory structures, PDF bodies spooled to disk while they wait for a slot."""

from __future__ import annotations

from concurrent.futures import ThreadPoolExecutor

from prometheus_client.parser import text_string_to_metric_families

from sift.render import answer_bound
from tests.pdfs import PdfSet, pdfs_fixture  # noqa: F401

PDF = "application/pdf"


def _headings_page(n: int) -> str:
    body = "".join(
        f"<h2>Heading number {i} of a page with far too many headings</h2>"
        f"<p>Paragraph {i} says something short about heading {i}.</p>"
        for i in range(n)
    )
    head = "<html><head><title>Many headings</title></head>"
    return f"{head}<body><article>{body}</article></body></html>"


def _within_bound(r, cap: int, urls: int) -> None:
    assert r.status == 200, r.body[:300]
    assert len(r.body) <= answer_bound(cap) + urls, len(r.body)


def test_an_html_outline_is_cut_to_the_cap_and_says_how_many_more(make_sift, origin):
    cap = 20_000
    sift = make_sift({"out_cap": cap})
    origin.set("/headings", _headings_page(4000))
    url = origin.url("/headings")
    r = sift.fetch(url)
    _within_bound(r, cap, 2 * len(url))
    sections = r.json["sections"]
    assert sections["map"] is True
    assert sections["outline_more"] > 3000
    assert len(sections["outline"]) + sections["outline_more"] >= 4000
    assert "grep" in sections["outline_note"] and "pages" in sections["outline_note"]
    assert "more top-level entries" in r.json["content"][:10_000]  # the map says so too
    # grep and pages still reach every heading the outline left out
    r = sift.fetch(url, grep="Heading number 3999 ")
    _within_bound(r, cap, 2 * len(url))
    assert r.json["sections"]["grep_hits"] == 1


def test_a_pdf_outline_is_cut_to_the_cap(make_sift, origin, pdfs: PdfSet):
    cap = 10_000
    sift = make_sift({"out_cap": cap})
    origin.set("/outlined.pdf", pdfs.outlined, PDF)
    url = origin.url("/outlined.pdf")
    for fields in ({}, {"pages": "2-3"}, {"grep": "marker-7\\b"}):
        r = sift.fetch(url, **fields)
        _within_bound(r, cap, 2 * len(url))
        pdf = r.json["pdf"]
        assert pdf["outline"] and pdf["outline_more"] > 2000, fields
        assert len(pdf["outline"]) + pdf["outline_more"] == 200 * 15
        assert all(o["level"] == 1 for o in pdf["outline"])  # deeper levels went first


def _lag_over(sift, bound: float) -> tuple[float, float]:
    """(probes in all, probes later than `bound` seconds) from sift_loop_lag_seconds."""
    text = sift.request("GET", "/metrics", token=None).body.decode()
    buckets = {
        float(s.labels["le"]): s.value
        for fam in text_string_to_metric_families(text)
        for s in fam.samples
        if s.name == "sift_loop_lag_seconds_bucket"
    }
    return buckets[float("inf")], buckets[float("inf")] - buckets[bound]


def test_greps_and_renders_of_a_long_document_leave_the_loop_free(make_sift, origin, pdfs):
    """Issue 11 item 4: parallel greps and page renders of a cached 2,100-page PDF while the
    loop-lag probe watches; no probe may be late by 250 ms or more."""
    sift = make_sift({"out_cap": 50_000})
    origin.set("/big.pdf", pdfs.big, PDF)
    url = origin.url("/big.pdf")
    assert sift.fetch(url).status == 200  # extracted and cached: what follows is render only
    probes, late = _lag_over(sift, 0.25)

    def ask(i: int) -> int:
        if i % 2:  # every line of every page matches: the slowest grep there is
            fields = {"grep": f"(lorem|ipsum|marker-{i})"}
        else:
            fields = {"pages": f"{i * 20 + 1}-{i * 20 + 100}"}
        r = sift.fetch(url, **fields)
        return r.status

    with ThreadPoolExecutor(6) as pool:
        statuses = list(pool.map(ask, range(36)))
    assert statuses == [200] * 36
    after, late_after = _lag_over(sift, 0.25)
    assert after > probes  # the probe ran meanwhile
    assert late_after == late, f"{late_after - late} probes late by over 250 ms"
