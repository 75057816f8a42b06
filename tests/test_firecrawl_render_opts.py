"""Firecrawl's `parsers` PDF `pages` / `pageMarkers` / `maxPages`, the `screenshot` action and
`mobile` / `location`, through the real firecrawl-py client against a real sift."""

from __future__ import annotations

from firecrawl import Firecrawl
from firecrawl.v2.types import PDFParser

from tests.support.pdfs import PHRASES, three_page_pdf
from tests.support.sift_server import FLEET_TOKEN

PDF = "application/pdf"


def test_pdf_pages_and_page_markers(sift, origin):
    origin.set("/parsers/three.pdf", three_page_pdf(), PDF)
    fc = Firecrawl(api_key=FLEET_TOKEN, api_url=sift.url)
    parser = PDFParser(pages=True, page_markers=True, max_pages=2)
    doc = fc.scrape(origin.url("/parsers/three.pdf"), parsers=[parser])
    assert [p.page_number for p in doc.pages] == [1, 2]
    assert PHRASES[1] in doc.pages[0].markdown and PHRASES[2] in doc.pages[1].markdown
    assert "\n\n---\n\n<!-- page 2 -->\n\n" in doc.markdown
    assert PHRASES[3] not in doc.markdown and "<!-- page 1 -->" not in doc.markdown
    plain = fc.scrape(origin.url("/parsers/three.pdf"))
    assert plain.pages is None and "<!-- page" not in plain.markdown


def test_pdf_page_options_on_a_page_are_named(sift, origin):
    r = sift.post(
        "/v2/scrape",
        {"url": origin.url("/article"), "parsers": [{"type": "pdf", "pages": True}]},
    )
    assert r.status == 200 and "not a PDF" in r.json["data"]["warning"]
    r = sift.post(
        "/v2/scrape",
        {"url": origin.url("/article"), "parsers": [{"type": "pdf", "pageMarkers": "yes"}]},
    )
    assert r.status == 400 and "pageMarkers" in r.json["error"]
