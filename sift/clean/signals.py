"""What a page's head says beside its text: the site's own markdown of it (`<link
rel="alternate" type="text/markdown">`) and what it allows automated readers (`<meta
name="robots">`, and the `ai`/`sift` spellings some sites use for AI readers)."""

from __future__ import annotations

from urllib.parse import urljoin

from lxml.html import HtmlElement

MARKDOWN_TYPES = frozenset({"text/markdown", "text/x-markdown"})
ROBOTS_NAMES = frozenset({"robots", "ai", "sift"})
MAX_DIRECTIVES = 500  # characters of robots directives kept: a hostile page may write more


def head(tree: HtmlElement, base: str) -> tuple[str | None, str | None]:
    """In one walk of the page: the absolute URL of its markdown alternate (the first), if it
    names one; and its robots directives, lower case, comma-separated (`noindex, noai`)."""
    alternate: str | None = None
    looking = True  # (for the first alternate: one that `urljoin` refuses ends the search)
    found: list[str] = []
    for el in tree.iter("link", "meta"):
        if el.tag == "meta":
            if str(el.get("name") or "").strip().lower() in ROBOTS_NAMES:
                found += [d.strip().lower() for d in str(el.get("content") or "").split(",")]
        elif looking:
            alternate, looking = _alternate(el, base)
    said = ", ".join(dict.fromkeys(d for d in found if d))
    return alternate, said[:MAX_DIRECTIVES] or None


def _alternate(link: HtmlElement, base: str) -> tuple[str | None, bool]:
    """The absolute URL of the markdown alternate `link` names, if it is one; and whether the
    search goes on (it ends at the first)."""
    rel = str(link.get("rel") or "").lower().split()
    kind = str(link.get("type") or "").split(";")[0].strip().lower()
    href = str(link.get("href") or "").strip()
    if "alternate" in rel and kind in MARKDOWN_TYPES and href:
        try:
            return urljoin(base, href), False
        except ValueError:
            return None, False
    return None, True
