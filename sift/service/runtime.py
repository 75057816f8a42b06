"""Runtime: the running actor system and the awaitable calls the pipeline makes into it.

Everything here runs on the event loop and never blocks it: each call tells an actor a message
that carries a `Reply` and awaits that reply with a deadline.
"""

from __future__ import annotations

import asyncio
import contextlib
import functools
import itertools
import logging
import time
from collections.abc import AsyncIterator, Callable, Coroutine
from concurrent.futures import ThreadPoolExecutor
from contextlib import asynccontextmanager
from pathlib import Path
from typing import Any, TypeVar

import pykka

from sift.actors.bridge import Reply
from sift.actors.clean import CleanActor, CleanPool
from sift.actors.digest import DigestActor
from sift.actors.embed import EmbedActor
from sift.actors.extract import ExtractRequest, ExtractWorker, Refill
from sift.actors.fetch import FetchActor, FetchRequest, FetchResult
from sift.actors.gate import Abandon, Acquire, GateActor, Release
from sift.actors.pool import Admit, Done, Lead, LeaderGone, Leave, PoolActor
from sift.actors.store import StoreActor, StoreCall, StoreHealth, start_pg
from sift.actors.system import System
from sift.browser.engine import Engine
from sift.clean.data import JQ_TIME
from sift.clean.protocol import CleanResult, CleanTask
from sift.clean.worker import STARTUP_DEADLINE
from sift.core import metrics
from sift.core.answer import Answer
from sift.core.config import Config
from sift.core.errors import Busy, SiftError, StoreUnavailable, Unavailable
from sift.core.lru import SizedLRU
from sift.core.types import Content
from sift.documents import spool
from sift.documents.children import kill_all
from sift.documents.runner import Extraction, Progress
from sift.fetch.guard import Guard
from sift.fetch.headers import Headers
from sift.service.asker import ASKER, Asker
from sift.service.flights import Flights
from sift.service.hotcache import HotCache
from sift.store.backend import open_shared, prepare
from sift.store.protocol import Store

T = TypeVar("T")
log = logging.getLogger("sift.services")

# How long a call to the store or a cleaner may take before the request fails (not a hang).
STORE_DEADLINE = 30.0
# Threads for CPU work off the event loop (splitting, rendering, grep, hashing): two, as
# the machines sift runs on have two or more cores; more would only contend for the GIL.
CPU_THREADS = 2
# A write or work held for after the answer (`store_later`, `after_answer`) waits at most
# this long for the answer to go out, when nothing sends it sooner (a batch target, the CLI).
WRITE_DELAY = 0.05
# Who asks for the work no request asks for (the CLI's cached reads, warm-ups).
SERVER = "sift"
# Work on fewer characters or bytes than this takes well under a millisecond: it runs on the
# loop, where a hop to a thread (and the GIL it then contends for) would cost more.
INLINE_BELOW = 200_000


