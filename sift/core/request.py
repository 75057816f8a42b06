"""The per-target request: the `/v1/fetch` body (also a batch target), as one typed struct.

Checked in `sift.service.params`; everything below the façade takes it already checked.
No `from __future__ import annotations`: msgspec reads the types at the first decode, cheaper
as objects than as strings to evaluate (as in `core/config/sections.py`).
"""

from typing import Literal

import msgspec

Mode = Literal["clean", "raw", "digest"]


class Action(msgspec.Struct, forbid_unknown_fields=False, kw_only=True):
    """One Firecrawl action of the kinds sift's browser runs (others are refused up front)."""

    type: Literal["wait", "click", "scroll", "write", "press", "screenshot"]
    milliseconds: int | None = None  # wait
    selector: str | None = None  # wait, click, scroll
    text: str | None = None  # write
    key: str | None = None  # press
    direction: Literal["up", "down"] = "down"  # scroll


class FetchParams(msgspec.Struct, forbid_unknown_fields=True, frozen=True, kw_only=True):
    """A `/v1/fetch` body (also a batch target). Unknown keys are an error: they are typos."""

    url: str
    mode: Mode | None = None
    question: str | None = None
    pages: str | None = None
    grep: str | None = None
    jq: str | None = None
    context: bool = True
    recover: bool = False
    max_chars: int | None = None
    # the answer's budget in tokens (sift.documents.tokens), and where a cut answer goes on:
    # characters into its text (or into a `pages` range's), as its `next` says
    max_tokens: int | None = None
    offset: int | None = None
    timeout: float | None = None  # seconds; only lowers sift's deadlines (Firecrawl `timeout`)
    # the oldest cached copy accepted, in seconds (never older than `[cache] ttl`); 0 = fresh
    max_age: float | None = None
    store: bool = True  # false: the answer is not written to the cache
    # Firecrawl's cleaning options, for HTML: the whole page instead of its main content, and
    # CSS selectors applied before cleaning. The cache keeps the page as fetched; these are a
    # fresh clean of its body, never cached (sift.service.steps.view).
    whole_page: bool = False
    include_tags: tuple[str, ...] = ()
    exclude_tags: tuple[str, ...] = ()
    # The browser path (sift.browser): `render`, actions and the screenshot format render
    # first; `wait_for` (ms) is the wait inside a render, and asks for none itself, except
    # as Firecrawl's `waitFor` (`/v2/scrape` renders an HTML page then: pipeline.run).
    render: bool = False
    wait_for: int | None = None
    actions: list[Action] | None = None
    screenshot: bool = False
    # Firecrawl's `mobile` and `location.languages`, honoured in a render only: a phone's
    # viewport and user agent; the languages as the browser's locale and Accept-Language.
    mobile: bool = False
    languages: tuple[str, ...] = ()

    @property
    def must_render(self) -> bool:
        return self.render or bool(self.actions or self.screenshot)

    headers: dict[str, str] | None = None  # the caller's own (Cookie, …): sent, never logged
    # the `content_hash` of an earlier answer: unchanged, or changed and how (steps/changes.py)
    if_none_match: str | None = None

    def __repr__(self) -> str:  # a logged or traced request never shows the caller's headers
        shown = {f: getattr(self, f) for f in self.__struct_fields__ if f != "headers"}
        hidden = f", headers=<{len(self.headers)} hidden>" if self.headers else ""
        return f"FetchParams({', '.join(f'{k}={v!r}' for k, v in shown.items())}{hidden})"

    @property
    def private(self) -> bool:
        """Fetched with the caller's own headers: private end to end. Nothing derived from it
        (content, digests, embeddings, PDF pages, sections, renders) is read from or written
        to any cache or file, nor shared with another request."""
        return bool(self.headers)

    @property
    def effective_mode(self) -> Mode:
        if self.mode is not None:
            return self.mode
        return "digest" if self.question else "clean"


class ScrapeTarget(FetchParams, frozen=True, kw_only=True):
    """A target of a Firecrawl batch scrape or crawl: a fetch answered as a Firecrawl
    document with these `formats`. A crawl's page (`discover`) also yields its links."""

    formats: tuple[str, ...] = ("markdown",)
    depth: int = 0  # discovery hops from a crawl's start URL
    discover: bool = False
    asked: str = ""  # the URL as the caller wrote it (its `sourceURL`), when `url` differs
    json_prompt: str | None = None  # the `json` format's prompt and schema, for the model
    json_schema: dict[str, object] | None = None
    notes: tuple[str, ...] = ()  # what the options ask that sift cannot honour (`warning`)
    max_pages: int | None = None  # `parsers` pdf: `maxPages`, `pages`, `pageMarkers`
    page_list: bool = False
    page_markers: bool = False
    git_diff: bool = False  # `changeTracking` mode `git-diff`


class ExtractTarget(FetchParams, frozen=True, kw_only=True):
    """The one target of a Firecrawl extract job: its `urls` (the first is `url`), fetched
    side by side, and the model asked once with `prompt` and `schema`."""

    urls: tuple[str, ...] = ()
    prompt: str | None = None
    schema: dict[str, object] | None = None


def next_fields(nxt: int | str) -> dict[str, int | str]:
    """The request fields an answer's `next` stands for: a number is the `offset` of the
    same request's rest; a range is the `pages` to ask next (from their start)."""
    return {"pages": nxt} if isinstance(nxt, str) else {"offset": nxt}
