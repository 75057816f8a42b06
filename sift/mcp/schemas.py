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
    reused: bool = Field(description="the same job was already live: this is that job")


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
