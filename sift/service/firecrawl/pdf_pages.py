"""A PDF's physical pages as Firecrawl's `parsers` ask for them: `pages: true` adds `pages`
(`[{"pageNumber", "markdown"}]`), `pageMarkers: true` joins the markdown's pages with
`\n\n---\n\n<!-- page N -->\n\n` between them. Both within `maxPages` and the answer's cap
(`out_cap`): a page past the cap is left out, and the `warning` says from where."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from sift.core.errors import BadRequest
from sift.core.fence import neutralise
from sift.service.document import Document

MARKER = "\n\n---\n\n<!-- page {n} -->\n\n"


@dataclass(frozen=True)
class PdfParser:
    """`parsers`' `pdf` entry: the first `max_pages` pages only, per-page markdown, markers."""

    max_pages: int | None = None
    pages: bool = False
    markers: bool = False
    ocr: bool = False


def parse(body: dict[str, Any]) -> PdfParser:
    """The request's `parsers` pdf entry (v2 objects, or the string "pdf"); a bad value is a
    400 naming it."""
    raw = body.get("parsers")
    if raw is not None and not isinstance(raw, list):
        raise BadRequest('invalid request: `parsers` is a list (of "pdf" or parser objects)')
    for item in raw or ():
        if not isinstance(item, dict) or item.get("type") != "pdf":
            continue
        n = item.get("maxPages")
        if n is not None and (isinstance(n, bool) or not isinstance(n, int) or n < 1):
            raise BadRequest("invalid request: `parsers` pdf `maxPages` must be at least 1")
        flags = {}
        for name in ("pages", "pageMarkers"):
            value = item.get(name, item.get("pageMarkdown") if name == "pages" else None)
            if value is not None and not isinstance(value, bool):
                raise BadRequest(f"invalid request: `parsers` pdf `{name}` must be true or false")
            flags[name] = value is True
        return PdfParser(n, flags["pages"], flags["pageMarkers"], item.get("mode") == "ocr")
    return PdfParser()


def apply(data: dict[str, Any], doc: Document, parser: PdfParser, cap: int) -> None:
    """Add what `parser` asks to `data` (a Firecrawl document), and to its `warning` what it
    could not."""
    notes = _applied(data, doc, parser, cap)
    if notes:
        data["warning"] = "; ".join(filter(None, (data.get("warning"), *notes)))


def _applied(data: dict[str, Any], doc: Document, parser: PdfParser, cap: int) -> list[str]:
    if not (parser.pages or parser.markers):
        return []
    if doc.content.kind != "pdf":
        return [f"parsers pdf `pages`/`pageMarkers`: this is {doc.content.kind}, not a PDF"]
    if doc.pages is None:
        return ["parsers pdf `pages`/`pageMarkers`: the pages are not extracted yet; ask again"]
    texts = [neutralise(text) for text in doc.pages.pages[: parser.max_pages or None]]
    kept: list[str] = []
    size = 0
    for text in texts:
        if kept and size + len(text) > cap:
            break
        kept.append(text[:cap])
        size += len(text)
    notes = []
    if len(kept) < len(texts):
        notes.append(
            f"parsers pdf: pages {len(kept) + 1}-{len(texts)} are over the answer's cap "
            f"({cap} characters); ask for them with `#pages={len(kept) + 1}-{len(texts)}`"
        )
    if parser.pages:
        data["pages"] = [{"pageNumber": i + 1, "markdown": t} for i, t in enumerate(kept)]
    if parser.markers:
        data["markdown"] = (
            kept[0] + "".join(MARKER.format(n=i + 1) + t for i, t in enumerate(kept) if i)
            if kept
            else ""
        )
    return notes
