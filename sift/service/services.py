"""Services: the running service — the one object the server, the CLI and the pipeline (as its
`Runtime`) are given. It composes the small parts, each with one job, and starts and stops
them; a caller reaches the part itself (`svc.jobs.batch_submit(…)`), so that no handler ever
names an actor message.

It stands above the pipeline: the batch roles it adds run targets through it.
"""

from __future__ import annotations

import asyncio
import functools
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

from sift.actors.batch import LISTENERS, BatchRunner
from sift.actors.batch_messages import BatchStats
from sift.actors.batch_worker import BatchWorker
from sift.actors.bridge import ask
from sift.actors.pool import Status
from sift.actors.store import StoreHealth, start_pg
from sift.actors.system import System
from sift.browser.engine import Engine
from sift.core.config import Config
from sift.core.errors import StoreUnavailable
from sift.core.lru import SizedLRU
from sift.documents.children import kill_all
from sift.documents.pdf import spool
from sift.fetch.guard import Guard
from sift.fetch.identity import signer_for
from sift.service.entries.batch import execute
from sift.service.parts.capabilities import Capabilities
from sift.service.parts.cleaners import Cleaners
from sift.service.parts.cpu import Cpu
from sift.service.parts.flights import Flights
from sift.service.parts.gates import Gates
from sift.service.parts.held import STORE_DEADLINE, HeldWrites
from sift.service.parts.hotcache import HotCache
from sift.service.parts.jobs import BatchJobs
from sift.service.parts.pdf_pool import PdfPool
from sift.service.parts.readings import Readings
from sift.service.parts.ready import ReadyAnswers
from sift.service.parts.robots_txt import RobotsTxt
from sift.service.parts.roles import Roles, add_roles
from sift.service.parts.upstream import Upstream
from sift.service.parts.webhooks import Webhooks
from sift.store.backend import open_shared, prepare
from sift.store.protocol import REASONS


