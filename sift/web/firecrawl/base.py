"""What every Firecrawl route shares: its handler base, and a document's data.

Errors are sift's one shape (`success` false, `error`, `hint` when there is one); sift's
upstream failures are 500 here, never 502: the SDK retries a 502 three times, repeating the
work. A document is `{"markdown", "metadata"}` as the SDK's strict model wants it.
"""

from __future__ import annotations

import re
from typing import Any

from sift.core.errors import OutOfTime, SiftError, UpstreamError
from sift.service.document import Result
from sift.web.base import BaseHandler
from sift.web.firecrawl.errors import for_sdk

_SCHEME = re.compile(r"^[A-Za-z][A-Za-z0-9+-]*://")
# What reads as a host to give a scheme: a dotted name or address, `localhost`, `[v6]`.
_HOST = re.compile(
    r"^(?:[^/?#:@\s]*\.[^/?#:@\s]*[^/?#:@\s.]|localhost|\[[0-9A-Fa-f:.]+\])(?:[:/?#]|$)"
)


def with_scheme(url: str) -> str:
    """A URL as users write it (`example.com/a`, `127.0.0.1:8080/x`), given `https://` as
    Firecrawl does; one with a scheme, or no host to speak of (`x`: refused as it is), as
    it is."""
    bare = url.strip()
    if _SCHEME.match(bare) or not _HOST.match(bare):
        return url
    return f"https://{bare}"


class FirecrawlHandler(BaseHandler):
    """Every Firecrawl route: sift's error shape, an upstream failure (502) answered as 500."""

    def write_error(self, status_code: int, **kwargs: Any) -> None:
        exc = kwargs.get("exc_info", (None, None, None))[1]
        if isinstance(exc, SiftError) and (sdk := for_sdk(exc)) is not exc:
            kwargs["exc_info"] = (type(sdk), sdk, None)
            self.set_status(sdk.status)
        if isinstance(exc, UpstreamError) or status_code == 502:
            self.set_status(500)
        super().write_error(self.get_status(), **kwargs)


class Versioned(FirecrawlHandler):
    """A route the SDKs call as /v2/… and /v1/…: its `version`, in its metrics label too."""

    def initialize(self, svc: Any, callers: Any, version: str = "v2") -> None:
        super().initialize(svc, callers)
        self.version = version
        self.route = f"/{version}{self.route.removeprefix('/v2')}"


def document(asked: str, result: Result) -> dict[str, Any]:
    """A scraped document as Firecrawl answers it: clean markdown and its metadata."""
    c, answer = result.doc.content, result.envelope
    metadata: dict[str, Any] = {
        "title": c.title,
        "sourceURL": asked,
        "url": c.final_url,
        "statusCode": int(result.doc.status),
        "contentType": c.content_type.split(";")[0].strip() or "application/octet-stream",
    }
    if answer.paged:  # an office file's parts count as its pages
        metadata["numPages"] = answer.paged.pages
    data: dict[str, Any] = {"markdown": answer.content, "metadata": metadata}
    if answer.warning:
        data["warning"] = answer.warning
    return data


def pending(asked: str, late: OutOfTime) -> dict[str, Any]:
    """A document with nothing ready in time: the work goes on and fills the cache. The SDK
    gets a note to ask again (a 202 in the metadata) instead of an error it would retry at once."""
    metadata = {"title": "", "sourceURL": asked, "url": asked, "statusCode": 202}
    return {"markdown": late.message, "metadata": metadata, "warning": late.message}
