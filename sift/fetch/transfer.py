"""One fetch as curl reports it: headers, body under its cap, PDF recognition, the answer.

`Transfer` is the state of one fetch across its redirect hops. curl's header and write
callbacks feed it; it decides when a response is a PDF (which raises the body cap and the
deadline), aborts the transfer past the cap, and turns what curl reports into a `FetchResult`
or a `SiftError`. No curl handle or guard is touched here: that is the Fetcher's job.
"""

from __future__ import annotations

import contextlib
import http
import logging
from concurrent.futures import Future
from dataclasses import dataclass, field

import pycurl

from sift.core.answer import Answer
from sift.core.errors import Blocked, SiftError, UpstreamError, UpstreamTimeout, too_large
from sift.fetch.guard import Target

log = logging.getLogger("sift.fetch")

REDIRECT_STATUSES = frozenset({301, 302, 303, 307, 308})
PDF_TYPES = frozenset({"application/pdf", "application/x-pdf"})
SNIFF_TYPES = frozenset({"", "application/octet-stream", "binary/octet-stream"})
PDF_MAGIC = b"%PDF-"
SNIFF_BYTES = 1024
# Office files and e-books (`sift.clean.formats` tells which): by type, or a zip's or RTF's
# first bytes where the type says nothing.
OFFICE_PREFIXES = (
    "application/vnd.openxmlformats-officedocument.",
    "application/vnd.oasis.opendocument.",
)
OFFICE_TYPES = frozenset(
    {"application/epub+zip", "application/rtf", "text/rtf", "text/csv", "text/tab-separated-values"}
    | {"application/zip", "application/x-zip-compressed"}
)
OFFICE_MAGIC = (b"PK\x03\x04", b"{\\rtf")

_TLS_ERRORS = frozenset({35, 53, 54, 58, 59, 60, 64, 66, 77, 80, 82, 83, 90, 91, 98})
_PROTOCOL_ERRORS = frozenset({8, 16, 92})
_E_TOO_LARGE = 100  # CURLE_TOO_LARGE (curl 8.6+): a header over curl's limit; no message
_REFUSED = frozenset({pycurl.E_COULDNT_CONNECT, pycurl.E_ABORTED_BY_CALLBACK})
_JOINED = frozenset({"x-robots-tag", "vary"})  # headers a response may repeat


def _header_text(raw: bytes) -> str:
    """A header line as text: UTF-8 as servers send non-ASCII (a `Location` to an
    internationalised name or path), else Latin-1, which decodes any bytes."""
    try:
        return raw.decode("utf-8")
    except UnicodeDecodeError:
        return raw.decode("latin-1")


@dataclass(frozen=True)
class FetchResult:
    """A response, whatever its status: an upstream 404 or a 304 is a result, not an error."""

    url: str  # as asked
    final_url: str  # after redirects, normalised
    status: int
    reason: str
    content_type: str  # the raw header value, "" when absent
    etag: str | None
    last_modified: str | None
    body: bytes
    is_pdf: bool
    redirects: int
    elapsed: float
    x_robots_tag: str | None = None  # what the site says about automated use of this body
    vary: str = ""  # the response's `Vary`: whether it chose its type by `Accept`


def media_type(content_type: str) -> str:
    """`Text/HTML; charset=utf-8` → `text/html`."""
    return content_type.split(";", 1)[0].strip().lower()


def timed_out(limit: float) -> UpstreamTimeout:
    return UpstreamTimeout(f"upstream timed out after {limit:g} s")


