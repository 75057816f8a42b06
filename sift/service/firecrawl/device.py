"""What a browser alone honours of a Firecrawl scrape — `mobile`, `location.languages`, the
`screenshot` action — as the answer says it: the screenshots in `actions`, and a note for
each of the others the page was not rendered for (a job's pages and a scrape's alike)."""

from __future__ import annotations

from typing import Any

from sift.core.request import FetchParams
from sift.service.document import Document


def notes(params: FetchParams, doc: Document) -> list[str]:
    """`mobile` and `location.languages` on a page that was not rendered: named."""
    said = []
    if params.mobile and not doc.rendered:
        said.append("`mobile`: not rendered in a browser; this is the page a desktop gets")
    if params.languages and not doc.rendered:
        said.append("`location.languages`: not rendered in a browser; sent without them")
    return said


def actions(doc: Document) -> dict[str, Any] | None:
    """Firecrawl's `actions` answer: the `screenshot` actions' PNGs (data URLs), in order."""
    if not doc.shots:
        return None
    shots = [f"data:image/png;base64,{s}" for s in doc.shots]
    return {"screenshots": shots, "scrapes": [], "javascriptReturns": []}
