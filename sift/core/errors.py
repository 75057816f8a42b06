"""The errors sift answers with, mapped once to HTTP at the web boundary.

    SiftError (500, "internal error")
    ├── BadRequest       400  malformed JSON, bad field, bad pages range, bad grep/jq
    ├── Unauthorized     401  no or unknown token
    ├── Blocked          403  the guard refused a URL or redirect hop ("blocked: …")
    ├── NotFound         404  unknown batch job, or another caller's
    ├── Conflict         409  cancelling a finished batch job
    ├── TooLarge         413  request body or upstream body over its cap
    ├── Unsupported      415  content type sift cannot read (hint "browser")
    ├── Unprocessable    422  PDF without text / encrypted / unreadable / timed out; batch refused
    │   └── NotContent   422  the site served a bot check, a consent or login wall, a soft 404
    ├── Busy             429  a gate or a caller's job slot (hint "retry", Retry-After)
    ├── NoBrowser        501  rendering asked for, but no browser installed or rendering off
    ├── UpstreamError    502  connection refused, TLS, upstream HTTP error (upstream_status)
    ├── Unavailable      503  pdf workers busy, pdf child crashed, batch disabled (Retry-After)
    │   └── StoreUnavailable 503  a database error: disk full, locked, read-only, corrupt
    ├── UpstreamTimeout  504  the upstream did not answer within the deadline
    ├── OutOfTime        504  sift's own request deadline passed, nothing ready
    └── ClientGone       499  the client disconnected first (logged; nobody reads the answer)

Every error carries one line a person can act on, an optional `hint`, and optional
`retry_after` seconds. Expected errors never produce tracebacks; anything else is a bug.
"""

from __future__ import annotations

RETRY_AFTER = 5  # seconds: `Retry-After` of a `retry` hint that names no other wait


class SiftError(Exception):
    """Base of every error sift answers with; `status` is the HTTP status."""

    status = 500
    outcome = "error"

    def __init__(
        self,
        message: str = "internal error",
        *,
        hint: str | None = None,
        retry_after: int | None = None,
        upstream_status: int | None = None,
    ) -> None:
        super().__init__(message)
        self.message = message
        self.hint = hint
        # every `retry` hint says when (DESIGN §2): where the raiser names no wait, a short one
        self.retry_after = RETRY_AFTER if hint == "retry" and retry_after is None else retry_after
        self.upstream_status = upstream_status

    def to_body(self) -> dict[str, object]:
        body: dict[str, object] = {"success": False, "error": self.message}
        if self.hint:
            body["hint"] = self.hint
        if self.upstream_status is not None:
            body["upstream_status"] = self.upstream_status
        return body


class BadRequest(SiftError):
    status = 400
    outcome = "bad_request"


class Unauthorized(SiftError):
    status = 401
    outcome = "unauthorized"

    def __init__(self, message: str = "unauthorized") -> None:
        super().__init__(message)


class Blocked(SiftError):
    status = 403
    outcome = "blocked"

    def __init__(self, reason: str, allow: str | None = None) -> None:
        super().__init__(f"blocked: {reason}")
        self.reason = reason
        # The setting that would allow it, for the operator's log only: in the answer it would
        # tell whoever probes for internal services what to look for.
        self.allow = allow


class NotFound(SiftError):
    status = 404
    outcome = "not_found"


class Conflict(SiftError):
    status = 409
    outcome = "conflict"


class TooLarge(SiftError):
    status = 413
    outcome = "too_large"


class Unsupported(SiftError):
    status = 415
    outcome = "unsupported"

    # A browser downloads these rather than showing them: no hint that one would help.
    BLOBS = frozenset({"application/octet-stream", "binary/octet-stream"})

    def __init__(self, content_type: str) -> None:
        hint = None if content_type.lower() in self.BLOBS else "browser"
        super().__init__(f"unsupported content type {content_type or '(none)'}", hint=hint)