class Runtime:
    """Builds, starts and stops the actors; gives the pipeline awaitable calls into them.

    The batch roles, which run targets through the pipeline, are added by `Services`."""

    def __init__(
        self,
        cfg: Config,
        *,
        resolver: Callable[[str, int], list[str]] | None = None,
        on_fatal: Callable[[str], None] | None = None,
    ) -> None:
        self.cfg = cfg
        self.started = time.monotonic()
        self.guard = Guard(cfg.guard.allow_prefixes, cfg.guard.allow_ports, resolver=resolver)
        # Renders on the loop (sift.browser); its proxy checks every request with the guard.
        self.browser = Engine(cfg.render, self.guard.address_for)
        self.system = System(on_fatal=on_fatal)
        self._tickets = itertools.count(1)
        self.inflight = 0  # HTTP requests being handled (for draining at shutdown)
        # Concurrent requests for one document share one fetch; `[gates] flights` at once.
        self.flights = Flights(cfg.gates.flights)
        self._cleaners: CleanPool | None = None
        self._later: set[asyncio.Task[Any]] = set()  # store writes and PDF jobs nobody awaits
        # Store writes not sent yet: they go after the answer (`answered`), and always
        # before any later store call, so that call sees them.
        self._writes: list[tuple[Callable[[Store], Any], Callable[[Any], None]]] = []
        self._after: list[Callable[[], None]] = []  # other work held until the answer is out
        self._flush: asyncio.TimerHandle | None = None
        self._jobs: set[asyncio.Task[None]] = set()  # jobs polled for later (`spawn`)
        self.loop: asyncio.AbstractEventLoop | None = None  # the server sets it before start()
        self.hot = HotCache(cfg.cache.memory)  # the content cache's hot set, on the loop
        self.sections: SizedLRU[Any] = SizedLRU(cfg.cache.sections_memory)  # sift.service.render
        self.renders: SizedLRU[Any] = SizedLRU(cfg.cache.render_memory)
        self._cpu = ThreadPoolExecutor(CPU_THREADS, thread_name_prefix="sift-cpu")
        self.spool_dir = Path(cfg.state_path) / "tmp"  # PDF bodies waiting for the pool
        # PDF extractions running now, by (caller class, URL): a request out of time can
        # answer with the pages done so far. One per flight at most, so bounded as they are.
        self.progress: dict[tuple[str, str], tuple[Progress, Content]] = {}
        # The store answers database errors as 503s and says so in `store_health`; only a bug
        # kills it, and then it is restarted like any other role (a restart opens the files
        # anew), so one fault never becomes a crash loop of the whole process.
        state, st = Path(cfg.state_path), cfg.store
        self.store_health = StoreHealth()
        self.pg = open_shared(st.url, st.pool, st.busy_timeout, state, cfg.batch.lease)
        self.system.add(
            "store",
            lambda: StoreActor.start(
                state, self.store_health, st.busy_timeout, st.probe_every, shared=self.pg
            ),
            count=st.pool if self.pg else 1,
        )
        g = cfg.gates
        self.system.add("gate", lambda: GateActor.start(g.global_, g.per_host, g.per_caller))
        self.system.add(
            "fetch", lambda: FetchActor.start(cfg.fetch, self.guard), count=cfg.fetch.actors
        )
        self.system.add(
            "clean",
            lambda: CleanActor.start(cfg.clean, on_restart=metrics.clean_restart),
            count=cfg.clean.workers,
        )
        pdf = cfg.pdf
        self.system.add(
            "pool",
            lambda: PoolActor.start(pdf.slots, pdf.queue, pdf.wait, pdf.longest * 3),
            critical=True,
        )
        self.system.add("extract", lambda: ExtractWorker.start(pdf), count=pdf.slots)
        # Digests (sift/digest): indexing and ranking; chunk embeddings in the background.
        self.system.add("digest", DigestActor.start, count=2)
        self.system.add("embed", lambda: EmbedActor.start(cfg.embed, self.system.pick("store")))
        self._add_roles(cfg)

    def _add_roles(self, cfg: Config) -> None:
        """The roles a subclass adds after these (`Services`: batch)."""

    def start(self) -> None:
        """Start the actors; `JobsCorrupt` if the batch jobs database cannot be read
        (`SchemaTooNew` if PostgreSQL's is newer than this sift)."""
        if self.pg is not None:
            start_pg(self.pg, self.store_health)
        else:
            prepare(Path(self.cfg.state_path), self.cfg.store.busy_timeout)
        spool.clear(self.spool_dir)
        self.system.start()

    def stop(self) -> None:
        for fn, _ in self._writes:  # the loop may be gone: sent without their follow-up
            with contextlib.suppress(pykka.ActorDeadError):
                self.system.pick("store").tell(StoreCall(fn))
        self._writes.clear()
        kill_all()  # a running extraction ends at once, so its worker can stop
        self.system.stop()
        if self.pg is not None:
            self.pg.close()
        self._cpu.shutdown(wait=False, cancel_futures=True)

    async def compute(
        self, fn: Callable[..., T], *args: Any, cost: int | None = None, **kwargs: Any
    ) -> T:
        """`fn(*args, **kwargs)` on a CPU thread, so the event loop keeps serving meanwhile;
        on the loop itself when `cost` (the characters or bytes it works on) is small.

        For pure work on data nobody changes (texts, pages, bytes). re2 and hashlib release
        the GIL; pure-Python work still yields it to the loop every few milliseconds.
        """
        if cost is not None and cost < INLINE_BELOW:
            return fn(*args, **kwargs)
        loop = asyncio.get_running_loop()
        return await loop.run_in_executor(self._cpu, functools.partial(fn, *args, **kwargs))

    async def ask(
        self, ref: pykka.ActorRef[Any], build: Callable[[Answer], Any], timeout: float
    ) -> Any:
        reply: Reply[Any] = Reply()
        try:
            ref.tell(build(reply))
        except pykka.ActorDeadError:
            raise Unavailable("sift is restarting a component; try again", retry_after=1) from None
        try:
            return await reply.wait(timeout)
        except TimeoutError:
            raise SiftError("internal error: a component did not answer in time") from None

    async def store(self, fn: Callable[[Store], T]) -> T:
        """`fn(store)` on the store's thread, e.g. `await svc.store(lambda s: s.pdf_get(u, c))`."""
        self.flush_writes()
        result: T = await self.ask(
            self.system.pick("store"), lambda r: StoreCall(fn, r), STORE_DEADLINE
        )
        return result

    async def cache_or(self, default: T, fn: Callable[[Store], T]) -> T:
        """A call into the disposable cache whose failure is answered by `default`: the store
        says degraded (/healthz), and the answer goes on without the cache."""
        try:
            return await self.store(fn)
        except StoreUnavailable:
            return default

    def store_later(self, fn: Callable[[Store], T], then: Callable[[T], None]) -> None:
        """A store write nobody awaits, sent once the answer is out: the store's thread would
        otherwise contend with the loop for the GIL while the answer is rendered and written.
        It is sent by `flush_writes` — after each HTTP answer (`answered`), before any later
        store call (which thus sees it), or after `WRITE_DELAY`. `then(result)` runs on the
        loop when it answers; a failure is logged (the request it served has been answered
        already)."""
        self._writes.append((fn, then))
        self._hold()

    def after_answer(self, fn: Callable[[], None]) -> None:
        """Run `fn` (on the loop) once the answer is out — after the next HTTP answer, or
        after `WRITE_DELAY` — for work that would contend with rendering the answer."""
        self._after.append(fn)
        self._hold()

    def _hold(self) -> None:
        if self._flush is None:
            self._flush = asyncio.get_running_loop().call_later(WRITE_DELAY, self.answered)

    def answered(self) -> None:
        """An answer is out: send the held store writes, then run the held work."""
        self.flush_writes()
        if self._flush is not None:
            self._flush.cancel()
            self._flush = None
        after, self._after = self._after, []
        for fn in after:
            fn()

    def flush_writes(self) -> None:
        """Send the writes `store_later` holds, in the order they were made (on the loop)."""
        writes, self._writes = self._writes, []
        for fn, then in writes:
            self._send_later(fn, then)

    def _send_later(self, fn: Callable[[Store], T], then: Callable[[T], None]) -> None:
        reply: Reply[T] = Reply()
        try:
            self.system.pick("store").tell(StoreCall(fn, reply))
        except pykka.ActorDeadError:
            log.warning("store unavailable: a write was not made")
            return

        async def finish() -> None:
            try:
                then(await reply.wait(STORE_DEADLINE))
            except Exception as exc:
                log.warning("store write failed: %s", type(exc).__name__)

        task = asyncio.ensure_future(finish())
        self._later.add(task)
        task.add_done_callback(self._later.discard)

    def spawn(self, work: Coroutine[Any, Any, None]) -> None:
        """Start a job that answers later (a Firecrawl extract); cancelled at shutdown."""
        task = asyncio.ensure_future(work)
        self._jobs.add(task)
        task.add_done_callback(self._jobs.discard)

    async def settle(self, timeout: float = 10.0) -> None:
        """At shutdown, before the actors stop: end the work nobody waits for any more
        (shared fetches whose requesters left) and let store writes in flight finish."""
        await self.flights.cancel_all()
        self.answered()  # the held writes, the cancelled work's included
        for job in list(self._jobs):
            job.cancel()
        if self._jobs:
            await asyncio.wait(list(self._jobs), timeout=timeout)
        if self._later:
            await asyncio.wait(list(self._later), timeout=timeout)

    def store_tell(self, fn: Callable[[Store], object]) -> None:
        """A store write nobody waits for (bookkeeping such as marking documents used); sent
        after the held writes (on the loop)."""
        self.flush_writes()
        with contextlib.suppress(pykka.ActorDeadError):
            self.system.pick("store").tell(StoreCall(fn))

    async def fetch(
        self,
        url: str,
        etag: str | None = None,
        last_modified: str | None = None,
        headers: Headers = (),
    ) -> FetchResult:
        deadline = self.cfg.fetch.pdf_timeout + 10
        result: FetchResult = await self.ask(
            self.system.pick("fetch"),
            lambda r: FetchRequest(url, r, etag, last_modified, headers=headers),
            deadline,
        )
        return result

    async def clean(self, task: CleanTask) -> CleanResult:
        """Clean in a free worker process, shared fairly between callers (`CleanPool`).

        A jq program runs for at most `JQ_TIME` and never past its request's deadline: over
        it, a 422 that names its time bound."""
        if self._cleaners is None:
            timeout = self.cfg.clean.deadline * 2 + STARTUP_DEADLINE * 2 + 10  # a retry, restarts
            self._cleaners = CleanPool(self.system.refs("clean"), timeout, self.cfg.clean.queue)
        asker = ASKER.get() or Asker(SERVER, None)
        deadline = float(self.cfg.clean.deadline)
        if task.jq is None:
            return await self._cleaners.clean(task, asker.caller, deadline)

        def started(bound: float) -> None:
            asker.jq = bound

        try:
            return await self._cleaners.clean(
                task, asker.caller, min(deadline, JQ_TIME), until=asker.until, started=started
            )
        finally:
            asker.jq = None

    async def spool(self, body: bytes) -> bytes | Path:
        """`body` as the PDF pool takes it: in memory when small, else in a file (written on
        a CPU thread) that the caller removes with `spool.remove` when its job ends."""
        if len(body) <= self.cfg.pdf.spool_over:
            return body
        return await self.compute(spool.write, self.spool_dir, body)

    async def extract(
        self,
        key: tuple[str, str],
        caller: str,
        pdf: bytes | Path,
        progress: Progress | None = None,
    ) -> Extraction:
        """Extract a PDF under the pool: a slot (or a share of the same document's job), then
        the slot's ExtractWorker. Busy pools answer 503/429 (sift.actors.pool).

        The job runs as its own task (P5a-04 rule 4: the job's context is not the caller's),
        so a leader that is cancelled still tells the pool `Done`. A cancelled leader tells
        `LeaderGone`: with no follower either, the pool stops the job (`progress.cancel()` kills
        its children) and the slot frees at once instead of at the extraction's deadline.
        """
        pool = self.system.pick("pool")
        progress = progress or Progress()
        admit_reply: Reply[Any] = Reply()
        admit = Admit(key, caller, admit_reply, stop=progress.cancel)
        pool.tell(admit)
        deadline = self.cfg.pdf.wait + self.cfg.pdf.longest * 2 + 10
        asked = time.monotonic()
        try:
            answer = await admit_reply.wait(deadline)
        except BaseException:
            pool.tell(Leave(admit.token))
            raise
        metrics.PDF_POOL_WAIT.observe(time.monotonic() - asked)
        if not isinstance(answer, Lead):
            return answer  # type: ignore[no-any-return]  # the shared job's outcome
        try:  # the job's own name for a spooled body: the job may outlive this request
            held = spool.hold(pdf)
        except OSError as exc:
            failed = Unavailable("pdf extraction could not start (its spooled body is gone)",
                                 hint="retry", retry_after=2)  # fmt: skip
            pool.tell(Done(answer.ticket, error=failed))
            raise failed from exc
        job = asyncio.ensure_future(self._lead(pool, answer, held, progress))
        self._later.add(job)
        job.add_done_callback(self._job_over)
        try:
            return await asyncio.shield(job)
        except asyncio.CancelledError:
            if not job.done():
                with contextlib.suppress(pykka.ActorDeadError):
                    pool.tell(LeaderGone(answer.ticket))
            raise

    def _job_over(self, job: asyncio.Task[Any]) -> None:
        self._later.discard(job)
        if not job.cancelled():
            job.exception()  # retrieved: its leader may have gone

    async def _lead(
        self, pool: pykka.ActorRef[Any], lead: Lead, pdf: bytes | Path, progress: Progress
    ) -> Extraction:
        """The leader's job: extract on the slot's worker, then tell the pool `Done`."""
        worker = self.system.refs("extract")[lead.slot % self.cfg.pdf.slots]
        try:
            result: Extraction = await self.ask(
                worker,
                lambda r: ExtractRequest(pdf, r, progress=progress),
                self.cfg.pdf.longest + 15,
            )
        except BaseException as exc:
            with contextlib.suppress(pykka.ActorDeadError):  # the pool stopped first
                pool.tell(Done(lead.ticket, error=exc))
            raise
        finally:
            spool.remove(pdf)
            self.after_answer(lambda: _refill(worker))  # its spares were used
        pool.tell(Done(lead.ticket, value=result))
        return result

    def gate_ask(self, host: str, caller: str) -> GateTicket:
        """Ask for a fetch slot now and wait for it later (`gate(…, ticket)`), so the gate's
        round trip overlaps the cache lookup; a hit gives the ticket back with `drop()`."""
        return GateTicket(self.system.pick("gate"), next(self._tickets), host, caller,
                          self.cfg.gates.wait)  # fmt: skip

    @asynccontextmanager
    async def gate(
        self, host: str, caller: str, ticket: GateTicket | None = None
    ) -> AsyncIterator[None]:
        """Hold a fetch slot (global, host, caller) for the body of the `async with`: the one
        `ticket` asked for, or one asked for now."""
        ticket = ticket or self.gate_ask(host, caller)
        await ticket.held()
        try:
            yield
        finally:
            ticket.drop()


