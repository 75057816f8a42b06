"""The site's own markdown first, through HTTP: a page that answers markdown on request, a
`<link rel="alternate" type="text/markdown">` to the same document, and the cases that must
not replace a page (an unrelated alternate, the site index as alternate, one markdown for
every path); `map` lists `llms.txt` and `llms-full.txt`."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from sift.service.steps.site_markdown import same_document
from tests.support.agent_site import AgentSite


@pytest.fixture(scope="module")
def site() -> Iterator[AgentSite]:
    s = AgentSite()
    yield s
    s.stop()


def test_a_page_served_as_markdown_on_request_is_answered_as_the_sites_markdown(sift, site):
    r = sift.fetch(site.url("/negotiated"), context=False)
    assert r.status == 200, r.json
    assert r.json["source"] == "site-markdown" and r.json["kind"] == "html"
    assert r.json["content"] == site.guide_md.rstrip("\n") or r.json["content"] == site.guide_md
    assert r.json["title"] == "Garden guide"
    accept = site.origin.last_headers("/negotiated")["Accept"]
    assert accept.startswith("text/markdown,") and "text/html;q=0.9" in accept
    assert site.origin.count("/negotiated") == 1  # trusted by its Vary: Accept, read once


def test_a_markdown_alternate_of_the_same_page_is_answered_and_cached(sift, site):
    r = sift.fetch(site.url("/alternate"), context=False)
    assert r.status == 200, r.json
    assert r.json["source"] == "site-markdown"
    assert "**Site markdown** of the guide." in r.json["content"]
    again = sift.fetch(site.url("/alternate"), context=False)
    assert again.json["cached"] is True and again.json["source"] == "site-markdown"
    assert again.json["content"] == r.json["content"]
    assert site.origin.count("/alternate.md") == 1
    # the whole page is sift's cleaning of the HTML, not the site's markdown
    whole = sift.fetch(site.url("/alternate"), context=False, whole_page=True)
    assert "source" not in whole.json and "Home · About" in whole.json["content"]
    # a request with the caller's own headers follows no alternate
    r = sift.fetch(site.url("/alternate"), headers={"Cookie": "a=b"}, context=False)
    assert r.status == 200 and "source" not in r.json
    assert site.origin.count("/alternate.md") == 1


def test_an_unrelated_alternate_or_the_site_index_never_replaces_the_page(sift, site):
    r = sift.fetch(site.url("/unrelated"), context=False)
    assert r.status == 200 and "source" not in r.json
    assert "sailing" in r.json["content"] and "cooking" not in r.json["content"]
    assert site.origin.count("/other.md") == 1  # read, and found to be another document
    before = site.origin.count("/llms.txt")
    r = sift.fetch(site.url("/indexed"), context=False)
    assert r.status == 200 and "source" not in r.json and "birding" in r.json["content"]
    assert site.origin.count("/llms.txt") == before  # a site index is not the page's markdown


def test_one_markdown_for_every_path_does_not_replace_the_page(sift, site):
    r = sift.fetch(site.url("/everything"), context=False)
    assert r.status == 200, r.json
    assert "source" not in r.json
    assert "orchids" in r.json["content"] and "Welcome, agents" not in r.json["content"]
    first, second = (h["Accept"] for h in site.origin.requests("/everything"))
    assert first.startswith("text/markdown")
    assert second.startswith("text/html")  # no `Vary: Accept`: asked again for the HTML


def test_map_lists_the_sites_llms_txt_and_llms_full_txt(sift, site, origin):
    r = sift.post("/v2/map", {"url": site.url("/alternate")})
    assert r.status == 200, r.json
    urls = [link["url"] for link in r.json["links"]]
    assert site.url("/llms.txt") in urls and site.url("/llms-full.txt") in urls
    # the links of a page the site answered in markdown are its markdown's
    r = sift.post("/v2/map", {"url": site.url("/negotiated"), "sitemap": "skip"})
    assert site.url("/tagged") in [link["url"] for link in r.json["links"]]
    r = sift.post("/v2/map", {"url": origin.url("/article")})  # a site without them
    assert not any("llms" in link["url"] for link in r.json["links"])


AEB = Path(__file__).resolve().parents[3] / "shared" / "bench-data" / "aeb"


@pytest.mark.skipif(not (AEB / "html").is_dir(), reason=f"benchmark pages not in {AEB}/html")
def test_the_same_document_rule_on_real_articles():
    """Each benchmark page's extraction against its own article text (the same document) and
    against the next page's (another): all 181 pages measured 180 and 0 accepted."""
    from bench.aeb import load_pages, sift_clean

    pages = [(sift_clean(html, url), body) for _k, html, url, body in load_pages(AEB, limit=40)]
    same = sum(same_document(body, text, "") for text, body in pages)
    other = sum(same_document(pages[i - 1][1], text, "") for i, (text, _) in enumerate(pages))
    assert same >= len(pages) - 1 and other == 0
