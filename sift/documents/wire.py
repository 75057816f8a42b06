"""The JSON Lines contract between `sift pdftext` and its parent, as typed msgspec structs.

The child writes one `{"meta": …}` line, then one line per extracted page. Page lines may
arrive in any order after the meta line (the parent sorts them). Absent fields are omitted.
"""

from __future__ import annotations

import msgspec

from sift.core.types import OutlineItem

# Exit codes of the child; anything else is read as "unreadable".
EXIT_OK = 0
EXIT_ENCRYPTED = 3
EXIT_UNREADABLE = 4
EXIT_REFUSED = 5  # the office child: a zip bomb or XML entities (`refused: <why>` on stderr)
EXIT_MEMORY = 6  # the office child: over its memory bound


class Meta(msgspec.Struct, frozen=True):
    """The whole document (not only the pages one child extracts)."""

    pages: int
    title: str = ""
    outline: tuple[OutlineItem, ...] = ()
    unit: str = "page"  # an office file's parts: section, slide, sheet or chapter


class MetaLine(msgspec.Struct, frozen=True):
    meta: Meta


class PageLine(msgspec.Struct, frozen=True, omit_defaults=True):
    """A page's text, or the error that stopped it; `warning` when the text looks garbled."""

    page: int
    text: str | None = None
    error: str | None = None
    warning: str | None = None


def split(pages: int, max_pages: int, over: int, parts: int = 2) -> list[tuple[int, int]]:
    """The page ranges a document is extracted in: one, or `parts` equal ones past `over` pages.

    Both the children (child i of k extracts range i when told `--split-over`, `--part i`,
    `--parts k`) and the parent (which starts them) use this, so they always agree.
    """
    n = min(pages, max_pages)
    if n <= 0:
        return []
    if over <= 0 or n <= over or parts <= 1:
        return [(1, n)]
    k = min(parts, n)
    bounds = [-(-n * i // k) for i in range(k + 1)]  # the first ranges take the odd pages
    return [(bounds[i] + 1, bounds[i + 1]) for i in range(k)]