class GateTicket:
    """One request for fetch slots at the GateActor, from `Acquire` to `Release` or `Abandon`.

    The gate wait counts from the ask. `drop()` gives back whatever the ticket has — its
    place in the queue, or the slots once granted (a grant racing the drop is released by
    the actor) — so a cache hit that asked ahead holds nothing and counts nothing."""

    def __init__(
        self, gate: pykka.ActorRef[Any], ticket: int, host: str, caller: str, wait: float
    ) -> None:
        self._gate = gate
        self._ticket = ticket
        self._until = time.monotonic() + wait
        self._reply: Reply[bool] = Reply()
        self._state = "asked"  # → "held" → "dropped"
        gate.tell(Acquire(ticket, host, caller, self._reply))

    async def held(self) -> None:
        """Wait for the slots until the gate wait is over; then `Busy` (429)."""
        try:
            await self._reply.wait(max(0.0, self._until - time.monotonic()))
            self._state = "held"
        except TimeoutError:
            self.drop()
            metrics.GATE_BUSY.inc()
            raise Busy("busy: too many fetches in flight; retry shortly", retry_after=2) from None
        except BaseException:
            self.drop()
            raise

    def drop(self) -> None:
        """Give back the slots or the place in the queue; once, whatever comes after."""
        if self._state == "dropped":
            return
        message = Release(self._ticket) if self._state == "held" else Abandon(self._ticket)
        self._state = "dropped"
        self._reply.discard()
        with contextlib.suppress(pykka.ActorDeadError):
            self._gate.tell(message)


def _refill(worker: pykka.ActorRef[Any]) -> None:
    """Tell an ExtractWorker to start its spares again (none at shutdown)."""
    with contextlib.suppress(pykka.ActorDeadError):
        worker.tell(Refill())
