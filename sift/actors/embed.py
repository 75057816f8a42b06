"""EmbedActor: builds chunk embeddings in the background, one document and one batch at a time.

A digest tells it `EmbedBuild` and goes on with BM25: no question ever waits for embeddings.
The actor asks the store which chunks already have vectors, sends the rest to the embeddings
endpoint in batches, stores each batch, and moves on to the next document in the queue. The
HTTP calls run on the event loop that asked (as coroutines it schedules there), and every
answer — from the loop or from the store — comes back as a message, so this inbox never
blocks. A document whose embedding fails is left alone for a while; the next question after
that tries again.
"""

from __future__ import annotations

import asyncio
import contextlib
import itertools
import logging
import time
from collections import deque
from collections.abc import Callable
from concurrent.futures import Future
from dataclasses import dataclass, field
from typing import Any

import pykka

from sift.actors.base import DEFERRED, SiftActor
from sift.actors.bridge import Answered
from sift.actors.store import StoreCall
from sift.core import metrics
from sift.core.answer import Answer
from sift.core.config import EmbedConfig
from sift.core.errors import Unavailable
from sift.digest import llm
from sift.digest.rank import to_bytes
from sift.store.protocol import Store

log = logging.getLogger("sift.embed")

MAX_QUEUED = 16
RETRY_AFTER_FAILURE = 60.0
MAX_INPUT_CHARS = 8000  # ~2,000 tokens: inside every embedding model's input limit

SetKey = tuple[str, str, str]  # (content hash, caller class, model key)


@dataclass(frozen=True)
class EmbedBuild:
    """Embed every chunk of a document that has no vector yet (tell; no answer)."""

    key: SetKey
    texts: tuple[str, ...]
    loop: asyncio.AbstractEventLoop


@dataclass(frozen=True)
class EmbedWait:
    """Answered ("done" | "failed" | "idle") once no job for `key` is queued or running."""

    key: SetKey
    reply: Answer


@dataclass(frozen=True)
class EmbedIdle:
    """Answered "idle" once no job at all is queued or running (for tests and shutdown)."""

    reply: Answer


# Tags of the answers the actor gets back (from the store and the loop) for job `number`.
@dataclass(frozen=True)
class _Have:
    number: int


@dataclass(frozen=True)
class _Embedded:
    number: int
    chunks: list[int]


@dataclass(frozen=True)
class _Stored:
    number: int


@dataclass
class Job:
    number: int
    key: SetKey
    texts: tuple[str, ...]
    loop: asyncio.AbstractEventLoop
    missing: deque[int] = field(default_factory=deque)
    waiters: list[Answer] = field(default_factory=list)
    inflight: Future[Any] | None = None


