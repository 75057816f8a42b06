"""BaseHandler: authentication, body caps, the one error shape, and per-request accounting.

`initialize` stores dependencies only; `prepare` authenticates and enforces the body cap before
the body is read (bodies are streamed, so an oversized one is refused without buffering it);
`write_error` renders every error in one shape; `on_finish` feeds the log line and metrics.
"""

from __future__ import annotations

import asyncio
import logging
import re
import time
from typing import Any

import msgspec
import tornado.web

from sift.core import metrics
from sift.core.callers import Caller, Callers
from sift.core.errors import BadRequest, NotFound, SiftError, TooLarge, Unauthorized
from sift.service.document import Trace
from sift.service.params import TOO_DEEP
from sift.service.parts.asker import ASKER, Asker
from sift.service.services import Services
from sift.web.hosts import cors_headers

log = logging.getLogger("sift.web")

JSON_CAP = 64 * 1024
CHUNKED_READ_CAP = 1 << 40  # Tornado's cap for chunked bodies; the handler's own cap applies


class BaseHandler(tornado.web.RequestHandler):
    route = "other"
    body_cap = JSON_CAP
    public = False  # no token needed

    def initialize(self, svc: Services, callers: Callers) -> None:
        self.svc = svc
        self.callers = callers
        self.caller: Caller | None = None
        self.trace = Trace()
        self.error: SiftError | None = None
        self.bug: str | None = None  # what went wrong in a 500, for the log line only
        self._chunks: list[bytes] = []
        self._size = 0
        self._started = time.monotonic()
        self.bytes_out = 0
        self.gone: asyncio.Future[None] = asyncio.get_running_loop().create_future()

    def set_default_headers(self) -> None:
        self.set_header("Content-Type", "application/json; charset=utf-8")
        self.set_header("Cache-Control", "no-store")
        hosts = self.application.settings.get("hosts")
        if hosts is not None:  # an origin the operator configured (the edge refused others)
            for name, value in cors_headers(hosts.cors(self.request.headers.get("Origin"))).items():
                self.set_header(name, value)

    def prepare(self) -> None:
        self.svc.inflight += 1
        self._counted = True  # until the answer is sent or the client has gone
        if not self.public:
            self.caller = self.callers.authenticate(self.request.headers.get("Authorization"))
            if self.caller is None:
                raise Unauthorized()
            ASKER.set(Asker(self.caller.pool_name, None))  # this request's cleaning is its caller's
        length = self.request.headers.get("Content-Length")
        if length is not None and length.isdigit() and int(length) > self.body_cap:
            raise TooLarge(f"request body over {self.body_cap // 1024} KiB")
        if self.request.method in ("POST", "PUT"):
            # A chunked body has no length to refuse here, and Tornado would answer a chunk
            # past its cap with a bare 400: `data_received` enforces the cap instead.
            cap = self.body_cap + 1 if length is not None else CHUNKED_READ_CAP
            self.request.connection.set_max_body_size(cap)  # type: ignore[union-attr]

    def data_received(self, chunk: bytes) -> None:
        """Collects a streamed body; past the cap (a chunked body has no Content-Length to
        refuse up front) the 413 is answered at once and the rest is dropped."""
        if self._finished:
            return
        self._size += len(chunk)
        if self._size > self.body_cap:
            self._handle_request_exception(
                TooLarge(f"request body over {self.body_cap // 1024} KiB")
            )
            return
        self._chunks.append(chunk)

    @property
    def body(self) -> bytes:
        return b"".join(self._chunks) or self.request.body

    def json_body(self) -> dict[str, Any]:
        try:
            data = msgspec.json.decode(self.body)
        except msgspec.DecodeError as exc:
            raise BadRequest(f"malformed JSON: {exc}") from None
        except RecursionError:
            raise BadRequest(TOO_DEEP) from None
        if not isinstance(data, dict):
            raise BadRequest("malformed JSON: the body must be a JSON object")
        return data

    def send_json(self, body: Any, status: int = 200) -> None:
        self.send_encoded(msgspec.json.encode(body), status)

    def send_encoded(self, data: bytes, status: int = 200) -> None:
        """Answer JSON already encoded."""
        self.set_status(status)
        self.bytes_out = len(data)
        self.finish(data)

    def _handle_request_exception(self, e: BaseException) -> None:
        if isinstance(e, SiftError):
            self.error = e
            if self._finished:
                return
            self.send_error(e.status, exc_info=(type(e), e, e.__traceback__))
            return
        self.bug = f"{type(e).__name__}: {e}"[:500]
        super()._handle_request_exception(e)  # a bug: logged with its traceback, 500

    def write_error(self, status_code: int, **kwargs: Any) -> None:
        exc = kwargs.get("exc_info", (None, None, None))[1]
        if isinstance(exc, SiftError):
            err = exc
        elif status_code == 405:
            err = BadRequest(f"method {self.request.method} not allowed here; use {self.allow()}")
        elif status_code < 500:
            err = BadRequest(_query_said(exc) or self._reason or "bad request")
        else:
            err = SiftError()
        self.error = self.error or err
        if err.retry_after is not None:
            self.set_header("Retry-After", str(err.retry_after))
        if status_code == 405:
            self.set_header("Allow", self.allow())
        self.set_header("Content-Type", "application/json; charset=utf-8")
        data = msgspec.json.encode(err.to_body())
        self.bytes_out = len(data)
        self.finish(data)

    def allow(self) -> str:
        """The methods this route has (a 405's `Allow`): the ones its handler defines."""
        base = tornado.web.RequestHandler
        return ", ".join(
            m
            for m in self.SUPPORTED_METHODS
            if getattr(type(self), m.lower(), None) is not getattr(base, m.lower(), None)
        )

    def on_connection_close(self) -> None:
        """The client went away: `gone` tells the pipeline (`pipeline.within`), and a client
        gone mid-body never reaches on_finish, so its in-flight slot is freed here."""
        if not self.gone.done():
            self.gone.set_result(None)
        super().on_connection_close()
        self._uncount()

    def _uncount(self) -> None:
        if getattr(self, "_counted", False):
            self._counted = False
            self.svc.inflight -= 1

    def on_finish(self) -> None:
        self._uncount()
        self.svc.held.answered()  # the store writes and the work held for the answer go now
        status = self.get_status()
        metrics.REQUESTS.labels(metrics.fold(self.route, metrics.ROUTES), str(status)).inc()
        metrics.REQUEST_SECONDS.labels(metrics.fold(self.route, metrics.ROUTES)).observe(
            time.monotonic() - self._started
        )


class NotFoundHandler(BaseHandler):
    """Unknown paths: the one error shape, no token needed to learn that a path is unknown."""

    public = True

    def prepare(self) -> None:
        raise NotFound("no such endpoint; see /v1/fetch, /v2/scrape, /v1/batch, /r/<url>")


def _query_said(exc: BaseException | None) -> str | None:
    """Tornado's refusal of a query argument, in sift's words (the value itself left out)."""
    if isinstance(exc, tornado.web.MissingArgumentError):
        return f"invalid request: `{exc.arg_name}` is required"
    said = exc.log_message if isinstance(exc, tornado.web.HTTPError) else None
    bad = re.match(r"Invalid unicode in (\w{1,40}): ", said or "")
    return f"invalid request: `{bad[1]}` is not valid UTF-8" if bad else None
