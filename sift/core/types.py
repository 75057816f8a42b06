"""The data sift passes between its layers: cached documents, PDF records, batch rows.

Plain frozen records with no behaviour of their own, so every layer may import them: the
store reads and writes them, the pipeline and the web side read them.
"""

from __future__ import annotations

import msgspec


class PageFacts(msgspec.Struct, frozen=True, omit_defaults=True):
    """What a fetch learned beside the text: where the text came from, and what the site says
    about automated use of the page (kept with it, so a cached answer says the same)."""

    source: str | None = None  # "site-markdown": the site's own markdown of the document
    markdown_link: str | None = None  # the page's <link rel="alternate" type="text/markdown">
    x_robots_tag: str | None = None  # the response's X-Robots-Tag
    meta_robots: str | None = None  # the page's <meta name="robots"> (and "ai"/"sift" ones)
    content_signal: dict[str, str] | None = None  # robots.txt Content-Signal for sift
    robots_rule: str | None = None  # the robots.txt line that decides this URL for sift
    robots_allowed: bool = True  # what that line says (no line: allowed)
    robots_read: bool = False  # robots.txt was read (missing counts as read: allow-all)
    # what the page states about itself (sift/clean/meta.py): description, language,
    # canonical, site_name, authors, published, modified
    meta: dict[str, str] | None = None
    # hidden elements that address an AI reader, as excerpts (removed from the text; the
    # answer's `injection` names them: clean/honest.py)
    hidden_said: tuple[str, ...] = ()


NO_FACTS = PageFacts()


class Content(msgspec.Struct, frozen=True):
    """One cached document: what the pipeline needs to answer without fetching."""

    url: str
    caller_class: str
    final_url: str
    kind: str
    content_type: str
    title: str
    text: str
    body: bytes | None  # the raw body (html/json/text), for raw mode and re-cleaning
    hint: str | None
    fallback: bool
    etag: str | None
    last_modified: str | None
    content_hash: str
    fetched_at: float
    size: int = 0
    coverage: float | None = None  # share of the article's words kept, when well under half
    page: str = "content"  # what the page is (sift.clean.classify); never "challenge" here
    served: str | None = None  # for a non-content page: what the site served, in words
    hidden_removed: int = 0  # characters of hidden text removed before extraction
    warning: str | None = None  # found while cleaning: visible text addressed to an AI
    facts: PageFacts = NO_FACTS  # its source and usage signals


class Stored(msgspec.Struct, frozen=True):
    """What a put did to the cache: the documents it evicted and the bytes now held."""

    evicted: list[tuple[str, str, str, int]]  # (table, url, caller class, size)
    total: int


class PdfDoc(msgspec.Struct, frozen=True):
    url: str
    caller_class: str
    final_url: str
    content_type: str
    content_hash: str
    etag: str | None
    last_modified: str | None
    meta: dict  # type: ignore[type-arg]  # pages, title, outline, extracted, warnings
    fetched_at: float
    size: int = 0


class OutlineItem(msgspec.Struct, frozen=True):
    """One bookmark: its title, the 1-based page it points to, its depth (1 = top level)."""

    title: str
    page: int
    level: int


class BatchJob(msgspec.Struct, frozen=True):
    id: str
    caller: str
    caller_class: str
    idem_key: str
    status: str
    error: str | None
    targets_total: int
    targets_done: int
    created_at: float
    lease: float
    nbytes: int
    kind: str = "batch"  # batch (/v1/batch) | scrape (Firecrawl batch scrape) | crawl | extract
    spec: bytes | None = None  # a crawl's bounds (`Frontier.encode`), stored to resume within


class BatchTarget(msgspec.Struct, frozen=True):
    job_id: str
    idx: int
    url: str
    options: bytes  # the target's /v1/fetch body as canonical JSON
    status: str  # pending | running | done | failed
    result: bytes | None  # the /v1/fetch envelope as JSON, once done
    error: str | None
    hint: str | None
    code: int | None  # the HTTP status /v1/fetch would have answered with
    upstream_status: int | None


class TargetOutcome(msgspec.Struct, frozen=True):
    """How one target ended, as the store keeps it: a result, or an error body and status."""

    status: str  # done | failed
    result: bytes | None = None
    error: str | None = None
    hint: str | None = None
    code: int | None = None
    upstream_status: int | None = None

    @property
    def nbytes(self) -> int:
        return len(self.result or b"") + len((self.error or "").encode())


class Resumed(msgspec.Struct, frozen=True):
    """What `batch_resume` (or `batch_claim`) found: the live jobs with their targets, and how
    many targets it failed for having been in flight at two restarts."""

    jobs: list[tuple[BatchJob, list[BatchTarget]]]
    failed: int
