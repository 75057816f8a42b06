"""The per-target request: the `/v1/fetch` body, validated once, used by every entry point."""

from __future__ import annotations

from typing import Literal

import msgspec

from sift import docs
from sift.browser.wire import Action
from sift.errors import BadRequest

TOO_DEEP = "malformed JSON: nested too deeply"

Mode = Literal["clean", "raw", "digest"]


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
    timeout: float | None = None  # seconds; only lowers sift's deadlines (Firecrawl `timeout`)
    # The browser path (sift.browser): render first; Firecrawl's waitFor (ms), actions and
    # screenshot format (those imply `render`).
    render: bool = False
    wait_for: int | None = None
    actions: list[Action] | None = None
    screenshot: bool = False

    @property
    def wants_render(self) -> bool:
        return self.render or bool(self.wait_for or self.actions or self.screenshot)

    @property
    def effective_mode(self) -> Mode:
        if self.mode is not None:
            return self.mode
        return "digest" if self.question else "clean"


def parse_params(raw: bytes | dict[str, object]) -> FetchParams:
    """Decode and check a body; every problem is a 400 naming the field."""
    try:
        if isinstance(raw, bytes | bytearray):
            p = msgspec.json.decode(raw, type=FetchParams)
        else:
            p = msgspec.convert(raw, FetchParams)
    except msgspec.ValidationError as exc:
        raise BadRequest(f"invalid request: {exc}") from None
    except msgspec.DecodeError as exc:
        raise BadRequest(f"malformed JSON: {exc}") from None
    except RecursionError:
        raise BadRequest(TOO_DEEP) from None
    return check(p)


def check(p: FetchParams) -> FetchParams:
    if not p.url.strip():
        raise BadRequest("invalid request: `url` is empty")
    if len(p.url) > 8192:
        raise BadRequest("invalid request: `url` is longer than 8192 characters")
    mode = p.effective_mode
    if mode == "digest" and not (p.question and p.question.strip()):
        raise BadRequest("invalid request: mode `digest` needs a `question`")
    if p.question is not None and len(p.question) > 2000:
        raise BadRequest("invalid request: `question` is longer than 2000 characters")
    if mode == "raw" and (p.jq or p.pages or p.grep):
        raise BadRequest("invalid request: mode `raw` takes no `jq`, `pages` or `grep`")
    if p.max_chars is not None and p.max_chars < 1:
        raise BadRequest("invalid request: `max_chars` must be at least 1")
    if p.timeout is not None and p.timeout <= 0:
        raise BadRequest("invalid request: `timeout` must be positive")
    if p.wait_for is not None and not 0 <= p.wait_for <= 60_000:
        raise BadRequest("invalid request: `wait_for` must be 0 to 60000 milliseconds")
    if p.actions is not None and len(p.actions) > 50:
        raise BadRequest("invalid request: at most 50 `actions`")
    if p.grep is not None:
        docs.compile_grep(p.grep)  # a bad pattern is refused before anything is fetched
    if p.pages is not None:
        docs.page_spec(p.pages)
    if p.jq is not None:
        from sift.clean.data import validate_jq

        validate_jq(p.jq)
    return p