class Unprocessable(SiftError):
    status = 422
    outcome = "unprocessable"


class NotContent(Unprocessable):
    """The site answered with a page that stands in for the content (sift.clean.classify).
    A rate-limit page (hint `retry`) says when to ask again, as every `retry` does."""

    outcome = "not_content"
    RATE_LIMIT_WAIT = 60  # seconds: the site asked to be left alone for a while

    def __init__(self, page: str, served: str | None, hint: str | None, status: int) -> None:
        what = served or f"a {page} page"
        upstream = f" (upstream {status})" if status != 200 else ""
        super().__init__(
            f"the site served {what}{upstream}, not the page's content",
            hint=hint,
            retry_after=self.RATE_LIMIT_WAIT if hint == "retry" else None,
        )
        self.page = page


class Busy(SiftError):
    status = 429
    outcome = "busy"

    def __init__(self, message: str = "busy", retry_after: int = 2) -> None:
        super().__init__(message, hint="retry", retry_after=retry_after)


class CallerBusy(Busy):
    """Busy with the caller's own work (its one PDF job, its one render at a time): what to
    wait for is the caller's other request, not the server (a read's sources take turns)."""


class NoBrowser(SiftError):
    status = 501
    outcome = "no_browser"


class UpstreamError(SiftError):
    status = 502
    outcome = "error"


class Unavailable(SiftError):
    status = 503
    outcome = "unavailable"


class StoreUnavailable(Unavailable):
    """A database error, answered instead of crashing: `kind` is a key of
    `sift.store.protocol.REASONS`."""

    outcome = "store_unavailable"

    def __init__(self, kind: str, reason: str) -> None:
        super().__init__(f"store unavailable: {reason}", hint="retry", retry_after=5)
        self.kind = kind
        self.reason = reason


class UpstreamTimeout(SiftError):
    status = 504
    outcome = "timeout"


class OutOfTime(SiftError):
    """The request's own deadline passed with nothing ready. Not the upstream's timeout. It
    promises that the work goes on into the cache only where it really does (`goes_on`);
    else it says that the work stopped."""

    status = 504
    outcome = "pending"

    def __init__(self, budget: float, goes_on: bool = False) -> None:
        said = (
            f"sift is still reading this document after {budget:.0f} s (its own request "
            "deadline; the upstream did not time out). It goes on in the background and will "
            "be cached: ask again in a minute for the rest."
            if goes_on
            else f"sift could not finish this answer within {budget:.0f} s (its own request "
            "deadline; the upstream did not time out). Its work was stopped: nothing goes on "
            "in the background."
        )
        super().__init__(said, hint="retry", retry_after=30)


class ClientGone(SiftError):
    status = 499
    outcome = "gone"

    def __init__(self) -> None:
        super().__init__("the client went away before the answer")


def too_large(cap_bytes: int) -> TooLarge:
    """The 413 for an upstream body past its cap, in whole megabytes as users read them (a
    cap under one, as configured: `0.02 MB`, never `0 MB`)."""
    mb = cap_bytes // 1_000_000 if cap_bytes >= 1_000_000 else f"{cap_bytes / 1_000_000:.3g}"
    return TooLarge(f"too large (>{mb} MB decompressed)")


class JobsCorrupt(RuntimeError):
    """The jobs database cannot be read: start-up stops with this message (exit status 2)."""

    def __init__(self, path: object) -> None:
        super().__init__(
            f"sift: the batch jobs database {path} is corrupt; move it aside to start with "
            "no jobs, or restore it from a backup"
        )


class SchemaTooNew(RuntimeError):
    """The PostgreSQL store was upgraded by a newer sift: start-up stops with this message
    (exit status 2)."""

    def __init__(self, version: int, mine: int) -> None:
        super().__init__(
            f"sift: the PostgreSQL store has schema version {version}, newer than this sift "
            f"({mine}); upgrade sift, or point [store] url at another database"
        )
