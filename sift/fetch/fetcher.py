"""Fetcher: pycurl transfers driven step by step, guarded at every hop and every connect.

A plain class (no thread of its own) so that it can be tested directly; FetchActor calls
`step()` while transfers are active; what one transfer does with its headers and body is in
`sift.fetch.transfer`. The shape follows Tornado's `curl_httpclient`: one `CurlMulti` driven
through its socket and timer callbacks, a fixed pool of `Curl` handles on a free list,
`reset()` before reuse, HTTP(S) only, no signals, errors delivered as answers and never
raised from the pump. What sift adds:

- The guard, with curl pinned to what it checked. Each hop is pre-checked, then its name is
  resolved and every address checked in a small shared thread pool (the caller's thread
  never waits for DNS), and curl is handed exactly those addresses and checked again at
  every connect (`sift.fetch.hop`). Redirects are followed here, hop by hop.
- Limits. Bodies are counted decompressed in the write callback, which aborts past the cap.
  curl's own timeout is the PDF deadline; the page deadline is enforced in `step()` unless the
  response has been recognised as a PDF. Requests waiting for a handle keep their deadline.
"""

from __future__ import annotations

import collections
import contextlib
import functools
import select
import socket
import threading
import time
from collections.abc import Callable
from concurrent.futures import Executor, Future, ThreadPoolExecutor
from typing import Any
from urllib.parse import urljoin

import pycurl

from sift.core.answer import Answer
from sift.core.config import FetchConfig
from sift.core.errors import BadRequest, SiftError, UpstreamError
from sift.fetch import payment
from sift.fetch.guard import Guard
from sift.fetch.headers import Headers, after_redirect
from sift.fetch.hop import ConnectCheck, setup
from sift.fetch.identity import Signer
from sift.fetch.transfer import FetchResult, Transfer, timed_out


@functools.cache
def resolve_pool() -> ThreadPoolExecutor:
    """The small thread pool shared by every Fetcher for blocking name resolution."""
    return ThreadPoolExecutor(4, thread_name_prefix="sift-resolve")


