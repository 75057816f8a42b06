"""Sitemaps (sitemaps.org) read from bytes: the page URLs of a `urlset` and the child
sitemaps of a `sitemapindex`, gzipped or not. No network and no entities: lxml with
`resolve_entities=False` and `no_network=True`, and caps on the inflated size and URL count."""

from __future__ import annotations

import zlib
from dataclasses import dataclass, field

from lxml import etree

MAX_INFLATED = 50 * 1024**2  # the protocol's limit for one sitemap, uncompressed
MAX_URLS = 50_000  # the protocol's limit of URLs in one sitemap


@dataclass
class Sitemap:
    urls: list[str] = field(default_factory=list)  # pages (a urlset)
    children: list[str] = field(default_factory=list)  # sitemaps (an index)


def inflate(body: bytes) -> bytes:
    """The body, gunzipped when it is gzip (a `.xml.gz` served as such); at most MAX_INFLATED
    bytes are kept, so a gzip bomb costs no more than a large sitemap."""
    if not body.startswith(b"\x1f\x8b"):
        return body[:MAX_INFLATED]
    try:
        return zlib.decompressobj(16 + zlib.MAX_WBITS).decompress(body, MAX_INFLATED)
    except zlib.error:
        return b""


def parse(body: bytes) -> Sitemap:
    """A sitemap's URLs or an index's children. A plain-text sitemap (one URL a line) is read
    too; anything else is empty. CPU work: callers run it off the event loop."""
    data = inflate(body)
    out = Sitemap()
    if not data.lstrip().startswith(b"<"):
        for line in data.decode("utf-8", "replace").splitlines()[:MAX_URLS]:
            if line.strip().startswith(("http://", "https://")):
                out.urls.append(line.strip())
        return out
    parser = etree.XMLParser(
        resolve_entities=False, no_network=True, load_dtd=False, huge_tree=False, recover=True
    )
    try:
        root = etree.fromstring(data, parser)
    except etree.XMLSyntaxError:
        return out
    if root is None:
        return out
    index = etree.QName(root).localname == "sitemapindex"
    for el in root.iter("{*}loc"):
        loc = (el.text or "").strip()
        if loc.startswith(("http://", "https://")):
            (out.children if index else out.urls).append(loc)
            if len(out.children) + len(out.urls) >= MAX_URLS:
                break
    return out
