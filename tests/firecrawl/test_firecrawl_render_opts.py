"""Firecrawl's `parsers` PDF `pages` / `pageMarkers` / `maxPages`, the `screenshot` action and
`mobile` / `location`, through the real firecrawl-py client against a real sift."""

from __future__ import annotations

import os

import pytest
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


BROWSER = "/usr/bin/chromium"
needs_browser = pytest.mark.skipif(
    not os.access(BROWSER, os.X_OK), reason="no chromium (apt-get install chromium)"
)
# The page says what the browser showed it: its width, touch, language and user agent.
PROBE = """<html><head><title>Probe</title>
<meta name="viewport" content="width=device-width"></head><body><div id="out"></div><script>
document.getElementById('out').innerHTML = '<p>' + ('width ' + window.innerWidth +
  ' touch ' + ('ontouchstart' in window) + ' lang ' + navigator.language + ' mobile ' +
  /Mobile/.test(navigator.userAgent) + '. ').repeat(6) + '</p>';
</script></body></html>"""


@needs_browser
def test_screenshot_action_mobile_and_languages_in_the_browser(make_sift, origin):
    origin.set("/render/probe", PROBE)
    sift = make_sift({"render": {"enabled": True, "browser": BROWSER, "auto": False}})
    fc = Firecrawl(api_key=FLEET_TOKEN, api_url=sift.url)
    url = origin.url("/render/probe")
    doc = fc.scrape(
        url,
        mobile=True,
        location={"country": "DE", "languages": ["de-DE", "en"]},
        actions=[
            {"type": "screenshot"},
            {"type": "wait", "milliseconds": 100},
            {"type": "screenshot"},
        ],
    )
    assert "width 390 touch true lang de-DE mobile true" in doc.markdown, doc.markdown
    shots = doc.actions["screenshots"]
    assert len(shots) == 2 and all(s.startswith("data:image/png;base64,") for s in shots)
    assert "location.country" in doc.warning and "mobile" not in doc.warning
    assert origin.last_headers("/render/probe")["Accept-Language"].startswith("de-DE")
    desktop = fc.scrape(url, wait_for=100)
    assert "width 1280 touch false" in desktop.markdown and "mobile false" in desktop.markdown
    assert desktop.actions is None
    many = [{"type": "screenshot"}] * 6
    r = sift.post("/v2/scrape", {"url": url, "actions": many})
    assert r.status == 400 and "at most 5" in r.json["error"]


def test_mobile_and_location_without_a_browser_are_named(sift, origin):
    r = sift.post(
        "/v2/scrape",
        {"url": origin.url("/article"), "mobile": True, "location": {"languages": ["fr"]}},
    )
    warning = r.json["data"]["warning"]
    assert "`mobile`: not rendered" in warning and "`location.languages`" in warning
    r = sift.post("/v2/scrape", {"url": origin.url("/article"), "location": {"languages": ["x y"]}})
    assert r.status == 400 and "language tag" in r.json["error"]


def test_a_jobs_mobile_and_languages_are_named_where_not_rendered(sift, origin):
    fc = Firecrawl(api_key=FLEET_TOKEN, api_url=sift.url)
    job = fc.batch_scrape(
        [origin.url("/article")],
        mobile=True,
        location={"languages": ["fr"]},
        poll_interval=1,
        wait_timeout=60,
    )
    [doc] = job.data
    assert "`mobile`: not rendered" in doc.warning and "`location.languages`" in doc.warning
