"""The per-target request checked: a `/v1/fetch` body decoded and validated once, for every
entry point (HTTP, batch, the CLI)."""

from __future__ import annotations

import re
from typing import Any, TypeVar
from urllib.parse import unquote, unquote_plus

import msgspec

from sift.core.errors import BadRequest
from sift.core.request import FetchParams
from sift.documents.grep import compile_grep
from sift.documents.pages import page_spec

T = TypeVar("T")

TOO_DEEP = "malformed JSON: nested too deeply"
MAX_SELECTORS = 50
MAX_TOKENS = 10_000_000
MAX_OFFSET = 1 << 40
LANGUAGE_TAG = r"[A-Za-z]{2,8}(-[A-Za-z0-9]{1,8}){0,4}"  # compiled on first use (`re` keeps it)


def parse_params(raw: bytes | dict[str, object]) -> FetchParams:
    """Decode and check a body; every problem is a 400 naming the field."""
    return check(decoded(raw, FetchParams))


def decoded(raw: bytes | dict[str, Any], type_: type[T]) -> T:
    """A request body (JSON bytes, or already a dict) as `type_`; a problem is a 400."""
    try:
        if isinstance(raw, bytes | bytearray):
            return msgspec.json.decode(raw, type=type_)
        return msgspec.convert(raw, type_)
    except msgspec.ValidationError as exc:
        raise BadRequest(f"invalid request: {exc}") from None
    except msgspec.DecodeError as exc:
        raise BadRequest(f"malformed JSON: {exc}") from None
    except RecursionError:
        raise BadRequest(TOO_DEEP) from None


# URL fragments that carry navigation (`#pages=…`, `#grep=…`, `#q=…`): the fragment never leaves
# sift, and a field given in the body or query wins over it.
_FRAGMENT_KEYS = {"page": "pages", "pages": "pages", "grep": "grep", "q": "question"}


def fragment_fields(url: str) -> tuple[str, dict[str, str]]:
    """`url` without its fragment, and the navigation the fragment carries.

    `#page=12` (RFC 8118), `#pages=41-60`, `#grep=<percent-encoded RE2>`, `#q=<question>`,
    joined with `&`. Values are percent-decoded; in `q` a `+` is a space, in `grep` it stays
    `+` (a regex operator). Other fragment parameters (`#section-2`, `#zoom=50`) are dropped:
    a fragment means nothing upstream and must not split the cache.
    """
    base, sep, frag = url.partition("#")
    found: dict[str, str] = {}
    for part in frag.split("&") if sep else ():
        name, eq, value = part.partition("=")
        field = _FRAGMENT_KEYS.get(name.lower())
        if not eq or field is None or (name.lower() == "page" and "pages" in found):
            continue
        found[field] = unquote_plus(value) if field == "question" else unquote(value)
    return base, found


def with_fragment(p: FetchParams) -> FetchParams:
    """`p` with its URL's fragment stripped and its navigation applied; fields win."""
    if "#" not in p.url:
        return p
    url, found = fragment_fields(p.url)
    fields = {k: v for k, v in found.items() if getattr(p, k) is None}
    return msgspec.structs.replace(p, url=url, **fields)


def check(p: FetchParams) -> FetchParams:
    p = with_fragment(p)
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
    if p.max_tokens is not None and not 1 <= p.max_tokens <= MAX_TOKENS:
        raise BadRequest(f"invalid request: `max_tokens` must be 1 to {MAX_TOKENS:,}")
    if p.offset is not None and not 0 <= p.offset <= MAX_OFFSET:
        raise BadRequest("invalid request: `offset` must be 0 or more characters")
    if p.timeout is not None and p.timeout <= 0:
        raise BadRequest("invalid request: `timeout` must be positive")
    if p.headers is not None:
        from sift.fetch.headers import check_headers  # late: the cached `sift extract` has none

        check_headers(p.headers)
    if p.wait_for is not None and not 0 <= p.wait_for <= 60_000:
        raise BadRequest("invalid request: `wait_for` must be 0 to 60000 milliseconds")
    if len(p.languages) > 10 or not all(re.fullmatch(LANGUAGE_TAG, t) for t in p.languages):
        raise BadRequest(
            "invalid request: `languages` (Firecrawl's `location.languages`): at most 10"
            ' language tags such as "de-DE"'
        )
    if p.actions is not None and len(p.actions) > 50:
        raise BadRequest("invalid request: at most 50 `actions`")
    if p.max_age is not None and p.max_age < 0:
        raise BadRequest("invalid request: `max_age` must be 0 or more seconds")
    if p.if_none_match is not None:
        p = _if_none_match(p)
    if len(p.include_tags) + len(p.exclude_tags) > MAX_SELECTORS or any(
        len(s) > 500 for s in (*p.include_tags, *p.exclude_tags)
    ):
        raise BadRequest(f"invalid request: at most {MAX_SELECTORS} selectors of 500 characters")
    for sel in (*p.include_tags, *p.exclude_tags):
        selector_xpath(sel)  # a bad selector is refused before anything is fetched
    if p.grep is not None:
        compile_grep(p.grep)  # a bad pattern is refused before anything is fetched
    if p.pages is not None:
        page_spec(p.pages)
    if p.jq is not None:
        from sift.clean.data import validate_jq

        validate_jq(p.jq)
    return p


def _if_none_match(p: FetchParams) -> FetchParams:
    """A hash as answers give them (hex; `view:<hex>` for a page cleaned with the caller's
    options, `<hex>:ocr<N>` for a scan with N pages read, `partial:<N>:<url>` for a document
    answered in part when out of time; a quoted ETag's quotes dropped);
    asking whether a page changed asks the site, so the copy is revalidated unless `max_age`
    says otherwise."""
    tag = p.if_none_match.strip().strip('"') if p.if_none_match else ""
    if re.fullmatch(r"partial:[0-9]{1,9}:\S{1,8192}", tag):  # a document answered in part
        return msgspec.structs.replace(p, if_none_match=tag, max_age=0)
    tag = tag.lower()
    if not re.fullmatch(r"(view:)?[0-9a-f]{8,64}(:ocr[0-9]{1,9})?", tag):
        raise BadRequest("invalid request: `if_none_match` is the `content_hash` of an answer")
    return msgspec.structs.replace(
        p, if_none_match=tag, max_age=0 if p.max_age is None else p.max_age
    )


def selector_xpath(selector: str) -> str:
    """The XPath of a CSS selector (cssselect), or a 400 naming the selector."""
    from cssselect import HTMLTranslator, SelectorError

    try:
        return str(HTMLTranslator().css_to_xpath(selector))
    except SelectorError as exc:
        raise BadRequest(f"invalid CSS selector {selector!r}: {exc}") from None
