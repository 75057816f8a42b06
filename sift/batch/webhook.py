"""A Firecrawl job's `webhook`, free of I/O: what the caller asked for, how it is kept with
the job (in its stored spec, so a job resumed after a restart keeps it), and the bodies that
are posted, shaped and signed as Firecrawl's are.

Firecrawl posts `{"success", "type", "id", "webhookId", "data", "metadata"[, "error"]}` with
`type` `<job>.<event>` (`crawl.page`, `batch_scrape.completed`, `extract.failed`…), and signs
the raw body with the account's secret: `X-Firecrawl-Signature: sha256=<hex>`.
"""

from __future__ import annotations

import hashlib
import hmac
import re
import uuid
from typing import Any

import msgspec

from sift.core.errors import BadRequest

EVENTS = ("started", "page", "completed", "failed")
SIGNATURE = "X-Firecrawl-Signature"
PREFIX = {"scrape": "batch_scrape", "crawl": "crawl", "extract": "extract"}
MAX_HEADERS = 20  # the caller's headers on each post: a few, each short
MAX_HEADER_CHARS = 1000
MAX_METADATA = 8 * 1024  # bytes of the caller's metadata, echoed in every post
# Headers sift sets on a post itself, or that would change how it is framed or routed.
OWN_HEADERS = frozenset(
    {
        "host",
        "content-length",
        "content-type",
        "transfer-encoding",
        "connection",
        "keep-alive",
        "te",
        "trailer",
        "upgrade",
        "expect",
        "proxy-authorization",
        "proxy-connection",
        SIGNATURE.lower(),
    }
)
_NAME = re.compile(r"[!#$%&'*+.^_`|~0-9A-Za-z-]+")


class Hook(msgspec.Struct, frozen=True, forbid_unknown_fields=True):
    """Where a job's events go. `headers` are the caller's, sent with each post only: kept
    with the job, never logged, never in an answer."""

    url: str
    headers: dict[str, str] = {}
    metadata: dict[str, Any] = {}
    events: tuple[str, ...] = EVENTS


def parse(raw: object) -> Hook | None:
    """A request's `webhook` (a URL, or `{url, headers, metadata, events}`), or None without
    one; a malformed one is a 400 that says what is wrong. The URL is checked by the guard
    elsewhere (it resolves)."""
    if raw in (None, ""):
        return None
    if isinstance(raw, str):
        raw = {"url": raw}
    try:
        hook = msgspec.convert(raw, Hook)
    except msgspec.ValidationError as exc:
        raise BadRequest(f"invalid request: `webhook`: {exc}") from None
    if not hook.url.strip():
        raise BadRequest("invalid request: `webhook.url` is empty")
    unknown = sorted(set(hook.events) - set(EVENTS))
    if unknown:
        raise BadRequest(f"invalid request: `webhook.events`: {unknown[0]!r} is not an event")
    _check_headers(hook.headers)
    if len(msgspec.json.encode(hook.metadata)) > MAX_METADATA:
        raise BadRequest(f"invalid request: `webhook.metadata` is over {MAX_METADATA} bytes")
    return hook


def _check_headers(headers: dict[str, str]) -> None:
    """The caller's webhook headers: a few printable one-line ASCII headers, none that sift
    sets itself or that frames the request. A bad one is a 400 that names it, never its
    value."""
    if len(headers) > MAX_HEADERS:
        raise BadRequest(f"invalid request: `webhook.headers`: at most {MAX_HEADERS}")
    for name, value in headers.items():
        if not _NAME.fullmatch(name) or name.lower() in OWN_HEADERS:
            raise BadRequest(f"invalid request: `webhook.headers`: {name[:60]!r} is not allowed")
        printable = value.isascii() and value.isprintable()
        if not printable or len(name) + len(value) > MAX_HEADER_CHARS:
            raise BadRequest(
                f"invalid request: `webhook.headers`: {name!r} must be printable ASCII, one "
                f"line, at most {MAX_HEADER_CHARS} characters"
            )


def spec(crawl_spec: bytes | None, hook: Hook | None) -> bytes | None:
    """A job's stored spec: a crawl's bounds (if any) with the webhook beside them."""
    if hook is None:
        return crawl_spec
    base = msgspec.json.decode(crawl_spec) if crawl_spec is not None else {}
    return msgspec.json.encode({**base, "webhook": hook})


def from_spec(stored: bytes | None) -> Hook | None:
    """The webhook kept in a job's stored spec, or None (no spec, none asked for, unreadable:
    the job goes on without it)."""
    if not stored:
        return None
    try:
        return msgspec.json.decode(stored, type=_Kept).webhook
    except msgspec.DecodeError:
        return None


class _Kept(msgspec.Struct):
    webhook: Hook | None = None


def body(
    kind: str,
    event: str,
    job_id: str,
    hook: Hook,
    data: list[Any],
    error: str | None = None,
) -> bytes:
    """One post's body as Firecrawl's; `webhookId` names this delivery (the same on retries)."""
    payload: dict[str, Any] = {
        "success": error is None,
        "type": f"{PREFIX.get(kind, kind)}.{event}",
        "id": job_id,
        "webhookId": str(uuid.uuid4()),
        "data": data,
        "metadata": hook.metadata,
    }
    if error is not None:
        payload["error"] = error
    return msgspec.json.encode(payload)


def signature(secret: str, raw: bytes) -> str:
    """`X-Firecrawl-Signature`'s value: `sha256=` and the body's HMAC-SHA256 in hex."""
    return "sha256=" + hmac.new(secret.encode(), raw, hashlib.sha256).hexdigest()
