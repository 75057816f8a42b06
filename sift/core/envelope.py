"""The answer to a fetch as its clients read it (DESIGN.md §2, `/v1/fetch`): built once by the
façade (`service/answer/envelope.py`), encoded once where it is written, read by attribute by
every door (the reader URL, Firecrawl, batch) and decoded into the same type by the clients of
a running sift (the CLI, MCP). A field that applies only sometimes has a default and is then
absent from the JSON (`omit_defaults`); a field every answer has has none, so it is always
written, `null` included. The fields are in the order the JSON has always had."""

from __future__ import annotations

import msgspec

from sift.core.types import OutlineItem


class RobotsRule(msgspec.Struct, frozen=True):
    """The robots.txt rule that decides the URL for sift (`[fetch] robots` report/respect)."""

    allowed: bool
    rule: str | None


class Usage(msgspec.Struct, frozen=True, omit_defaults=True, kw_only=True):
    """What the site says about automated use of the page; empty when it says nothing."""

    content_signal: dict[str, str] | None = None  # robots.txt Content-Signal for sift
    x_robots_tag: str | None = None
    meta_robots: str | None = None
    # the directives that apply to sift (unscoped or `sift:`), each true when said
    noai: bool = False
    noimageai: bool = False
    nofollow: bool = False
    noindex: bool = False
    none: bool = False
    robots_txt: RobotsRule | None = None

    def says(self) -> bool:
        """Whether the site said anything at all."""
        return self != NOTHING_SAID


NOTHING_SAID = Usage()


class PagesFacts(msgspec.Struct, frozen=True, omit_defaults=True, kw_only=True):
    """The `pdf` / `sections` / `parts` object of an answer that is pages, a map or grep
    hits. The outline is cut to the answer's bound; `outline_more` counts what was left out."""

    pages: int
    title: str
    outline: tuple[OutlineItem, ...]
    returned: tuple[int, int] | None
    map: bool
    grep_hits: int
    outline_more: int = 0
    outline_note: str | None = None
    unit: str | None = None  # an office file's parts: section, slide, sheet, chapter


class DigestFacts(msgspec.Struct, frozen=True):
    """The `digest` object of an answer in digest mode (its answer is the `content`)."""

    answer: str
    model: str
    retrieval: str  # full | bm25 | hybrid
    chunks: int
    embedded: str  # "k/n": chunks with an embedding / chunks of the document
    cached: bool


class Stated(msgspec.Struct, frozen=True, omit_defaults=True, kw_only=True):
    """What a page states about itself (`clean/meta.py`), where it states it."""

    description: str | None = None
    language: str | None = None
    canonical: str | None = None  # the canonical URL
    site_name: str | None = None
    authors: str | None = None  # comma-separated
    published: str | None = None  # ISO dates
    modified: str | None = None


class Injection(msgspec.Struct, frozen=True):
    """What in a document addresses an AI reader or hides text from a person (DESIGN §2, the
    fence): `where` (`page 3`, `section 2`, `sheet 1`, `body`, `digest`, `summary`), `what`
    (`instruction` or `invisible`), and an `excerpt` of at most 120 characters on one line."""

    where: str
    what: str
    excerpt: str


class Citation(msgspec.Struct, frozen=True, omit_defaults=True, kw_only=True):
    """Where a passage an answer quotes is (a grep hit, a digest's passage, a read's): `start`
    and `end` are character offsets in that version's text (what `/v1/verify` checks, and
    `offset` counts in), `part` its page (section, sheet …)."""

    url: str
    start: int
    end: int
    content_hash: str
    part: int | None = None
    unit: str | None = None


class Envelope(msgspec.Struct, frozen=True, omit_defaults=True, kw_only=True):
    """A 200 answer of `/v1/fetch` (`/v2/scrape` and batch results are built from it)."""

    success: bool
    url: str
    final_url: str
    status: int
    kind: str
    content_type: str
    title: str
    content: str
    chars: int
    truncated: bool
    cached: bool
    stale: bool
    fetched_at: str
    hint: str | None
    page: str
    hidden_removed: int
    content_hash: str  # names this version (`if_none_match`, `sift://doc/…`)
    usage: Usage
    pdf: PagesFacts | None = None  # a PDF's or an image's pages
    parts: PagesFacts | None = None  # an office file's or an e-book's parts
    sections: PagesFacts | None = None  # a long HTML page's sections
    ocr_pages: tuple[int, ...] = ()
    source: str | None = None  # "site-markdown"
    metadata: Stated | None = None  # what the page states about itself
    rendered: bool = False
    screenshot: str | None = None  # a data URL
    extraction: str | None = None  # "fallback": the main content was not found
    coverage: float | None = None
    digest: DigestFacts | None = None
    warning: str | None = None
    # what addresses an AI reader or is invisible, at most 10 places (`clean/injection_scan.py`)
    injection: tuple[Injection, ...] = ()
    next: int | str | None = None  # the `offset`, or the `pages` to ask next
    tokens: int
    unchanged: bool | None = None  # with `if_none_match` only
    changes: str | None = None  # a unified diff against the version named
    citations: tuple[Citation, ...] = ()  # of grep hits and a digest's quoted passages

    @property
    def paged(self) -> PagesFacts | None:
        """The pages a PDF, image or office file answered (not a long page's sections)."""
        return self.pdf or self.parts