class Services:
    """Builds, starts and stops every actor; the one way in for handlers and the CLI."""

    def __init__(
        self,
        cfg: Config,
        *,
        resolver: Callable[[str, int], list[str]] | None = None,
        on_fatal: Callable[[str], None] | None = None,
    ) -> None:
        self.cfg = cfg
        self.started = time.monotonic()
        self.inflight = 0  # HTTP requests being handled (for draining at shutdown)
        self.loop: asyncio.AbstractEventLoop | None = None  # the server sets it before start()
        self.guard = Guard(cfg.guard.allow_prefixes, cfg.guard.allow_ports, resolver=resolver)
        self.signer = signer_for(cfg)  # sift's identity, or None (fetch/identity.py)
        sign = self.signer.headers if self.signer is not None else None
        self.browser = Engine(cfg.render, self.guard.address_for, sign)
        self.flights = Flights(cfg.gates.flights)
        # `[cache] memory` holds the hot set and, in a quarter of it, the hot pages' answers
        self.hot = HotCache(cfg.cache.memory - cfg.cache.memory // 4)
        self.answers = ReadyAnswers(cfg.cache.memory // 4)
        self.robots = RobotsTxt()
        self.clock: Callable[[], float] = time.time
        self.sections: SizedLRU[Any] = SizedLRU(cfg.cache.sections_memory)
        self.renders: SizedLRU[Any] = SizedLRU(cfg.cache.render_memory)
        self.store_health = StoreHealth()
        self.capabilities = Capabilities(cfg, self.browser, self.store_health)
        st = cfg.store
        self.pg = open_shared(
            st.url, st.pool, st.busy_timeout, Path(cfg.state_path), cfg.batch.lease
        )
        self.system = System(on_fatal=on_fatal)
        self.roles = Roles(self.system)
        add_roles(self.roles, cfg, self.guard, self.store_health, self.pg, self.signer)
        self._add_batch_roles(cfg)
        # The parts, each with one job.
        self.cpu = Cpu()
        self.held = HeldWrites(self.roles.store)
        g = cfg.gates
        self.gates = Gates(g.global_, g.per_host, g.per_caller, g.wait)
        self.upstream = Upstream(self.guard, self.gates, self.roles.fetcher, cfg.fetch.pdf_timeout)
        self.cleaners = Cleaners(cfg.clean, self.roles)
        spool_dir = Path(cfg.state_path) / "tmp"
        after = self.held.after_answer
        self.pdfs = PdfPool(cfg.pdf, self.roles, spool_dir, self.cpu.compute, after)
        self.readings = Readings()
        self.jobs = BatchJobs(cfg.batch, self.roles, self.held)
        ua = cfg.fetch.user_agent
        self.webhooks = Webhooks(cfg.webhook, self.guard, self.held.store, lambda: self.loop, ua)

    def _add_batch_roles(self, cfg: Config) -> None:
        """Batch: 1–2 workers that run targets through the pipeline on `self.loop`, and a
        runner (jobs, caps, round-robin; at start it resumes the jobs a stop interrupted; with
        PostgreSQL it leases them). The workers start first, so the resumed jobs find them."""
        self.system.add(
            "batch_worker",
            lambda: BatchWorker.start(lambda: self.loop, functools.partial(execute, self)),
            count=cfg.batch.workers,
        )
        self.system.add(
            "batch",
            lambda: BatchRunner.start(
                cfg.batch,
                self.roles.store,
                self.roles.batch_workers,
                owner=lambda: self.loop is not None,  # a server, not an in-process `sift fetch`
                shared=self.pg is not None,
            ),
        )

    def start(self) -> None:
        """Start the actors; `JobsCorrupt` if the batch jobs database cannot be read
        (`SchemaTooNew` if PostgreSQL's is newer than this sift)."""
        if self.pg is not None:
            start_pg(self.pg, self.store_health)
        else:
            prepare(Path(self.cfg.state_path), self.cfg.store.busy_timeout)
        spool.clear(self.pdfs.spool_dir)
        LISTENERS.append(self.webhooks.heard)
        self.system.start()
        if self.loop is not None:  # a server (its browser starts at the first render)
            self.loop.call_soon_threadsafe(self.capabilities.start)

    async def settle(self, timeout: float = 10.0) -> None:
        """At shutdown, before the actors stop: end the work nobody waits for any more
        (shared fetches whose requesters left) and let store writes in flight finish."""
        await self.flights.cancel_all()
        await self.webhooks.stop()
        await self.robots.cancel_all()
        for job in list(self.pdfs.ocr_jobs.values()):
            job.cancel()  # background OCR: its pages done are kept, the rest wait for a range
        self.held.answered()  # the held writes, the cancelled work's included
        pending = self.held.sent | self.pdfs.jobs
        if pending:
            await asyncio.wait(list(pending), timeout=timeout)
        await self.browser.close()
        await self.capabilities.stop()

    def stop(self) -> None:
        self.held.stop()  # the loop may be gone: sent without their follow-up
        if self.webhooks.heard in LISTENERS:
            LISTENERS.remove(self.webhooks.heard)
        kill_all()  # a running extraction ends at once, so its worker can stop
        self.browser.stop()
        self.system.stop()
        if self.pg is not None:
            self.pg.close()
        self.cpu.stop()

    def store_fault(self) -> StoreUnavailable | None:
        """The 503 to answer while the store answers database errors, else None."""
        health = self.store_health
        return None if health.kind is None else StoreUnavailable(health.kind, REASONS[health.kind])

    async def load(self) -> dict[str, int]:
        """What is running and waiting now: the fetch gates, the PDF pool, the batch queue (the
        usage calls)."""
        gate = self.gates.stats()
        pool = await ask(self.roles.pool(), Status, STORE_DEADLINE)
        jobs, running = await ask(self.roles.batch(), BatchStats, STORE_DEADLINE)
        return {
            "fetches": gate["in_flight"],
            "fetches_waiting": gate["waiting"],
            "max_fetches": self.cfg.gates.global_,
            "pdf_running": pool.running,
            "pdf_queued": pool.queued,
            "pdf_slots": self.cfg.pdf.slots,
            "batch_jobs": jobs,
            "batch_targets_running": running,
        }