class Fetcher:
    """Fetches URLs with a fixed pool of curl handles; call `step()` while `busy`.

    Args:
        cfg: limits and the user agent (`[fetch]`).
        guard: the URL and address rules.
        pool: where names are resolved; defaults to the shared `resolve_pool()`.
        clock: monotonic seconds (tests may pass their own).
        signer: sift's identity (`[identity]`): every hop signed, or None.
    """

    def __init__(
        self,
        cfg: FetchConfig,
        guard: Guard,
        *,
        pool: Executor | None = None,
        clock: Callable[[], float] = time.monotonic,
        signer: Signer | None = None,
    ) -> None:
        self.cfg = cfg
        self.guard = guard
        self.signer = signer
        self._pool = pool or resolve_pool()
        self._clock = clock
        self._multi = pycurl.CurlMulti()
        self._multi.setopt(pycurl.M_SOCKETFUNCTION, self._on_socket)
        self._multi.setopt(pycurl.M_TIMERFUNCTION, self._on_timer)
        self._handles = [pycurl.Curl() for _ in range(cfg.handles)]
        self._free = list(self._handles)
        self._fds: dict[int, int] = {}  # fd → curl POLL_* interest
        self._timer_at: float | None = None
        self._transfers: set[Transfer] = set()
        self._waiting: collections.deque[Transfer] = collections.deque()
        self._active: dict[pycurl.Curl, Transfer] = {}
        self._connect = ConnectCheck(guard)  # the guard at every connect
        self._wake_r, self._wake_w = socket.socketpair()
        self._wake_r.setblocking(False)
        self._wake_w.setblocking(False)
        self._wake_lock = threading.Lock()  # pool threads write while close() may run
        self._closed = False

    @property
    def busy(self) -> bool:
        """True while any transfer is resolving, waiting for a handle or running."""
        return bool(self._transfers)

    def stats(self) -> dict[str, int]:
        resolving = sum(1 for t in self._transfers if t.state == "resolving")
        return {"active": len(self._active), "queued": len(self._waiting), "resolving": resolving}

    def submit(
        self,
        url: str,
        reply: Answer,
        *,
        etag: str | None = None,
        last_modified: str | None = None,
        timeout: float | None = None,
        headers: Headers = (),
    ) -> Transfer | None:
        """Start fetching `url`; `reply` is answered once with a FetchResult or a SiftError.

        `timeout` (seconds) can only lower the configured deadlines. `headers` (the caller's,
        already checked) go with the first hop and follow `after_redirect`. Returns the transfer, or
        None when the URL was refused at once (the reply has then been answered).
        """
        try:
            target = self.guard.precheck(url)
        except SiftError as exc:
            reply.fail(exc)
            return None
        page, pdf = float(self.cfg.timeout), float(self.cfg.pdf_timeout)
        if timeout is not None:
            page, pdf = min(page, timeout), min(pdf, timeout)
        cfg = self.cfg
        caps = (page, pdf, cfg.max_body, cfg.pdf_max_body)
        t = Transfer(url, reply, target, etag, last_modified, self._clock(), *caps, sent=headers)
        t.office_max_body = cfg.office_max_body
        self._transfers.add(t)
        self._begin_hop(t)
        return t

    def step(self, max_wait: float = 0.02) -> None:
        """Do what is ready, waiting at most `max_wait` seconds for sockets or the DNS pool."""
        self._harvest()
        self._expire()
        self._start_waiting()
        wait = max_wait if self._transfers else 0.0
        if self._timer_at is not None:
            wait = min(wait, max(0.0, self._timer_at - self._clock()))
        poller = select.poll()
        poller.register(self._wake_r, select.POLLIN)
        for fd, what in self._fds.items():
            mask = select.POLLIN if what & pycurl.POLL_IN else 0
            mask |= select.POLLOUT if what & pycurl.POLL_OUT else 0
            poller.register(fd, mask)
        for fd, events in poller.poll(int(wait * 1000 + 0.999)):
            if fd == self._wake_r.fileno():
                with contextlib.suppress(OSError):
                    self._wake_r.recv(4096)
                continue
            action = 0
            if events & (select.POLLIN | select.POLLHUP):
                action |= pycurl.CSELECT_IN
            if events & select.POLLOUT:
                action |= pycurl.CSELECT_OUT
            if events & (select.POLLERR | select.POLLNVAL):
                action |= pycurl.CSELECT_ERR
            self._socket_action(fd, action)
        if self._timer_at is not None and self._clock() >= self._timer_at:
            self._timer_at = None
            self._socket_action(pycurl.SOCKET_TIMEOUT, 0)
        self._collect()
        self._harvest()
        self._start_waiting()

    def close(self, exc: SiftError) -> None:
        """Fail every transfer still held with `exc` and close the handles. Idempotent."""
        if self._closed:
            return
        self._closed = True
        for t in list(self._transfers):
            self._settle(t, error=exc)
        for curl in self._handles:
            curl.close()
        self._multi.close()
        self._wake_r.close()
        with self._wake_lock:
            self._wake_w.close()

    # -- hops -------------------------------------------------------------------------------

    def _begin_hop(self, t: Transfer) -> None:
        if t.target.literal:  # checked by the pre-check; nothing to resolve
            t.state = "waiting"
            self._waiting.append(t)
            return
        t.state = "resolving"
        t.resolving = self._pool.submit(self.guard.resolve_and_check, t.target)
        t.resolving.add_done_callback(self._wake)

    def _harvest(self) -> None:
        """Move transfers whose names have resolved on to the handle queue (or fail them)."""
        for t in [t for t in self._transfers if t.state == "resolving"]:
            assert t.resolving is not None
            if not t.resolving.done():
                continue
            try:
                t.addresses = t.resolving.result()
                if not t.addresses:
                    raise UpstreamError(f"could not resolve host {t.target.host}")
            except SiftError as exc:
                self._settle(t, error=exc)
                continue
            t.resolving = None
            t.state = "waiting"
            self._waiting.append(t)

    def _expire(self) -> None:
        now = self._clock()
        for t in list(self._transfers):
            deadline, limit = t.deadline()
            if now >= deadline:
                self._settle(t, error=timed_out(limit))

    def _start_waiting(self) -> None:
        while self._waiting and self._free:
            t = self._waiting.popleft()
            now = self._clock()
            deadline, limit = t.deadline()
            if now >= deadline:
                self._settle(t, error=timed_out(limit))
                continue
            curl = self._free.pop()
            remaining = t.pdf_deadline - now  # curl's limit: the longest
            setup(curl, t, remaining, self.cfg.user_agent, self._connect, self.signer)
            t.curl, t.state = curl, "active"
            self._active[curl] = t
            self._multi.add_handle(curl)

    def _finished(self, curl: pycurl.Curl, errno: int, message: str) -> None:
        t = self._active.get(curl)
        if t is None:
            return
        status = int(curl.getinfo(pycurl.RESPONSE_CODE))
        self._release(t)
        if errno or t.error is not None:
            self._settle(t, error=t.curl_error(errno, message))
        elif t.location is not None:
            self._redirect(t, t.location)
        elif (priced := payment.refusal(status, t.headers, t.target.host)) is not None:
            self._settle(t, error=priced)  # a price is a refusal, never a page (no body)
        else:
            self._settle(t, result=t.result(status, self._clock()))

    def _redirect(self, t: Transfer, location: str) -> None:
        t.redirects += 1
        if t.redirects > self.cfg.max_redirects:
            self._settle(t, error=UpstreamError("too many redirects"))
            return
        try:
            target = self.guard.precheck(urljoin(t.target.url, location))
        except ValueError as exc:  # no URL at all (`http://[::1`): urljoin itself refuses it
            self._settle(t, error=UpstreamError(f"upstream sent a bad redirect: {exc}"))
            return
        except BadRequest as exc:
            err = UpstreamError(f"upstream sent a bad redirect: {exc.message}")
            self._settle(t, error=err)
            return
        except SiftError as exc:
            self._settle(t, error=exc)
            return
        t.sent = after_redirect(t.sent, t.target, target)
        t.new_hop(target)
        self._begin_hop(t)

    def _settle(
        self, t: Transfer, *, result: FetchResult | None = None, error: SiftError | None = None
    ) -> None:
        """Answer the transfer's reply exactly once and forget it."""
        if t.state == "done":
            return
        if t.curl is not None:
            self._release(t)
        if t.resolving is not None:
            t.resolving.cancel()
            t.resolving = None
        if t.state == "waiting":
            with contextlib.suppress(ValueError):
                self._waiting.remove(t)
        t.state = "done"
        self._transfers.discard(t)
        if error is not None:
            t.reply.fail(error)
        else:
            t.reply.ok(result)

    def _release(self, t: Transfer) -> None:
        curl, t.curl = t.curl, None
        if curl is None:
            return
        self._active.pop(curl, None)
        self._multi.remove_handle(curl)
        curl.reset()  # drops the callbacks that hold the transfer
        self._free.append(curl)

    # -- multi callbacks (run inside socket_action on the caller's thread; must not raise) -----

    def _on_socket(self, what: int, fd: int, multi: Any, data: Any) -> None:
        if what == pycurl.POLL_REMOVE:
            self._fds.pop(fd, None)
        else:
            self._fds[fd] = what

    def _on_timer(self, msecs: int) -> None:
        self._timer_at = None if msecs < 0 else self._clock() + msecs / 1000

    # -- multi plumbing ---------------------------------------------------------------------

    def _socket_action(self, fd: int, action: int) -> None:
        try:
            while True:
                try:
                    ret, _running = self._multi.socket_action(fd, action)
                except pycurl.error as exc:
                    ret = exc.args[0]
                if ret != pycurl.E_CALL_MULTI_PERFORM:
                    break
        finally:
            self._connect.close_opened()

    def _collect(self) -> None:
        while True:
            queued, ok, failed = self._multi.info_read()
            for curl in ok:
                self._finished(curl, 0, "")
            for curl, errno, message in failed:
                self._finished(curl, errno, message)
            if not queued:
                break

    def _wake(self, _future: Future[list[str]]) -> None:
        """Called on a pool thread when a name has resolved: cut the current poll short."""
        with self._wake_lock, contextlib.suppress(OSError):
            self._wake_w.send(b"x")
