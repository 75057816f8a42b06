"""The links of an HTML page, absolute and de-duplicated (Firecrawl's `links` format)."""

from __future__ import annotations

import urllib.parse

import lxml.html

MAX_LINKS = 2000


def extract_links(html: str, base_url: str) -> list[str]:
    """Absolute http(s) links of `<a href>`s, in page order, resolved against `<base href>`
    or the page URL; fragments dropped. CPU work: callers run it off the event loop."""
    try:
        root = lxml.html.document_fromstring(html)
    except (ValueError, lxml.etree.ParserError):
        return []
    base = root.xpath("string(//base/@href)") or base_url
    base = urllib.parse.urljoin(base_url, base)
    seen: dict[str, None] = {}
    for href in root.xpath("//a/@href"):
        href = str(href).strip()
        if not href or href.startswith(("#", "javascript:", "mailto:", "tel:", "data:")):
            continue
        url = urllib.parse.urldefrag(urllib.parse.urljoin(base, href)).url
        if url.startswith(("http://", "https://")):
            seen.setdefault(url)
            if len(seen) >= MAX_LINKS:
                break
    return list(seen)