@dataclass(eq=False)
class Transfer:
    """One fetch across its redirect hops; `received`/`offered` count decompressed bytes
    (kept, and handed over by curl)."""

    url: str
    reply: Answer
    target: Target
    etag: str | None
    last_modified: str | None
    started: float
    page_limit: float  # seconds from `started`
    pdf_limit: float
    max_body: int
    pdf_max_body: int
    sent: tuple[tuple[str, str], ...] = field(default=(), repr=False)  # the caller's headers
    office_max_body: int = 0  # 0: `max_body`
    redirects: int = 0
    state: str = "new"  # resolving, waiting (for a handle), active, done
    resolving: Future[list[str]] | None = None
    addresses: list[str] = field(default_factory=list)  # the checked answer curl is pinned to
    curl: pycurl.Curl | None = None
    # per hop
    status_line: str = ""
    headers: dict[str, str] = field(default_factory=dict)
    chunks: list[bytes] = field(default_factory=list)
    received: int = 0
    offered: int = 0
    is_pdf: bool | None = False  # None: undecided until the first bytes are in
    is_office: bool = False  # an office file or e-book: its own cap, the PDF deadline
    discard: bool = False  # a redirect's body
    error: SiftError | None = None  # set by a callback that aborted the transfer
    blocked: Blocked | None = None  # a connect the guard refused

    @property
    def pdf_deadline(self) -> float:
        return self.started + self.pdf_limit

    def deadline(self) -> tuple[float, float]:
        """The deadline that applies now (the PDF one once recognised) and its length."""
        limit = self.pdf_limit if self.is_pdf or self.is_office else self.page_limit
        return self.started + limit, limit

    def new_hop(self, target: Target) -> None:
        self.target, self.addresses = target, []
        self.status_line, self.headers, self.chunks = "", {}, []
        self.received = self.offered = 0
        self.is_pdf, self.discard, self.error, self.blocked = False, False, None, None
        self.is_office = False

    @property
    def location(self) -> str | None:
        """Where a redirect response points, or None if this is not one."""
        return self.headers.get("location") if self.status in REDIRECT_STATUSES else None

    @property
    def status(self) -> int:
        parts = self.status_line.split(" ", 2)
        return int(parts[1]) if len(parts) > 1 and parts[1].isdigit() else 0

    # -- curl callbacks (inside curl; they must not raise) ----------------------------------

    def on_header(self, raw: bytes) -> None:
        try:
            line = _header_text(raw).rstrip("\r\n")
            if line.startswith("HTTP/"):  # a new response (after 1xx): start over
                self.status_line, self.headers, self.discard, self.is_pdf = line, {}, False, False
            elif not line:
                self._headers_done()
            else:
                name, sep, value = line.partition(":")
                if sep:
                    key, value = name.strip().lower(), value.strip()
                    if key in _JOINED and key in self.headers:  # said twice: both count
                        value = f"{self.headers[key]}, {value}"
                    self.headers[key] = value
        except Exception:
            log.exception("header callback failed")
            self.error = SiftError()

    def _headers_done(self) -> None:
        if self.location is not None:
            self.discard = True
            return
        ctype = media_type(self.headers.get("content-type", ""))
        self.is_pdf = True if ctype in PDF_TYPES else None if ctype in SNIFF_TYPES else False
        self.is_office = ctype in OFFICE_TYPES or ctype.startswith(OFFICE_PREFIXES)

    def on_write(self, chunk: bytes) -> int | None:
        """Keep `chunk`; 0 (abort) past the cap that applies."""
        try:
            return self._write(chunk)
        except Exception:
            log.exception("write callback failed")
            self.error = SiftError()
            return 0

    def _write(self, chunk: bytes) -> int | None:
        self.offered += len(chunk)
        if self.discard:
            if self.offered > self.max_body:
                self.error = too_large(self.max_body)
                return 0
            return None
        cap = self.pdf_max_body if self.is_pdf else self.max_body
        if self.is_office or (self.is_pdf is None and self._office_start(chunk)):
            self.is_office, cap = True, self.office_max_body or self.max_body
        if self.received + len(chunk) > cap:
            self.error = too_large(cap)
            return 0
        self.chunks.append(chunk)
        self.received += len(chunk)
        if self.is_pdf is None:  # empty or octet-stream type: look at the first bytes
            head = b"".join(self.chunks)[:SNIFF_BYTES]
            if PDF_MAGIC in head:
                self.is_pdf = True
            elif self.received >= SNIFF_BYTES:
                self.is_pdf = False
        return None

    def _office_start(self, chunk: bytes) -> bool:
        """An untyped body that starts as a zip or RTF does (an office file, maybe)."""
        head = self.chunks[0][:8] if self.chunks else chunk[:8]
        return head.startswith(OFFICE_MAGIC)

    # -- outcomes ---------------------------------------------------------------------------

    def result(self, status: int, now: float) -> FetchResult:
        body = b"".join(self.chunks)
        if self.is_pdf is None:
            self.is_pdf = PDF_MAGIC in body[:SNIFF_BYTES]
        parts = self.status_line.split(" ", 2)
        reason = parts[2].strip() if len(parts) > 2 else ""
        if not reason:  # HTTP/2 has none
            with contextlib.suppress(ValueError):
                reason = http.HTTPStatus(status).phrase
        return FetchResult(
            url=self.url,
            final_url=self.target.url,
            status=status,
            reason=reason,
            content_type=self.headers.get("content-type", ""),
            etag=self.headers.get("etag"),
            last_modified=self.headers.get("last-modified"),
            body=body,
            is_pdf=bool(self.is_pdf),
            redirects=self.redirects,
            elapsed=now - self.started,
            x_robots_tag=self.headers.get("x-robots-tag"),
            vary=self.headers.get("vary", ""),
        )

    def curl_error(self, errno: int, message: str) -> SiftError:
        """The error for a transfer curl ended with `errno` (a guard refusal comes first)."""
        if self.error is not None:
            return self.error
        if self.blocked is not None and errno in _REFUSED:
            return self.blocked
        if errno == pycurl.E_OPERATION_TIMEDOUT:
            return timed_out(self.deadline()[1])
        if errno == pycurl.E_COULDNT_RESOLVE_HOST:
            return UpstreamError(f"could not resolve host {self.target.host}")
        if errno == pycurl.E_COULDNT_CONNECT:
            return UpstreamError("upstream connection refused")
        if errno in _TLS_ERRORS:
            return UpstreamError(f"upstream TLS error: {message}")
        if errno == pycurl.E_GOT_NOTHING:
            return UpstreamError("upstream closed the connection without answering")
        if errno in (pycurl.E_SEND_ERROR, pycurl.E_RECV_ERROR):
            return UpstreamError("upstream connection reset")
        if errno == pycurl.E_PARTIAL_FILE:
            return UpstreamError("upstream closed the connection before the body was complete")
        if errno == pycurl.E_BAD_CONTENT_ENCODING:
            return UpstreamError("upstream sent a body that does not decompress")
        if errno in _PROTOCOL_ERRORS:
            return UpstreamError(f"upstream protocol error: {message}")
        if errno == _E_TOO_LARGE:
            return UpstreamError("upstream sent a header or response line too large to read")
        return UpstreamError(f"upstream error: {message or f'curl error {errno}'}")
