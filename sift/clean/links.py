"""The links and images of an HTML page, absolute and de-duplicated (Firecrawl's `links`
and `images` formats)."""

from __future__ import annotations

import re
import urllib.parse
from collections.abc import Iterable

import lxml.html

from sift.clean.markdown_links import base_url as page_base

MAX_LINKS = 2000
# `[text](target "title")`, `[text](<target>)` and `<https://…>` autolinks
_MARKDOWN_LINK = re.compile(r"\]\(\s*<?([^)\s>]+)|<(https?://[^>\s]+)>")


def extract_links(html: str, base_url: str) -> list[str]:
    """Absolute http(s) links of `<a href>`s, in page order, resolved against `<base href>`
    or the page URL; fragments dropped. CPU work: callers run it off the event loop."""
    return _urls(html, base_url, "//a/@href", drop_fragment=True)


def markdown_links(markdown: str, base_url: str) -> list[str]:
    """The links of a markdown text (the site's own markdown of a page), as `extract_links`
    gives an HTML page's. CPU work: callers run it off the event loop."""
    hrefs = (a or b for a, b in _MARKDOWN_LINK.findall(markdown))
    return _absolute(hrefs, base_url, drop_fragment=True)


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
    base = page_base(root, base_url)  # (a `<base href>` no URL parser reads: the page's)

    def hrefs() -> Iterable[str]:
        for attr in root.xpath(xpath):
            if srcset and attr.attrname.endswith("srcset"):
                yield from (c.strip().split(" ")[0] for c in str(attr).split(","))
            else:
                yield str(attr).strip()

    return _absolute(hrefs(), base, drop_fragment=drop_fragment)


def _absolute(hrefs: Iterable[str], base: str, *, drop_fragment: bool) -> list[str]:
    """Absolute http(s) URLs of `hrefs` against `base`, de-duplicated, at most MAX_LINKS."""
    seen: dict[str, None] = {}
    for href in hrefs:
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
                break
    return list(seen)
