"""Webhook posts of Firecrawl jobs, on the server's event loop.

A webhook URL is a URL sift fetches on the caller's behalf, so it is the guard's: checked up
front (with its name resolved, off the loop) and again at every connect — the client's
resolver is the guard's, and it connects only to the addresses the guard passed. No redirect
is followed. Each event is posted at most `[webhook] attempts` times, `backoff` apart and
doubling, each post within `timeout`; events wait in order per job, at most `pending` in all.
A post that fails for good is counted, and its job's status names it. The caller's headers go
on the posts only: never into a log line, a metric or an answer.

Events come from the batch runner (a target or a job written: `LISTENERS`, from its thread)
and from the handler that started the job (`started`); the job's webhook is read from its
stored spec, so a job that goes on after a restart goes on posting.
"""

from __future__ import annotations

import asyncio
import logging
import socket
import time
from collections import deque
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field
from typing import Any, TypeVar

import msgspec
from tornado.httpclient import HTTPRequest
from tornado.netutil import Resolver
from tornado.simple_httpclient import SimpleAsyncHTTPClient

from sift.batch import webhook
from sift.batch.webhook import Hook
from sift.core import metrics
from sift.core.config import WebhookConfig
from sift.core.errors import BadRequest, Blocked, SiftError, UpstreamError
from sift.core.lru import SizedLRU
from sift.core.types import BatchJob
from sift.fetch.guard import Guard
from sift.store.protocol import Store

log = logging.getLogger("sift.webhook")
T = TypeVar("T")
StoreCall = Callable[[Callable[[Store], Any]], Awaitable[Any]]
KEEP_NOTES = 1024  # jobs whose failed posts are remembered (their status names them)
JOB_KEEP = 3600.0  # seconds an ended job's row is read back for its last event
ENDED = {"done": "completed", "partial": "completed", "failed": "failed"}
RETRY = frozenset({408, 425, 429})  # of the 4xx answers, those worth another post


class _GuardedResolver(Resolver):
    """Names and addresses through the guard, off the loop: the client connects only to
    addresses the guard passed just before."""

    def initialize(self, guard: Guard) -> None:
        self.guard = guard

    async def resolve(
        self, host: str, port: int, family: socket.AddressFamily = socket.AF_UNSPEC
    ) -> list[tuple[int, Any]]:
        target = self.guard.precheck(f"http://{f'[{host}]' if ':' in host else host}:{port}/")
        loop = asyncio.get_running_loop()
        ips = await loop.run_in_executor(None, self.guard.resolve_and_check, target)
        return [(socket.AF_INET6 if ":" in ip else socket.AF_INET, (ip, port)) for ip in ips]


@dataclass
class _Job:
    """One job's deliveries: its webhook (None: it has none) and the events waiting, in order."""

    kind: str = ""
    hook: Hook | None = None
    known: bool = False  # its webhook has been read (from the handler or the store)
    queue: deque[Callable[[], Awaitable[bytes | None]]] = field(default_factory=deque)
    task: asyncio.Task[None] | None = None
    ended: bool = False  # its last event is in the queue: forgotten once posted


@dataclass
class _Failures:
    count: int = 0
    last: str = ""