class EmbedActor(SiftActor):
    def __init__(self, cfg: EmbedConfig, store: pykka.ActorRef[Any]) -> None:
        super().__init__()
        self.cfg = cfg
        self.store = store
        self.queue: deque[Job] = deque()
        self.active: Job | None = None
        self.failed: dict[SetKey, float] = {}
        self.idle_waiters: list[Answer] = []
        self._numbers = itertools.count(1)

    # -- requests

    def handle_embed_build(self, msg: EmbedBuild) -> None:
        if self._job(msg.key) is not None or len(self.queue) >= MAX_QUEUED:
            return
        failed_at = self.failed.get(msg.key)
        if failed_at is not None and time.monotonic() - failed_at < RETRY_AFTER_FAILURE:
            return
        self.queue.append(Job(next(self._numbers), msg.key, msg.texts, msg.loop))
        self._start_next()

    def handle_embed_wait(self, msg: EmbedWait) -> object:
        job = self._job(msg.key)
        if job is None:
            return "idle"
        job.waiters.append(msg.reply)
        return DEFERRED

    def handle_embed_idle(self, msg: EmbedIdle) -> object:
        if self.active is None and not self.queue:
            return "idle"
        self.idle_waiters.append(msg.reply)
        return DEFERRED

    # -- answers from the store and the loop

    def handle_have(self, tag: _Have, value: Any, error: BaseException | None) -> None:
        job = self._answered("have", tag.number, error)
        if job is not None:
            have = set(value)
            job.missing = deque(i for i in range(len(job.texts)) if i not in have)
            self._next_batch(job)

    def handle_embedded(self, tag: _Embedded, value: Any, error: BaseException | None) -> None:
        job = self._answered("batch", tag.number, error)
        if job is not None:
            metrics.EMBED_CHUNKS.inc(len(tag.chunks))
            items = [(n, to_bytes(v)) for n, v in zip(tag.chunks, value, strict=True)]
            key = job.key
            self._store(lambda s: s.embed_put(*key, items), _Stored(tag.number))

    def handle_stored(self, tag: _Stored, value: Any, error: BaseException | None) -> None:
        job = self._answered("stored", tag.number, error)
        if job is not None:
            self._next_batch(job)

    def _answered(self, what: str, number: int, error: BaseException | None) -> Job | None:
        """The active job an answer is for; None for a job given up, or one the answer ends."""
        job = self.active
        if job is None or job.number != number:
            return None  # a job that was given up
        if error is not None:
            self._finish(job, f"{what}: {error}")
            return None
        return job

    # -- the job

    def _job(self, key: SetKey) -> Job | None:
        if self.active is not None and self.active.key == key:
            return self.active
        return next((j for j in self.queue if j.key == key), None)

    def _start_next(self) -> None:
        if self.active is None and not self.queue:
            waiters, self.idle_waiters = self.idle_waiters, []
            for waiter in waiters:
                waiter.ok("idle")
        if self.active is not None or not self.queue:
            return
        job = self.active = self.queue.popleft()
        key = job.key
        self._store(lambda s: s.embed_have(*key), _Have(job.number))

    def _next_batch(self, job: Job) -> None:
        if not job.missing:
            self._finish(job, None)
            return
        chunks = [job.missing.popleft() for _ in range(min(self.cfg.batch, len(job.missing)))]
        texts = [job.texts[n][:MAX_INPUT_CHARS] for n in chunks]
        call = llm.embed(
            self.cfg.endpoint,
            self.cfg.model,
            texts,
            api_key_env=self.cfg.api_key_env,
            timeout=self.cfg.timeout,
        )
        try:
            future = asyncio.run_coroutine_threadsafe(call, job.loop)
        except RuntimeError:  # the loop that asked is gone
            call.close()
            self._finish(job, "event loop closed")
            return
        job.inflight = future
        me = self.actor_ref
        tag = _Embedded(job.number, chunks)

        def done(f: Future[Any]) -> None:
            if f.cancelled():  # the loop shut down under the call
                answer = Answered(tag, error=llm.ModelError("cancelled"))
            elif (exc := f.exception()) is not None:
                answer = Answered(tag, error=exc)
            else:
                answer = Answered(tag, value=f.result())
            with contextlib.suppress(pykka.ActorDeadError):
                me.tell(answer)

        future.add_done_callback(done)

    def _finish(self, job: Job, error: str | None) -> None:
        if error is not None:
            self._remember_failure(job.key)
            log.warning("embedding a document failed: %s", error)
        else:
            self.failed.pop(job.key, None)
        for waiter in job.waiters:
            waiter.ok("failed" if error else "done")
        self.active = None
        self._start_next()

    def _remember_failure(self, key: SetKey) -> None:
        """Remember when `key` failed; forget failures past the retry time, and the oldest
        ones beyond `[embed] remember_failures`."""
        now = time.monotonic()
        self.failed.pop(key, None)
        self.failed[key] = now  # the dict is in order of failure
        while self.failed:
            oldest = next(iter(self.failed))
            if (
                len(self.failed) <= self.cfg.remember_failures
                and now - self.failed[oldest] < RETRY_AFTER_FAILURE
            ):
                break
            del self.failed[oldest]

    def _store(self, fn: Callable[[Store], object], tag: _Have | _Stored) -> None:
        try:
            self.store.tell(StoreCall(fn, self.answer_to(tag)))
        except pykka.ActorDeadError:
            if self.active is not None:
                self._finish(self.active, "store unavailable")

    def release(self) -> None:
        jobs = ([self.active] if self.active else []) + list(self.queue)
        for job in jobs:
            if job.inflight is not None:
                job.inflight.cancel()
            for waiter in job.waiters:
                waiter.fail(Unavailable("shutting down"))
        for waiter in self.idle_waiters:
            waiter.fail(Unavailable("shutting down"))
        self.idle_waiters.clear()
        self.active = None
        self.queue.clear()
