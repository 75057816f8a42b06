"""sift's errors as the Firecrawl SDK reads them: its exception is chosen by the status, and
by a `code` before that. A 403 reads "Website Not Supported" there, so a guard refusal is a 400
(the request named a URL sift will not fetch: `BadRequestError`, its message kept); a name
that does not resolve and a TLS failure carry Firecrawl's codes (`DNSResolutionError`,
`TLSError`)."""

from __future__ import annotations

from sift.core.errors import Blocked, SiftError

CODES = (
    ("could not resolve host", "SCRAPE_DNS_RESOLUTION_ERROR"),
    ("upstream TLS error", "SCRAPE_SSL_ERROR"),
)


class SdkError(SiftError):
    """An error re-read for the SDK: the same message and hint, its own status and `code`."""

    def __init__(self, err: SiftError, status: int, code: str | None) -> None:
        super().__init__(err.message, hint=err.hint, retry_after=err.retry_after)
        self.status = status
        self.outcome = err.outcome
        self.code = code
        self.payment_required = getattr(err, "payment_required", None)  # a site's price

    def to_body(self) -> dict[str, object]:
        body = super().to_body()
        if self.code is not None:
            body["code"] = self.code
        if self.payment_required is not None:
            body["payment_required"] = self.payment_required
        return body


def for_sdk(err: SiftError) -> SiftError:
    """`err` as the SDK should read it (itself when nothing changes)."""
    if isinstance(err, Blocked):
        return SdkError(err, 400, None)
    for start, code in CODES:
        if err.message.startswith(start):
            return SdkError(err, err.status, code)
    return err
