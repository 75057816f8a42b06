"""What `sift pdftext` needs from a PDF library: the engine's interface and what both
engines share (their errors, the outline cap, a clean title). `engine.open_engine` chooses.

An engine opens the bytes (raising `Encrypted` or `Unreadable`), knows the page count, the
meta (title, outline) and extracts one page at a time, reporting a warning when it knows the
text is unreliable (a font without a Unicode map). Both libraries are core dependencies;
each is imported only when used.
"""

from __future__ import annotations

from typing import Protocol

from sift.documents.wire import Meta

MAX_OUTLINE = 10_000  # a malformed outline can be endless
MAX_TITLE = 500


class Encrypted(Exception):
    """The document needs a user password (the empty one did not open it)."""


class Unreadable(Exception):
    """Not a PDF, no page tree, or the library cannot open it."""


class Engine(Protocol):
    pages: int

    def meta(self, outline: bool) -> Meta: ...

    def page(self, number: int) -> tuple[str, str | None]:
        """Page `number` (1-based): its text and a warning, or None when it reads as text."""
        ...


def clean_title(value: object, cap: int = MAX_TITLE) -> str:
    """A title as one plain line: strings only, whitespace folded, control characters gone."""
    if not isinstance(value, str):
        return ""
    text = "".join(ch if ch.isprintable() else " " for ch in value)
    return " ".join(text.split())[:cap]
