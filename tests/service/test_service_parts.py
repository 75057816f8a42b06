"""The small parts of the running service, each on its own event loop and without a thread:
the order of the store calls (`HeldWrites`), the fetch slots and a ticket's life (`Gates`),
the asking side of the PDF pool (`PdfPool`), the extractions shown as running (`Readings`),
the one way upstream (`Upstream`) and the one way
to ask an actor (`bridge.ask`).
An actor is stood in for by `Inbox`, which keeps what it is told, in order, and answers only
when the test does (a dead actor is a real one, stopped)."""

from __future__ import annotations

import asyncio
from collections.abc import Callable, Coroutine
from typing import Any, cast

import pykka
import pytest

from sift.actors.bridge import Reply, ask
from sift.actors.extract import ExtractRequest
from sift.actors.fetch import FetchRequest
from sift.actors.pool import Admit, Done, Lead, LeaderGone, Leave
from sift.actors.store import StoreCall
from sift.core.config import PdfConfig
from sift.core.errors import Blocked, Busy, SiftError, Unavailable
from sift.core.types import Content
from sift.documents.pdf.runner import Progress
from sift.fetch.guard import Guard
from sift.fetch.transfer import FetchResult
from sift.service.parts import held as held_module
from sift.service.parts.gates import Gates
from sift.service.parts.held import HeldWrites
from sift.service.parts.pdf_pool import PdfPool
from sift.service.parts.readings import Readings
from sift.service.parts.upstream import Upstream


class Inbox:
    """What an actor was told, in order; it answers nothing by itself."""

    def __init__(self) -> None:
        self.told: list[Any] = []

    def tell(self, message: Any) -> None:
        self.told.append(message)

    def calls(self) -> list[Any]:
        """What each store call told so far returns (each `fn` is run on no store)."""
        return [m.fn(None) for m in self.told]

    def answer(self) -> None:
        """Answer every store call told so far with what its `fn` returns."""
        for m in self.told:
            if m.reply is not None:
                m.reply.ok(m.fn(None))


def ref(inbox: Inbox) -> pykka.ActorRef[Any]:
    """`inbox` as the actor ref the part asks for: the parts only ever `tell` a ref."""
    return cast(pykka.ActorRef[Any], inbox)


def run(test: Callable[[], Coroutine[Any, Any, None]]) -> None:
    asyncio.run(asyncio.wait_for(test(), 10))


async def turns(ready: Callable[[], bool], bound: int = 10_000) -> None:
    """Let the loop turn until `ready` (the async twin of `until`, bounded in turns)."""
    for _ in range(bound):
        if ready():
            return
        await asyncio.sleep(0.001)
    raise AssertionError("the loop turned without it happening")


def test_a_store_call_is_sent_only_after_the_held_writes():
    async def test() -> None:
        store = Inbox()
        held = HeldWrites(lambda: ref(store))
        written: list[str] = []
        held.store_later(lambda s: "first", written.append)
        held.store_later(lambda s: "second", written.append)
        assert store.told == []  # held until the answer is out
        read = asyncio.ensure_future(held.store(lambda s: "read"))
        await turns(lambda: len(store.told) == 3)
        assert store.calls() == ["first", "second", "read"]
        store.answer()
        assert await read == "read"
        await turns(lambda: len(written) == 2)
        assert written == ["first", "second"]  # each write's follow-up, once it answered

    run(test)


def test_a_told_write_goes_after_the_held_writes_too():
    async def test() -> None:
        store = Inbox()
        held = HeldWrites(lambda: ref(store))
        held.store_later(lambda s: "held", lambda _: None)
        held.store_tell(lambda s: "told")
        assert store.calls() == ["held", "told"]
        assert store.told[1].reply is None  # nobody waits for it

    run(test)


def test_the_held_work_runs_once_the_answer_is_out_after_the_writes():
    async def test() -> None:
        store = Inbox()
        held = HeldWrites(lambda: ref(store))
        seen: list[int] = []
        held.after_answer(lambda: seen.append(len(store.told)))
        held.store_later(lambda s: "write", lambda _: None)
        assert seen == [] and store.told == []
        held.answered()
        assert seen == [1]  # the write was sent before the held work ran

    run(test)


def test_without_an_answer_the_held_writes_go_after_the_delay(monkeypatch):
    monkeypatch.setattr(held_module, "WRITE_DELAY", 0.01)

    async def test() -> None:
        store = Inbox()
        held = HeldWrites(lambda: ref(store))
        held.store_later(lambda s: "write", lambda _: None)
        assert store.told == []
        await turns(lambda: store.calls() == ["write"])

    run(test)


