"""The messages between a CleanActor and its worker process, and how errors cross the pipe.

Each message is one length-prefixed msgpack frame (`sift.core.childproc`, the protocol every
child speaks, in its framing for raw bytes: base64 in JSON Lines cost the clean path 5 %), and
both sides decode it into typed, frozen structs. An expected failure travels as
`error = "<outcome>: <message>"` (the SiftError's outcome name) and becomes the same SiftError
subclass again in the parent; the worker itself never dies of one.
"""

from __future__ import annotations

import hashlib

import msgspec

from sift.core.childproc import FrameDecoder
from sift.core.errors import BadRequest, SiftError, TooLarge, Unprocessable


class CleanTask(msgspec.Struct, frozen=True):
    """One document to clean. `kind` is "html", "json" or "text" (see sift.clean.kinds)."""

    kind: str
    body: bytes
    content_type: str
    url: str  # final URL, for resolving links
    jq: str | None = None
    input_cap: int = 5_000_000
    # HTML only (Firecrawl's options): the whole page instead of its main content, CSS
    # selectors kept / removed before cleaning, and the cleaned HTML besides the markdown
    whole_page: bool = False
    include_tags: tuple[str, ...] = ()
    exclude_tags: tuple[str, ...] = ()
    want_html: bool = False


class CleanResult(msgspec.Struct, frozen=True):
    """The cleaned document, or an expected error (`error`) in place of a traceback."""

    title: str
    text: str  # markdown / pretty JSON / text
    hint: str | None = None  # "browser" for script-only pages
    # main-content extraction found (almost) nothing: the text is a recall pass, the visible
    # text, or the title and meta description (sift.clean.html's fallback cascade)
    fallback: bool = False
    coverage: float | None = None  # share of the article's words kept, when well under half
    html: str | None = None  # the cleaned HTML, when the task asked for it (`want_html`)
    error: str | None = None  # "<outcome>: <message>", see error_text / to_error
    # What the page is (sift.clean.classify): content | challenge | consent | login | soft_404,
    # and for a non-content page what the site served, in words ("a Cloudflare bot check").
    page: str = "content"
    served: str | None = None
    hidden_removed: int = 0  # characters of text hidden from people, removed (visible.py)
    hidden_said: tuple[str, ...] = ()  # of that, what addresses an AI reader (honest.py)
    warning: str | None = None  # visible text addressed to an AI (injection.py)
    # the lines of `text` that `warning` names in all (`injection.find`: number, what it said),
    # None where not looked for: the answer's scan of this very text starts from them
    said: tuple[tuple[int, str], ...] | None = None
    # From the page's head (signals.py): its markdown alternate's URL, its robots directives.
    markdown_link: str | None = None
    meta_robots: str | None = None
    # What the page states about itself (meta.py): description, language, canonical, ...
    meta: dict[str, str] | None = None
    # `text_digest(text)`, made in the worker beside the cleaning: the server's event loop
    # then hashes no text of its own for the document's `content_hash`
    content_hash: str | None = None


# The errors a cleaner may answer with, by their outcome name.
_ERRORS: dict[str, type[SiftError]] = {
    cls.outcome: cls for cls in (BadRequest, TooLarge, Unprocessable)
}

task_decoder = FrameDecoder(CleanTask)
result_decoder = FrameDecoder(CleanResult)


def text_digest(text: str) -> str:
    """The content hash of a cleaned text: what names this version of a document."""
    return hashlib.sha256(text.encode()).hexdigest()[:32]


def error_text(exc: SiftError) -> str:
    """How an expected error crosses the pipe."""
    return f"{exc.outcome}: {exc.message}"


def error_result(exc: SiftError) -> CleanResult:
    return CleanResult(title="", text="", error=error_text(exc))


def to_error(error: str) -> SiftError:
    """The SiftError an `error` string stands for; unknown outcomes are internal errors."""
    outcome, _, message = error.partition(": ")
    cls = _ERRORS.get(outcome)
    if cls is None:
        return SiftError(f"internal error: cleaning failed ({error})")
    return cls(message)
