"""The links and images of an HTML page, absolute and de-duplicated (Firecrawl's `links`
and `images` formats)."""

from __future__ import annotations

import urllib.parse

import lxml.html

MAX_LINKS = 2000


def extract_links(html: str, base_url: str) -> list[str]:
    """Absolute http(s) links of `<a href>`s, in page order, resolved against `<base href>`
    or the page URL; fragments dropped. CPU work: callers run it off the event loop."""
    return _urls(html, base_url, "//a/@href", drop_fragment=True)


def extract_images(html: str, base_url: str) -> list[str]:
    """Absolute http(s) URLs of the page's images (`<img src>`, each `srcset` candidate,
    `<source srcset>` in `<picture>`, the `og:image`), in page order; inline `data:` images
    are left out. CPU work: callers run it off the event loop."""
    xpath = (
        "//img/@src | //img/@data-src | //img/@srcset | //picture/source/@srcset"
        " | //meta[@property='og:image']/@content"
    )
    return _urls(html, base_url, xpath, drop_fragment=False, srcset=True)


def _urls(
    html: str, base_url: str, xpath: str, *, drop_fragment: bool, srcset: bool = False
) -> list[str]:
    try:
        root = lxml.html.document_fromstring(html)
    except (ValueError, lxml.etree.ParserError):
        return []
    base = root.xpath("string(//base/@href)") or base_url
    base = urllib.parse.urljoin(base_url, base)
    seen: dict[str, None] = {}
    for attr in root.xpath(xpath):
        values = [str(attr).strip()]
        if srcset and attr.attrname.endswith("srcset"):
            values = [c.strip().split(" ")[0] for c in str(attr).split(",")]
        for href in values:
            if not href or href.startswith(("#", "javascript:", "mailto:", "tel:", "data:")):
                continue
            try:
                url = urllib.parse.urljoin(base, href)
            except ValueError:  # a malformed IPv6 host
                continue
            if drop_fragment:
                url = urllib.parse.urldefrag(url).url
            if url.startswith(("http://", "https://")):
                seen.setdefault(url)
                if len(seen) >= MAX_LINKS:
                    return list(seen)
    return list(seen)
