"""The PDF pool: slots, waiting places, single-flight, one job per caller; workers."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import pytest

from sift.actors.bridge import ThreadReply
from sift.actors.extract import ExtractRequest, ExtractWorker
from sift.actors.pool import Admit, Done, Lead, Leave, PoolActor, PoolCore, Status
from sift.core.config import PdfConfig
from sift.core.errors import Busy, SiftError, Unavailable, Unprocessable
from sift.documents.pdf.runner import Extraction
from tests.support.pdfs import PHRASES, PdfSet


class Rec:
    """A reply that records its one answer."""

    def __init__(self) -> None:
        self.answers: list[tuple[str, Any]] = []

    def ok(self, value: Any) -> None:
        self.answers.append(("ok", value))

    def fail(self, exc: BaseException) -> None:
        self.answers.append(("fail", exc))

    @property
    def one(self) -> tuple[str, Any]:
        assert len(self.answers) == 1, self.answers
        return self.answers[0]


def admit(core: PoolCore, url: str, caller: str) -> tuple[Admit, Rec, str]:
    rec = Rec()
    msg = Admit(key=("fleet", url), caller=caller, reply=rec)
    kind, _job = core.admit(msg)
    return msg, rec, kind


def test_seventh_concurrent_request_gets_503() -> None:
    core = PoolCore(slots=2, queue=4)
    kinds = [admit(core, f"u{i}", f"c{i}")[2] for i in range(6)]
    assert kinds == ["lead", "lead", "queued", "queued", "queued", "queued"]
    with pytest.raises(Unavailable, match="pdf workers busy") as err:
        admit(core, "u6", "c6")
    assert err.value.status == 503 and err.value.retry_after == 10
    assert core.status().running == 2 and core.status().queued == 4


def test_single_flight_one_leader_followers_share() -> None:
    core = PoolCore()
    lead_msg, lead_rec, kind = admit(core, "same", "c1")
    assert kind == "lead"
    lead = lead_rec.one[1]
    assert isinstance(lead, Lead) and lead.ticket == lead_msg.token and lead.slot in (0, 1)
    followers = [admit(core, "same", f"c{i}") for i in (2, 3)]
    assert [f[2] for f in followers] == ["follow", "follow"]
    assert core.status().followers == {("fleet", "same"): 2}
    assert core.status().running == 1
    core.done(lead.ticket, "the result", None)
    assert [f[1].one for f in followers] == [("ok", "the result")] * 2
    assert admit(core, "same", "c4")[2] == "lead"  # outcomes are not cached


def test_an_error_reaches_every_follower() -> None:
    core = PoolCore()
    _, lead_rec, _ = admit(core, "u", "c1")
    _, rec, _ = admit(core, "u", "c2")
    err = Unprocessable("pdf is encrypted")
    core.done(lead_rec.one[1].ticket, None, err)
    assert rec.one == ("fail", err)


def test_one_job_per_caller() -> None:
    core = PoolCore()
    admit(core, "a", "c1")
    with pytest.raises(Busy) as err:
        admit(core, "b", "c1")
    assert err.value.status == 429 and err.value.retry_after
    assert admit(core, "a", "c1")[2] == "follow"  # joining is always allowed


def test_done_starts_the_next_waiter_in_order() -> None:
    core = PoolCore(slots=1, queue=4)
    _, first, _ = admit(core, "u0", "c0")
    _, second, _ = admit(core, "u1", "c1")
    _, third, _ = admit(core, "u2", "c2")
    assert second.answers == [] and third.answers == []
    started = core.done(first.one[1].ticket, 1, None)
    assert [j.key for j in started] == [("fleet", "u1")]
    assert isinstance(second.one[1], Lead) and third.answers == []


def test_waiter_timeout_frees_its_place() -> None:
    core = PoolCore(slots=2, queue=4)
    for i in range(2):
        admit(core, f"run{i}", f"r{i}")
    queued = [admit(core, f"q{i}", f"q{i}") for i in range(4)]
    _, follower, _ = admit(core, "q0", "x")
    job = core.jobs[("fleet", "q0")]
    core.expire(job.id)
    assert queued[0][1].one[0] == "fail" and isinstance(queued[0][1].one[1], Unavailable)
    assert isinstance(follower.one[1], Unavailable)
    assert admit(core, "new", "n")[2] == "queued"  # the place is free again


def test_leaving_waiter_frees_its_place_or_passes_it_on() -> None:
    core = PoolCore(slots=1, queue=1)
    _, running, _ = admit(core, "run", "r")
    alone, _, _ = admit(core, "alone", "a")
    core.leave(alone.token)
    assert core.status().queued == 0
    starter, starter_rec, _ = admit(core, "shared", "s")
    follower, follower_rec, _ = admit(core, "shared", "f")
    core.leave(starter.token)
    assert core.status().queued == 1  # the job stays for its follower
    core.done(running.one[1].ticket, None, None)
    assert starter_rec.answers == []
    lead = follower_rec.one[1]
    assert isinstance(lead, Lead) and lead.ticket == follower.token


def test_follower_that_leaves_is_not_answered() -> None:
    core = PoolCore()
    _, lead_rec, _ = admit(core, "u", "c1")
    gone, gone_rec, _ = admit(core, "u", "c2")
    _, stays, _ = admit(core, "u", "c3")
    core.leave(gone.token)
    core.done(lead_rec.one[1].ticket, "v", None)
    assert gone_rec.answers == [] and stays.one == ("ok", "v")


def test_a_leader_that_left_before_its_lead_passes_the_slot_on_or_frees_it() -> None:
    """The asker stopped waiting just as the pool gave it a slot (its `Lead` unread): nobody
    would ever say `Done`. With a follower, the follower leads the same job on that slot;
    without one, the slot frees and the next waiter starts (it used to stay held until the
    job's lease ran out, 10 minutes, answering 503 to everyone queued behind it)."""
    core = PoolCore(slots=1, queue=2)
    lead_msg, _unread, _ = admit(core, "u", "c1")
    follower, rec, _ = admit(core, "u", "c2")
    assert core.leave(lead_msg.token) == []
    lead = rec.one[1]
    assert isinstance(lead, Lead) and lead.ticket == follower.token and lead.slot == 0
    assert core.status().running == 1
    assert admit(core, "other", "c1")[2] == "queued"  # c1 leads nothing any more
    alone, _unread, _ = admit(core, "alone", "c3")
    core.done(lead.ticket, "v", None)  # "other" starts
    other = next(j for j in core.by_id.values() if j.slot is not None)
    assert other.key == ("fleet", "other")
    core.done(other.ticket, "w", None)  # "alone" starts; its asker left before reading Lead
    _, behind, kind = admit(core, "next", "c4")
    assert kind == "queued" and behind.answers == []
    started = core.leave(alone.token)
    assert [j.key for j in started] == [("fleet", "next")]
    assert isinstance(behind.one[1], Lead) and core.status().running == 1


def test_lease_over_fails_followers_and_frees_the_slot() -> None:
    core = PoolCore(slots=1, queue=1)
    _, lead_rec, _ = admit(core, "u", "c1")
    _, rec, _ = admit(core, "u", "c2")
    _, waiting, _ = admit(core, "w", "c3")
    core.lease_over(core.jobs[("fleet", "u")].id)
    assert rec.one[0] == "fail" and isinstance(rec.one[1], SiftError)
    assert isinstance(waiting.one[1], Lead)
    assert core.done(lead_rec.one[1].ticket, "late", None) == []  # a late Done is ignored


@pytest.fixture
def pool() -> Iterator[Any]:
    ref = PoolActor.start(slots=2, queue=4, wait=60)
    yield ref
    ref.stop()


@pytest.fixture
def quick_pool() -> Iterator[Any]:
    """Waiters give up after 0.3 s."""
    ref = PoolActor.start(slots=1, queue=4, wait=0.3)
    yield ref
    ref.stop()


def _admit(pool: Any, url: str, caller: str) -> tuple[Admit, ThreadReply[Any]]:
    reply: ThreadReply[Any] = ThreadReply()
    msg = Admit(key=("fleet", url), caller=caller, reply=reply)
    pool.tell(msg)
    return msg, reply


def _status(pool: Any) -> Any:
    reply: ThreadReply[Any] = ThreadReply()
    pool.tell(Status(reply=reply))
    return reply.wait(10)


def test_actor_rules(pool: Any) -> None:
    leads = [_admit(pool, f"u{i}", f"c{i}")[1].wait(10) for i in range(2)]
    assert sorted(lead.slot for lead in leads) == [0, 1]
    waiters = [_admit(pool, f"q{i}", f"q{i}") for i in range(4)]
    _, seventh = _admit(pool, "x", "x")
    with pytest.raises(Unavailable):
        seventh.wait(10)
    _, follower = _admit(pool, "u0", "f")
    pool.tell(Done(ticket=leads[0].ticket, value="shared"))
    assert follower.wait(10) == "shared"
    lead = waiters[0][1].wait(10)  # the freed slot went to the first waiter
    assert isinstance(lead, Lead) and lead.slot == leads[0].slot
    status = _status(pool)
    assert (status.running, status.queued) == (2, 3)


def test_actor_waiters_time_out(quick_pool: Any) -> None:
    _admit(quick_pool, "run", "r")[1].wait(10)
    waiters = [_admit(quick_pool, f"q{i}", f"q{i}")[1] for i in range(4)]
    for reply in waiters:
        with pytest.raises(Unavailable, match="pdf workers busy"):
            reply.wait(10)
    status = _status(quick_pool)
    assert (status.running, status.queued) == (1, 0)


def test_actor_leave_and_shutdown_answer_everyone(pool: Any) -> None:
    _admit(pool, "a", "a")[1].wait(10)
    _admit(pool, "b", "b")[1].wait(10)
    gone, _ = _admit(pool, "c", "c")
    pool.tell(Leave(token=gone.token))
    assert _status(pool).queued == 0
    _, follower = _admit(pool, "a", "z")
    pool.stop()
    with pytest.raises(Unavailable, match="shutting down"):
        follower.wait(10)


def test_extract_worker(pdfs: PdfSet) -> None:
    worker = ExtractWorker.start(PdfConfig())
    try:
        reply: ThreadReply[Extraction] = ThreadReply()
        worker.tell(ExtractRequest(pdf=pdfs.three, reply=reply))
        ex = reply.wait(60)
        assert PHRASES[2] in ex.texts[1]
        bad: ThreadReply[Extraction] = ThreadReply()
        worker.tell(ExtractRequest(pdf=pdfs.scanned, reply=bad))
        with pytest.raises(Unprocessable) as err:
            bad.wait(60)
        assert err.value.hint == "ocr"
        assert worker.is_alive()
    finally:
        worker.stop()


def test_extract_worker_deadline(pdfs: PdfSet) -> None:
    slow = ["--allow-test-hooks", "--test-sleep", "30"]
    worker = ExtractWorker.start(PdfConfig(), child_args=slow)
    try:
        reply: ThreadReply[Extraction] = ThreadReply()
        worker.tell(ExtractRequest(pdf=pdfs.three, reply=reply, deadline_s=1))
        with pytest.raises(Unprocessable, match="timed out"):
            reply.wait(30)
    finally:
        worker.stop()


def test_a_job_nobody_wants_is_stopped_and_a_followed_one_goes_on() -> None:
    """Rule 5: the leader gone and no follower → the job's `stop`; followers keep it going
    until the last of them leaves."""
    core = PoolCore()
    stopped: list[str] = []
    alone = Admit(
        key=("fleet", "alone"), caller="c1", reply=Rec(), stop=lambda: stopped.append("alone")
    )
    core.admit(alone)
    core.abandon(alone.token)
    assert stopped == ["alone"]
    shared = Admit(
        key=("fleet", "shared"), caller="c2", reply=Rec(), stop=lambda: stopped.append("shared")
    )
    core.admit(shared)
    follower, _rec, kind = admit(core, "shared", "c3")
    assert kind == "follow"
    core.abandon(shared.token)
    assert stopped == ["alone"]  # a follower still wants it
    core.leave(follower.token)
    assert stopped == ["alone", "shared"]
