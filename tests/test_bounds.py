"""Answers and memory have bounds (issue 11, item 3): outlines within the answer cap, bounded
in-memory structures, PDF bodies spooled to disk while they wait for a slot."""

from __future__ import annotations

from sift.render import answer_bound
from tests.pdfs import PdfSet, pdfs_fixture  # noqa: F401

PDF = "application/pdf"


def _headings_page(n: int) -> str:
    body = "".join(
        f"<h2>Heading number {i} of a page with far too many headings</h2>"
        f"<p>Paragraph {i} says something short about heading {i}.</p>"
        for i in range(n)
    )
    return f"<html><head><title>Many headings</title></head><body><article>{body}</article></body></html>"


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