def test_a_free_slot_is_granted_at_the_ask_without_a_turn_of_the_loop():
    """The slots are counted on the loop: a cold request's ask wakes no other thread."""

    async def test() -> None:
        gates = Gates(2, 1, 1, wait=10)
        turned: list[int] = []
        asyncio.get_running_loop().call_soon(turned.append, 1)
        ticket = gates.gate_ask("example.test", "agent")
        await ticket.held()
        assert turned == []  # granted before anything else on the loop ran
        ticket.drop()

    run(test)


def test_an_actors_answer_reaches_its_waiter_one_turn_of_the_loop_after_it_comes():
    async def test() -> None:
        reply: Reply[int] = Reply()
        waiting = asyncio.ensure_future(reply.wait(5))
        await asyncio.sleep(0)
        reply.ok(7)  # as an actor answers: through `call_soon_threadsafe`
        waited = 0
        while not waiting.done():
            waited += 1
            await asyncio.sleep(0)
        assert waiting.result() == 7
        assert waited <= 2

    run(test)


def test_a_ticket_dropped_before_its_slots_gives_its_place_back_once():
    async def test() -> None:
        gates = Gates(1, 1, 1, wait=10)
        first = gates.gate_ask("example.test", "agent")
        await first.held()
        second = gates.gate_ask("example.test", "agent")
        assert gates.stats() == {"in_flight": 1, "waiting": 1}
        second.drop()
        second.drop()
        assert gates.stats() == {"in_flight": 1, "waiting": 0}
        first.drop()
        assert gates.stats() == {"in_flight": 0, "waiting": 0}

    run(test)


def test_a_ticket_that_holds_its_slots_releases_them_to_the_next_waiter():
    async def test() -> None:
        gates = Gates(1, 1, 1, wait=10)
        first = gates.gate_ask("example.test", "agent")
        await first.held()
        second = gates.gate_ask("example.test", "agent")
        waiting = asyncio.ensure_future(second.held())
        for _ in range(5):
            await asyncio.sleep(0)
        assert not waiting.done()
        first.drop()
        await waiting
        assert gates.stats() == {"in_flight": 1, "waiting": 0}
        second.drop()
        assert gates.stats() == {"in_flight": 0, "waiting": 0}

    run(test)


def test_a_grant_its_asker_never_waited_for_is_given_back():
    """A cache hit drops the ticket it asked ahead, which may have been granted already."""

    async def test() -> None:
        gates = Gates(1, 1, 1, wait=10)
        gates.gate_ask("example.test", "agent").drop()
        assert gates.stats() == {"in_flight": 0, "waiting": 0}
        await gates.gate_ask("example.test", "agent").held()  # the slot is free again

    run(test)


def test_a_ticket_not_granted_within_the_wait_is_busy_and_gives_its_place_back():
    async def test() -> None:
        gates = Gates(1, 1, 1, wait=0)
        first = gates.gate_ask("example.test", "agent")
        await first.held()
        with pytest.raises(Busy):
            await gates.gate_ask("example.test", "agent").held()
        assert gates.stats() == {"in_flight": 1, "waiting": 0}
        first.drop()
        assert gates.stats() == {"in_flight": 0, "waiting": 0}

    run(test)


def test_a_waiter_for_a_busy_host_does_not_hold_up_another_host():
    async def test() -> None:
        gates = Gates(3, 1, 5, wait=10)
        busy = gates.gate_ask("busy.test", "agent")
        await busy.held()
        queued = gates.gate_ask("busy.test", "agent")
        other = gates.gate_ask("other.test", "agent")
        await other.held()  # granted at once, behind a waiter for the busy host
        assert gates.stats() == {"in_flight": 2, "waiting": 1}
        for ticket in (busy, queued, other):
            ticket.drop()
        assert gates.stats() == {"in_flight": 0, "waiting": 0}

    run(test)


class PoolRoles:
    """The roles a `PdfPool` asks: the pool, and one ExtractWorker per slot."""

    def __init__(self) -> None:
        self.pool_inbox, self.workers = Inbox(), [Inbox(), Inbox()]

    def pool(self) -> Inbox:
        return self.pool_inbox

    def extractors(self) -> list[Inbox]:
        return self.workers