class Webhooks:
    """The posts of every job this replica runs."""

    def __init__(
        self,
        cfg: WebhookConfig,
        guard: Guard,
        store: StoreCall,
        loop: Callable[[], asyncio.AbstractEventLoop | None],
        user_agent: str,
    ) -> None:
        self.cfg = cfg
        self.guard = guard
        self._store = store
        self._loop = loop
        self._ua = user_agent
        self._jobs: dict[str, _Job] = {}
        self._pending = 0
        self._notes: SizedLRU[_Failures] = SizedLRU(KEEP_NOTES)
        self._stopped = False  # shutting down: nothing new starts

    async def check(self, hook: Hook) -> None:
        """Refuse a webhook the guard refuses, before the job exists (403, or a 400 for a URL
        sift cannot read or a name that does not resolve); nothing is connected to."""
        loop = asyncio.get_running_loop()
        try:
            target = self.guard.precheck(hook.url)
            await loop.run_in_executor(None, self.guard.resolve_and_check, target)
        except Blocked as exc:
            raise Blocked(f"{exc.reason} (the webhook URL)") from None
        except (BadRequest, UpstreamError) as exc:
            raise BadRequest(f"invalid request: `webhook`: {exc.message}") from None

    def started(self, job: BatchJob, hook: Hook) -> None:
        """The job was created with `hook`: its `started` event goes first."""
        entry = self._jobs.setdefault(job.id, _Job())
        entry.kind, entry.hook, entry.known = job.kind, hook, True
        self._add(job.id, entry, "started", lambda: self._event(job.id, entry, "started", []))

    def heard(self, event: str, job_id: str, detail: object) -> None:
        """The batch runner's news (its thread): a target or a job written."""
        loop = self._loop()
        if loop is not None and not loop.is_closed():
            loop.call_soon_threadsafe(self._heard, event, job_id, detail)

    def failures(self, job_id: str) -> str | None:
        """What the job's status says of its failed posts, or None."""
        note = self._notes.get(job_id)
        if note is None:
            return None
        return f"webhook: {note.count} post(s) failed, given up (last: {note.last})"

    async def stop(self) -> None:
        self._stopped = True
        tasks = [j.task for j in self._jobs.values() if j.task is not None]
        for task in tasks:
            task.cancel()
        await asyncio.gather(*tasks, return_exceptions=True)
        self._jobs.clear()

    # --- events ---------------------------------------------------------------------------

    def _heard(self, event: str, job_id: str, detail: object) -> None:
        entry = self._jobs.setdefault(job_id, _Job())
        if entry.known and entry.hook is None:
            if event == "job":
                self._jobs.pop(job_id, None)
            return
        if event == "target" and isinstance(detail, int):
            self._add(job_id, entry, "page", lambda: self._page(job_id, entry, detail))
        elif event == "job":
            entry.ended = True
            self._add(job_id, entry, "end", lambda: self._end(job_id, entry, str(detail)))

    def _add(
        self, job_id: str, entry: _Job, name: str, make: Callable[[], Awaitable[bytes | None]]
    ) -> None:
        if self._stopped:  # shutting down: an event in flight now is not posted
            return
        if self._pending >= self.cfg.pending:
            metrics.WEBHOOK_POSTS.labels("dropped").inc()
            self._failed(job_id, f"{name} event dropped: {self.cfg.pending} events were waiting")
            return
        self._pending += 1
        entry.queue.append(make)
        if entry.task is None or entry.task.done():
            entry.task = asyncio.ensure_future(self._drain(job_id, entry))

    async def _drain(self, job_id: str, entry: _Job) -> None:
        """The job's events, one at a time, in the order they happened."""
        while entry.queue:
            make = entry.queue.popleft()
            try:
                if not entry.known:
                    await self._read_hook(job_id, entry)
                raw = await make() if entry.hook is not None else None
                if raw is not None and entry.hook is not None:
                    await self._deliver(job_id, entry.hook, raw)
            except SiftError as exc:  # the store could not say: this event is lost
                self._failed(job_id, exc.message)
            except Exception:  # a bug: said in the log, and the job's next events go on
                log.exception("webhook: an event could not be made")
                self._failed(job_id, "internal error")
            finally:
                self._pending -= 1
        if entry.ended:
            self._jobs.pop(job_id, None)

    async def _read_hook(self, job_id: str, entry: _Job) -> None:
        job = await self._store(lambda s: s.batch_job(job_id, time.time(), JOB_KEEP))
        entry.known = True
        if job is not None:
            entry.kind, entry.hook = job.kind, webhook.from_spec(job.spec)

    async def _event(
        self, job_id: str, entry: _Job, event: str, data: list[Any], error: str | None = None
    ) -> bytes | None:
        assert entry.hook is not None
        if event not in entry.hook.events:
            return None
        return webhook.body(entry.kind, event, job_id, entry.hook, data, error)

    async def _page(self, job_id: str, entry: _Job, idx: int) -> bytes | None:
        if entry.kind == "extract" or entry.hook is None or "page" not in entry.hook.events:
            return None
        t = await self._store(lambda s: s.batch_target(job_id, idx))
        if t is None:
            return None
        if t.status != "done":
            return await self._event(job_id, entry, "page", [], t.error or "failed")
        if len(t.result or b"") > self.cfg.max_body:
            note = f"the document is over {self.cfg.max_body} bytes; read it from the job's status"
            return await self._event(job_id, entry, "page", [], note)
        return await self._event(job_id, entry, "page", [msgspec.Raw(t.result or b"{}")])

    async def _end(self, job_id: str, entry: _Job, status: str) -> bytes | None:
        event = ENDED.get(status)
        if event is None:  # cancelled: Firecrawl posts nothing
            return None
        job = await self._store(lambda s: s.batch_job(job_id, time.time(), JOB_KEEP))
        error = (job.error if job is not None else None) or "every page failed"
        if entry.kind == "extract":
            t = await self._store(lambda s: s.batch_target(job_id, 0))
            kept = msgspec.json.decode(t.result) if t is not None and t.result else {}
            if event == "completed":
                return await self._event(job_id, entry, event, [kept.get("data")])
            error = (t.error if t is not None else None) or error
        if event == "failed":
            return await self._event(job_id, entry, event, [], error)
        return await self._event(job_id, entry, event, [])

    # --- posts ----------------------------------------------------------------------------

    async def _deliver(self, job_id: str, hook: Hook, raw: bytes) -> None:
        """Post `raw` until it is taken (2xx), at most `attempts` times."""
        headers = dict(hook.headers)
        headers["Content-Type"] = "application/json"
        if self.cfg.secret:  # off the loop: a page's body may be megabytes
            loop = asyncio.get_running_loop()
            sign = await loop.run_in_executor(None, webhook.signature, self.cfg.secret, raw)
            headers[webhook.SIGNATURE] = sign
        delay = self.cfg.backoff
        why = ""
        for attempt in range(self.cfg.attempts):
            if attempt:
                await asyncio.sleep(delay)
                delay *= 2
            try:
                status = await self._post(hook.url, raw, headers)
            except Blocked as exc:  # the guard refused the address: no second try
                why = exc.message
                break
            except SiftError as exc:
                why = exc.message
                continue
            if 200 <= status < 300:
                metrics.WEBHOOK_POSTS.labels("ok").inc()
                return
            why = f"the receiver answered {status}"
            if 300 <= status < 400:
                why += " (a redirect: sift follows none)"
            if status < 500 and status not in RETRY:
                break
        metrics.WEBHOOK_POSTS.labels("failed").inc()
        self._failed(job_id, why)

    async def _post(self, url: str, raw: bytes, headers: dict[str, str]) -> int:
        """One post; its status, any status. The answer's body is read and dropped."""
        client = SimpleAsyncHTTPClient(force_instance=True, resolver=_GuardedResolver(self.guard))
        request = HTTPRequest(
            self.guard.precheck(url).url,
            method="POST",
            body=raw,
            headers=headers,
            user_agent=self._ua,
            connect_timeout=self.cfg.timeout,
            request_timeout=self.cfg.timeout,
            follow_redirects=False,
            streaming_callback=lambda _chunk: None,
        )
        try:
            response = await client.fetch(request, raise_error=False)
        except SiftError:
            raise
        except Exception as exc:
            raise UpstreamError(f"the post failed ({type(exc).__name__})") from None
        finally:
            client.close()
        return int(response.code)

    def _failed(self, job_id: str, why: str) -> None:
        note = self._notes.get(job_id) or _Failures()
        note.count += 1
        note.last = why
        self._notes.put(job_id, note, 1)
        log.info("webhook", extra={"fields": {"event": "webhook_failed", "job": job_id}})
