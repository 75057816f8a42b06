"""The shapes of the MCP tools' data results: each tool whose answer is data (a job's state, a
site's URLs, search results) declares one of these as its `outputSchema` and returns it as
`structuredContent`, so a client can read fields instead of parsing text. Fields sift may add
later are allowed (`extra="allow"`): an older client keeps working."""

from __future__ import annotations

from typing import Literal

from pydantic import BaseModel, ConfigDict, Field


class _Open(BaseModel):
    model_config = ConfigDict(extra="allow")


class BatchJob(_Open):
    """What batch_fetch answers: the job, queued (or the live one it is the same as)."""

    job_id: str
    status: str
    targets: int = Field(description="how many URLs the job has")
    reused: bool = Field(default=False, description="the job was already live: this is that job")


class BatchTargetState(_Open):
    idx: int
    url: str
    status: str
    error: str | None = None
    hint: str | None = None


class BatchStatus(_Open):
    """A batch job's state: queued / running / done / failed / cancelled, and each target's."""

    job_id: str
    status: str
    targets_total: int
    targets_done: int
    created_at: str
    expires_at: str
    error: str | None = None
    targets: list[BatchTargetState] = []


class BatchEnded(BatchJob):
    """What a batch_fetch run as a task answers once its job is over: each target's state."""

    targets_done: int
    outcomes: list[BatchTargetState] = []
    error: str | None = None


class SiteMap(_Open):
    """A site's URLs, as map found them."""

    count: int
    links: list[str]


class CrawlPage(_Open):
    url: str | None = None
    title: str = ""
    status: int | None = None


class CrawlState(_Open):
    """A crawl's state and the pages it read so far."""

    id: str
    status: Literal["scraping", "completed", "cancelled", "failed"] | str | None
    completed: int | None = None
    total: int | None = None
    pages: list[CrawlPage] = []


class SearchHit(_Open):
    url: str
    title: str = ""
    description: str = ""
    position: int


class SearchResults(_Open):
    """The web results of a search, best first."""

    query: str
    results: list[SearchHit]
    warning: str | None = None


class Citation(_Open):
    """Where a quoted passage is: character offsets in that version's text (what `fetch`'s
    `start_index` counts in), its page (section, sheet …) and the version's hash."""

    url: str
    part: int | None = Field(None, description="the page (section, sheet …) it is in")
    unit: str | None = Field(None, description="what a part is: page, section, sheet …")
    start: int
    end: int
    content_hash: str


class Passage(Citation):
    source: int = Field(description="the source's number in the read, from 1")
    text: str


class ReadSource(_Open):
    """One source of a read: ok (all shown), cut (with where to read on), or its error."""

    url: str
    status: Literal["ok", "cut", "error"]
    error: str | None = None
    hint: str | None = None
    code: int | None = Field(None, description="the HTTP status of the source's error")
    next_start_index: int | None = Field(
        None, description="cut: fetch this url with start_index=N for the rest of it"
    )
    next_pages: str | None = Field(
        None, description="cut, read in a page range: fetch with these pages and the start_index"
    )
    not_shown: str | None = None
    content_hash: str | None = None


class ReadAnswer(_Open):
    """What `read` answers: the passages quoted, each cited, and every source's state."""

    tokens: int
    max_tokens: int
    passages: list[Passage]
    sources: list[ReadSource]


class Verified(_Open):
    """Whether a quote is in the page's version, where, and whether the page changed."""

    url: str
    found: bool
    match: Literal["exact", "whitespace"] | None = None
    part: int | None = None
    unit: str | None = None
    start: int | None = None
    end: int | None = None
    content_hash: str
    changed: bool | None = Field(None, description="null when no content_hash was given")
