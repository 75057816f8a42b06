"""The per-target request checked: a `/v1/fetch` body decoded and validated once, for every
entry point (HTTP, batch, the CLI)."""

from __future__ import annotations

import msgspec

from sift.core.errors import BadRequest
from sift.core.request import FetchParams
from sift.documents.grep import compile_grep
from sift.documents.pages import page_spec
from sift.fetch.headers import check_headers

TOO_DEEP = "malformed JSON: nested too deeply"


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
    if p.headers is not None:
        check_headers(p.headers)
    if p.grep is not None:
        compile_grep(p.grep)  # a bad pattern is refused before anything is fetched
    if p.pages is not None:
        page_spec(p.pages)
    if p.jq is not None:
        from sift.clean.data import validate_jq

        validate_jq(p.jq)
    return p
