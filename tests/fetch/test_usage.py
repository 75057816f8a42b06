"""Usage signals in every answer, through HTTP and the firecrawl-py SDK: robots.txt's
`Content-Signal`, `X-Robots-Tag` and `<meta name="robots">` in `usage` (and Firecrawl's
metadata); `[fetch] robots` = `ignore` (the default) | `report` (the rule in `usage`) |
`respect` (a disallowed URL refused, naming the rule); robots.txt read once per site and
through the guard."""

from __future__ import annotations

from firecrawl import Firecrawl

from tests.support.pdfs import three_page_pdf
from tests.support.sift_server import FLEET_TOKEN

PDF = "application/pdf"
SIGNAL = {"search": "yes", "ai-input": "yes", "ai-train": "no"}


def test_every_answer_says_what_the_site_says_about_automated_use(sift, site):
    r = sift.fetch(site.url("/tagged"))
    assert r.status == 200, r.json
    assert r.json["usage"] == {"content_signal": SIGNAL, "x_robots_tag": "noai", "noai": True}
    r = sift.fetch(site.url("/meta"))
    assert r.json["usage"] == {
        "content_signal": SIGNAL,
        "meta_robots": "noindex, noai",
        "noai": True,
        "noindex": True,
    }
    again = sift.fetch(site.url("/meta"))  # a cached answer says the same
    assert again.json["cached"] is True and again.json["usage"] == r.json["usage"]
    # `ignore` (the default): a disallowed URL is fetched, and no rule is named
    r = sift.fetch(site.url("/private/page"))
    assert r.status == 200 and "robots_txt" not in r.json["usage"]
    assert site.origin.count("/robots.txt") == 1  # once per site


def test_a_site_that_says_nothing_has_an_empty_usage(sift, origin):
    r = sift.fetch(origin.url("/text"))
    assert r.status == 200 and r.json["usage"] == {}


def test_report_names_the_rule_that_decides_the_url(make_sift, site):
    sift = make_sift({"fetch": {"robots": "report"}})
    r = sift.fetch(site.url("/private/page"))
    assert r.status == 200
    assert r.json["usage"]["robots_txt"] == {"allowed": False, "rule": "Disallow: /private/"}
    r = sift.fetch(site.url("/tagged"))
    assert r.json["usage"]["robots_txt"] == {"allowed": True, "rule": "Allow: /"}


def test_respect_refuses_a_disallowed_url_naming_the_rule(make_sift, site):
    sift = make_sift({"fetch": {"robots": "respect"}})
    r = sift.fetch(site.url("/private/page"))
    assert r.status == 403
    assert r.json == {
        "success": False,
        "error": "blocked: the site's robots.txt disallows this URL for sift (Disallow: /private/)",
    }
    assert site.origin.count("/private/page") == 0
    assert sift.fetch(site.url("/tagged")).status == 200
    r = sift.request("GET", "/r/" + site.url("/private/page"))
    assert r.status == 403


def test_respect_reads_robots_txt_as_rfc_9309_does(make_sift, origin):
    """The most specific rule decides, whatever its order (an `Allow` for a page inside a
    disallowed folder), and `*` and `$` are patterns, as RFC 9309 and every major crawler read
    them (the standard library's parser takes the first rule that matches, and `*` literally)."""
    rules = "User-agent: *\nDisallow: /docs\nAllow: /docs/public\nDisallow: /*.zip$\n"
    origin.set("/robots.txt", rules, "text/plain")
    for path in ("/docs/public/a", "/docs/x", "/files/a.zip", "/files/a.zip.html"):
        origin.set(path, "<html><body><p>a page of the site</p></body></html>")
    sift = make_sift({"fetch": {"robots": "respect"}})
    r = sift.fetch(origin.url("/docs/public/a"))
    assert r.status == 200, r.json
    assert r.json["usage"]["robots_txt"] == {"allowed": True, "rule": "Allow: /docs/public"}
    r = sift.fetch(origin.url("/docs/x"))
    assert r.status == 403 and r.json["error"].endswith("(Disallow: /docs)")
    r = sift.fetch(origin.url("/files/a.zip"))
    assert r.status == 403 and r.json["error"].endswith("(Disallow: /*.zip$)")
    assert sift.fetch(origin.url("/files/a.zip.html")).status == 200
    assert origin.count("/docs/x") == origin.count("/files/a.zip") == 0


def test_a_robots_txt_the_guard_refuses_is_not_read(sift, site):
    site.origin.set("/robots.txt", "", status=302, headers={"Location": "http://10.0.0.1/r"})
    r = sift.fetch(site.url("/tagged"))
    assert r.status == 200 and r.json["usage"] == {"x_robots_tag": "noai", "noai": True}


def test_firecrawl_metadata_carries_the_usage_signals(sift, site):
    client = Firecrawl(api_key=FLEET_TOKEN, api_url=sift.url)
    doc = client.scrape(site.url("/meta"), formats=["markdown"])
    assert doc.metadata.robots == "noindex, noai"
    assert doc.metadata.usage["content_signal"] == SIGNAL
    doc = client.scrape(site.url("/alternate"), formats=["markdown"])
    assert doc.metadata.source == "site-markdown"


def test_a_pdf_reports_its_usage_signals_too(sift, site):
    site.origin.set("/doc.pdf", three_page_pdf(), PDF, headers={"X-Robots-Tag": "noai"})
    r = sift.fetch(site.url("/doc.pdf"))
    assert r.status == 200, r.json
    expected = {"content_signal": SIGNAL, "x_robots_tag": "noai", "noai": True}
    assert r.json["usage"] == expected
    again = sift.fetch(site.url("/doc.pdf"), pages="2")
    assert again.json["cached"] is True and again.json["usage"] == expected


def test_robots_txt_is_read_without_the_callers_headers(sift, site):
    r = sift.fetch(site.url("/tagged"), headers={"Cookie": "session=secret"})
    assert r.status == 200 and r.json["usage"]["content_signal"] == SIGNAL
    assert site.origin.count("/robots.txt") == 1
    assert "Cookie" not in site.origin.last_headers("/robots.txt")
    assert site.origin.last_headers("/tagged")["Cookie"] == "session=secret"
