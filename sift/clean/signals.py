"""What a page's head says beside its text: the site's own markdown of it (`<link
rel="alternate" type="text/markdown">`) and what it allows automated readers (`<meta
name="robots">`, and the `ai`/`sift` spellings some sites use for AI readers)."""

from __future__ import annotations

from urllib.parse import urljoin

from lxml.html import HtmlElement

MARKDOWN_TYPES = frozenset({"text/markdown", "text/x-markdown"})
ROBOTS_NAMES = frozenset({"robots", "ai", "sift"})
MAX_DIRECTIVES = 500  # characters of robots directives kept: a hostile page may write more


def markdown_alternate(tree: HtmlElement, base: str) -> str | None:
    """The absolute URL of the page's markdown alternate (the first), if it names one."""
    for link in tree.iter("link"):
        rel = str(link.get("rel") or "").lower().split()
        kind = str(link.get("type") or "").split(";")[0].strip().lower()
        href = str(link.get("href") or "").strip()
        if "alternate" in rel and kind in MARKDOWN_TYPES and href:
            try:
                return urljoin(base, href)
            except ValueError:
                return None
    return None


def meta_robots(tree: HtmlElement) -> str | None:
    """The page's robots directives, lower case, comma-separated (`noindex, noai`)."""
    found: list[str] = []
    for meta in tree.iter("meta"):
        if str(meta.get("name") or "").strip().lower() in ROBOTS_NAMES:
            found += [d.strip().lower() for d in str(meta.get("content") or "").split(",")]
    said = ", ".join(dict.fromkeys(d for d in found if d))
    return said[:MAX_DIRECTIVES] or None