async def _no_cpu(*args: Any) -> Any:
    raise AssertionError("a small body is never spooled to a file")


def _pdfs(roles: PoolRoles, held_work: list[Callable[[], None]]) -> PdfPool:
    return PdfPool(PdfConfig(), roles, None, _no_cpu, held_work.append)  # type: ignore[arg-type]


def test_the_leader_extracts_on_its_slots_worker_and_tells_the_pool_done():
    async def test() -> None:
        roles, held_work = PoolRoles(), list[Callable[[], None]]()
        job = asyncio.ensure_future(_pdfs(roles, held_work).extract(("fleet", "u"), "a", b"%P"))
        pool = roles.pool_inbox
        await turns(lambda: len(pool.told) == 1)
        assert isinstance(pool.told[0], Admit) and pool.told[0].key == ("fleet", "u")
        pool.told[0].reply.ok(Lead(ticket=5, slot=1))
        worker = roles.workers[1]
        await turns(lambda: len(worker.told) == 1)
        assert isinstance(worker.told[0], ExtractRequest) and worker.told[0].pdf == b"%P"
        worker.told[0].reply.ok("pages")
        outcome: object = await job  # the worker's answer is stood in for by a string
        assert outcome == "pages"
        assert pool.told[1:] == [Done(5, value="pages")]
        assert len(held_work) == 1  # the worker's spares start again once the answer is out

    run(test)


def test_a_follower_gets_the_shared_outcome_and_extracts_nothing():
    async def test() -> None:
        roles = PoolRoles()
        job = asyncio.ensure_future(_pdfs(roles, []).extract(("fleet", "u"), "a", b"%P"))
        await turns(lambda: len(roles.pool_inbox.told) == 1)
        roles.pool_inbox.told[0].reply.ok("shared pages")
        outcome: object = await job  # the leader's outcome is stood in for by a string
        assert outcome == "shared pages"
        assert roles.pool_inbox.told[1:] == [] and not any(w.told for w in roles.workers)

    run(test)


def test_an_asker_that_leaves_before_its_slot_gives_its_place_back():
    async def test() -> None:
        roles = PoolRoles()
        job = asyncio.ensure_future(_pdfs(roles, []).extract(("fleet", "u"), "a", b"%P"))
        await turns(lambda: len(roles.pool_inbox.told) == 1)
        job.cancel()
        with pytest.raises(asyncio.CancelledError):
            await job
        assert roles.pool_inbox.told[1:] == [Leave(roles.pool_inbox.told[0].token)]

    run(test)


def test_a_leader_that_leaves_says_so_and_its_job_still_tells_the_pool_done():
    async def test() -> None:
        roles = PoolRoles()
        pdfs = _pdfs(roles, [])
        job = asyncio.ensure_future(pdfs.extract(("fleet", "u"), "a", b"%P"))
        pool = roles.pool_inbox
        await turns(lambda: len(pool.told) == 1)
        pool.told[0].reply.ok(Lead(ticket=6, slot=0))
        await turns(lambda: len(roles.workers[0].told) == 1)
        job.cancel()
        with pytest.raises(asyncio.CancelledError):
            await job
        assert pool.told[1:] == [LeaderGone(6)]
        roles.workers[0].told[0].reply.ok("pages")
        await turns(lambda: not pdfs.jobs)
        assert pool.told[2:] == [Done(6, value="pages")]

    run(test)


class Quiet(pykka.ThreadingActor):
    """An actor that is stopped before it is asked anything."""


def test_asking_a_dead_actor_is_unavailable():
    ref = Quiet.start()
    ref.stop()

    async def test() -> None:
        with pytest.raises(Unavailable):
            await ask(ref, lambda r: StoreCall(lambda s: None, r), 1)

    run(test)


def test_an_actor_that_does_not_answer_in_time_is_an_internal_error():
    async def test() -> None:
        silent = Inbox()
        with pytest.raises(SiftError, match="did not answer in time"):
            await ask(silent, lambda r: StoreCall(lambda s: None, r), 0.01)  # type: ignore[arg-type]

    run(test)


def upstream(gates: Gates, fetcher: Inbox) -> Upstream:
    return Upstream(Guard(), gates, lambda: ref(fetcher), longest=30)


def response(url: str) -> FetchResult:
    return FetchResult(url, url, 200, "OK", "text/plain", None, None, b"hi", False, 0, 0.1)


