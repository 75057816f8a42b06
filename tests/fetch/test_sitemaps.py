"""The pure readers under map and crawl: sitemaps (gzipped, nested, hostile), robots.txt and
the crawl scope. No network."""

from __future__ import annotations

import gzip

from sift.core.request import ScrapeTarget
from sift.fetch import sitemaps
from sift.fetch.robots import Robots
from sift.fetch.scope import Crawl, Scope, normal, unique

NS = 'xmlns="http://www.sitemaps.org/schemas/sitemap/0.9"'


def test_urlset_index_and_gzip():
    urlset = (
        f"<urlset {NS}><url><loc> https://a.test/x </loc></url><url><loc>ftp://no</loc>"
        "</url></urlset>"
    )
    assert sitemaps.parse(urlset.encode()).urls == ["https://a.test/x"]
    index = (
        f"<sitemapindex {NS}><sitemap><loc>https://a.test/s.xml.gz</loc></sitemap></sitemapindex>"
    )
    parsed = sitemaps.parse(gzip.compress(index.encode()))
    assert parsed.children == ["https://a.test/s.xml.gz"] and parsed.urls == []
    assert sitemaps.parse(b"https://a.test/1\nnot a url\nhttps://a.test/2\n").urls == [
        "https://a.test/1",
        "https://a.test/2",
    ]
    assert sitemaps.parse(b"\x1f\x8bnot gzip").urls == []
    assert sitemaps.parse(b"<urlset><unclosed").urls == []


def test_entities_are_not_resolved_and_no_file_is_read():
    xxe = (
        '<?xml version="1.0"?><!DOCTYPE u [<!ENTITY x SYSTEM "file:///etc/passwd">'
        '<!ENTITY y "https://evil.test/">]>'
        f"<urlset {NS}><url><loc>&x;</loc></url><url><loc>&y;z</loc></url></urlset>"
    )
    assert sitemaps.parse(xxe.encode()).urls == []


def test_a_gzip_bomb_inflates_no_further_than_the_cap(monkeypatch):
    monkeypatch.setattr(sitemaps, "MAX_INFLATED", 1000)
    bomb = gzip.compress(b"<urlset>" + b" " * 10_000_000)
    assert len(sitemaps.inflate(bomb)) == 1000


def test_robots_rules_and_sitemaps():
    r = Robots("User-agent: *\nDisallow: /private\nSitemap: https://a.test/s.xml\n")
    assert r.sitemaps == ["https://a.test/s.xml"]
    assert r.allowed("https://a.test/public") and not r.allowed("https://a.test/private/x")
    assert Robots("").allowed("https://a.test/anything")
    sift_only = Robots("User-agent: sift\nDisallow: /\n\nUser-agent: *\nAllow: /\n")
    assert not sift_only.allowed("https://a.test/")


def test_scope():
    s = Scope("docs.a.test", include=("^/guide",), exclude=("draft",))
    assert s.keeps("https://docs.a.test/guide/1")
    assert not s.keeps("https://docs.a.test/guide/draft")
    assert not s.keeps("https://docs.a.test/blog")
    assert not s.keeps("https://b.test/guide") and not s.keeps("mailto:x@docs.a.test")
    sub = Scope("a.test", subdomains=True)
    assert sub.keeps("https://x.a.test/") and sub.keeps("https://www.a.test/")
    assert not Scope("a.test").keeps("https://x.a.test/")
    seen: set[str] = set()
    assert list(unique(["https://A.test/x#1", "https://a.test/x", "https://a.test/y"], seen)) == [
        "https://A.test/x#1",
        "https://a.test/y",
    ]
    assert normal("HTTPS://A.test/P#f") == "https://a.test/P"


def test_a_crawls_stored_bounds_keep_its_start_path():
    """A crawl resumed from its stored bounds stays below its start path, as it did before."""
    start = ScrapeTarget(url="https://site.test/docs", context=False)
    crawl = Crawl(Scope("site.test", below="/docs"), Robots(""), 5, None, start)
    back = Crawl.decode(crawl.encode())
    assert back.scope.below == "/docs"
    assert back.scope.keeps("https://site.test/docs/a")
    assert not back.scope.keeps("https://site.test/blog/a")
