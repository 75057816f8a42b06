"""A caller's own request headers (`/v1/fetch` `headers`): which may be sent, and to whom.

A caller passes `Cookie` or `Authorization` for pages behind a login. What would change the
guard's view or the transport (`Host`, proxies, hop-by-hop headers, framing, forwarding) is
refused, as is anything curl could not send as one line. Across redirects they follow the
rule browsers keep for credentials: `Authorization` only within the first origin, and none of
the caller's headers to another host.
"""

from __future__ import annotations

import re

from sift.core.errors import BadRequest
from sift.fetch.guard import Target

Headers = tuple[tuple[str, str], ...]

MAX_COUNT = 32
MAX_BYTES = 8192  # names and values, as sent ("Name: value\r\n")

REFUSED = frozenset(
    {
        "host",
        "connection",
        "keep-alive",
        "te",
        "trailer",
        "transfer-encoding",
        "upgrade",
        "content-length",
        "expect",
        "accept-encoding",
        "forwarded",
        "via",
        "x-real-ip",
    }
)
REFUSED_PREFIXES = ("proxy-", "x-forwarded-")
_TOKEN = re.compile(r"[!#$%&'*+.^_`|~0-9A-Za-z-]+")
_BAD_VALUE = re.compile(r"[\x00-\x08\x0a-\x1f\x7f]")


def check_headers(raw: dict[str, str]) -> Headers:
    """The headers as sent upstream, in order; every problem is a 400 naming the header
    (never its value: values are secrets)."""
    if len(raw) > MAX_COUNT:
        raise BadRequest(f"invalid request: `headers` has more than {MAX_COUNT} entries")
    seen: set[str] = set()
    size = 0
    out = []
    for name, value in raw.items():
        if not _TOKEN.fullmatch(name) or len(name) > 128:
            raise BadRequest("invalid request: a header name in `headers` is not a valid name")
        low = name.lower()
        if low in REFUSED or low.startswith(REFUSED_PREFIXES):
            raise BadRequest(
                f"invalid request: header `{name}` cannot be set: it would change where or "
                "how sift connects"
            )
        if low in seen:
            raise BadRequest(f"invalid request: header `{name}` is given twice")
        seen.add(low)
        if _BAD_VALUE.search(value) or not value.isascii():
            raise BadRequest(
                f"invalid request: the value of header `{name}` has control characters "
                "(CR, LF, NUL) or non-ASCII characters"
            )
        size += len(name) + len(value) + 4
        out.append((name, value.strip()))
    if size > MAX_BYTES:
        raise BadRequest(f"invalid request: `headers` are over {MAX_BYTES} bytes")
    return tuple(out)


def after_redirect(headers: Headers, old: Target, new: Target) -> Headers:
    """The caller's headers that still go to `new` after a redirect from `old`: all of them
    within one origin, all but `Authorization` on another scheme or port of the same host,
    none on another host (a credential may hide in any header)."""
    if new.host != old.host:
        return ()
    if (new.scheme, new.port) != (old.scheme, old.port):
        return tuple((n, v) for n, v in headers if n.lower() != "authorization")
    return headers