def test_an_upstream_fetch_waits_for_its_slot_asks_the_fetch_actor_and_gives_the_slot_back():
    async def test() -> None:
        gates, fetcher = Gates(1, 1, 1, wait=10), Inbox()
        url = "http://example.test/page"
        other = gates.gate_ask("example.test", "agent")
        await other.held()  # the host's one slot, taken
        task = asyncio.ensure_future(upstream(gates, fetcher).fetch("agent", url, etag='"v1"'))
        await turns(lambda: gates.stats()["waiting"] == 1)
        for _ in range(20):
            await asyncio.sleep(0)
        assert fetcher.told == [] and not task.done()  # no fetch before the slot
        other.drop()
        await turns(lambda: len(fetcher.told) == 1)
        sent = fetcher.told[0]
        assert isinstance(sent, FetchRequest) and (sent.url, sent.etag) == (url, '"v1"')
        assert gates.stats() == {"in_flight": 1, "waiting": 0}
        sent.reply.ok(response(url))
        assert (await task).status == 200
        assert gates.stats() == {"in_flight": 0, "waiting": 0}

    run(test)


def test_an_upstream_fetch_in_a_ticket_asked_ahead_asks_no_other_slot():
    async def test() -> None:
        gates, fetcher = Gates(1, 1, 1, wait=0), Inbox()
        up = upstream(gates, fetcher)
        ticket = gates.gate_ask("example.test", "agent")
        task = asyncio.ensure_future(up.fetch("agent", "http://example.test/", ticket=ticket))
        await turns(lambda: len(fetcher.told) == 1)  # another ask would wait: busy at once
        fetcher.told[0].reply.ok(response("http://example.test/"))
        await task
        assert gates.stats() == {"in_flight": 0, "waiting": 0}

    run(test)


def test_a_url_the_guard_refuses_asks_neither_a_slot_nor_the_fetch_actor():
    async def test() -> None:
        gates, fetcher = Gates(1, 1, 1, wait=10), Inbox()
        up = upstream(gates, fetcher)
        with pytest.raises(Blocked):
            await up.fetch("agent", "ftp://example.test/file")
        with pytest.raises(Blocked):
            await up.beside("http://example.test:25/robots.txt")
        assert fetcher.told == [] and gates.slots.held == {} and gates.slots.waiting == {}

    run(test)


def test_a_fetch_beside_another_asks_no_slot():
    """A page's robots.txt, read while the page holds its slot."""

    async def test() -> None:
        gates, fetcher = Gates(1, 1, 1, wait=0), Inbox()
        page = gates.gate_ask("example.test", "agent")
        await page.held()  # the page holds the host's one slot
        url = "http://example.test/robots.txt"
        task = asyncio.ensure_future(upstream(gates, fetcher).beside(url))
        await turns(lambda: len(fetcher.told) == 1)
        fetcher.told[0].reply.ok(response(url))
        assert (await task).url == url
        assert gates.stats() == {"in_flight": 1, "waiting": 0}

    run(test)


def test_an_extraction_shown_as_running_is_taken_off_only_by_its_own_end():
    """A fetched document's newest extraction is shown; a local file's first one leads."""
    readings, face = Readings(), cast(Content, "the document")
    first, second = Progress(), Progress()
    readings.start(("fleet", "u"), first, face)
    readings.start(("fleet", "u"), second, face)
    readings.end(("fleet", "u"), first)
    assert readings.any() is second
    reading = readings.get(("fleet", "u"))
    assert reading is not None and reading.progress is second and reading.face == face
    readings.end(("fleet", "u"), second)
    assert readings.get(("fleet", "u")) is None and readings.any() is None
    readings.join(("local", "sha256:x"), first, face)
    readings.join(("local", "sha256:x"), second, face)
    readings.end(("local", "sha256:x"), second)
    assert readings.any() is first


def test_every_retry_hint_says_when():
    """DESIGN §2: a `retry` hint comes with `Retry-After`. A raiser that names no wait (the
    fetcher stopped, the browser did not start, a spooled file gone) gets a short one; one that
    names its own keeps it, and no other hint gets one."""
    from sift.core import errors

    assert errors.Unavailable("fetcher stopped", hint="retry").retry_after == errors.RETRY_AFTER
    assert errors.Unavailable("pdf workers busy", hint="retry", retry_after=10).retry_after == 10
    assert errors.Unavailable("batch disabled").retry_after is None
    assert errors.UpstreamError("refused").retry_after is None
