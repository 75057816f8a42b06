"""One contract, both backends: every store operation behaves the same on SQLite (the embedded
default) and on PostgreSQL (several replicas, one store), through the operations' own calls.
The PostgreSQL cases run on a throwaway cluster (tests/support/pg.py)."""

from __future__ import annotations

import threading
import time

import msgspec
import psycopg
import pytest

from sift.core.errors import SchemaTooNew
from sift.core.types import BatchJob, BatchTarget, PageFacts, TargetOutcome
from sift.store.batch import RESTART
from sift.store.postgres import PgStore, redact
from sift.store.postgres.schema import MIGRATIONS, migrate
from sift.store.protocol import Store
from sift.store.sqlite.connection import connect
from sift.store.sqlite.store import SqliteStore
from tests.support.store_records import doc, job, pdf, targets

TTL = 100.0


@pytest.fixture(params=["sqlite", "postgresql"])
def store(request, tmp_path):
    if request.param == "sqlite":
        s: Store = SqliteStore(connect(tmp_path / "sift.db"))
    else:
        s = PgStore(request.getfixturevalue("pg_cluster").create(), replica="r1")
        s.open(wait=5)
    yield s
    s.close()


def target(s: Store, job_id: str, number: int) -> BatchTarget:
    found = s.batch_target(job_id, number)
    assert found is not None, (job_id, number)
    return found


def done(body: bytes = b'{"success": true}') -> TargetOutcome:
    return TargetOutcome("done", result=body, code=200)


def test_content_round_trip_light_and_body(store):
    stored = store.content_put(doc(), 10**6)
    assert stored.evicted == [] and stored.total > 0
    got = store.content_get("http://127.0.0.1/a", "fleet")
    assert got == doc(body=None, size=got.size) and got.size > 0
    assert store.content_body("http://127.0.0.1/a", "fleet") == b"<p>hello</p>"
    assert store.content_get("http://127.0.0.1/a", "restricted") is None  # per caller class
    assert store.doc_get("http://127.0.0.1/a", "fleet").title == "T"
    again = store.content_put(doc(text="again", etag=None), 10**6)  # replaces
    assert store.content_get("http://127.0.0.1/a", "fleet").text == "again"
    assert store.cache_bytes() == again.total


def test_content_keeps_what_the_fetch_learned_beside_the_text(store):
    facts = PageFacts(
        source="site-markdown",
        x_robots_tag="noai",
        meta_robots="noindex",
        content_signal={"ai-train": "no"},
        robots_rule="Disallow: /x",
        robots_allowed=False,
        robots_read=True,
    )
    store.content_put(doc(facts=facts), 10**6)
    assert store.content_get("http://127.0.0.1/a", "fleet").facts == facts
    store.content_put(doc(), 10**6)  # none learned: none kept
    assert store.content_get("http://127.0.0.1/a", "fleet").facts == PageFacts()


def test_content_refresh_keeps_validators_unless_renewed(store):
    store.content_put(doc(), 10**6)
    when = store.content_refresh("http://127.0.0.1/a", "fleet", None, "Tue")
    got = store.content_get("http://127.0.0.1/a", "fleet")
    assert (got.fetched_at, got.etag, got.last_modified) == (when, '"e1"', "Tue")


def test_eviction_is_lru_over_pages_and_pdfs_never_the_new_one(store):
    a = store.content_put(doc("http://127.0.0.1/1"), 10**6)
    size = a.total
    store.pdf_put(pdf(), [(1, "p" * 100, None)], 10**6)
    store.content_put(doc("http://127.0.0.1/2"), 10**6)
    store.content_touch([("http://127.0.0.1/1", "fleet")], time.time() + 10)  # 1 is recent
    total = store.cache_bytes()
    stored = store.content_put(doc("http://127.0.0.1/3"), total + size - 1)
    # The PDF and page 2 were older than page 1: the PDF goes first, and that is enough.
    assert [(e[0], e[1]) for e in stored.evicted] == [("pdf", "http://127.0.0.1/d.pdf")]
    assert store.pdf_get("http://127.0.0.1/d.pdf", "fleet") is None
    assert store.pdf_pages("p1", "fleet", 1, 9) == []  # its pages went with it
    stored = store.content_put(doc("http://127.0.0.1/4"), 1)  # a tiny budget: all but the new
    assert store.content_get("http://127.0.0.1/4", "fleet") is not None
    assert store.content_get("http://127.0.0.1/1", "fleet") is None
    assert stored.total == store.cache_bytes()


def test_pdf_pages_shared_by_hash_and_dropped_with_the_last_document(store):
    pages = [(1, "one", None), (2, "two", "scanned"), (3, "three", None)]
    store.pdf_put(pdf(), pages, 10**6)
    store.pdf_put(pdf("http://127.0.0.1/copy.pdf"), pages, 10**6)
    got = store.pdf_get("http://127.0.0.1/d.pdf", "fleet")
    assert got.meta == {"pages": 3} and got.last_modified == "Mon"
    assert store.pdf_pages("p1", "fleet", 2, 3) == [(2, "two", "scanned"), (3, "three", None)]
    assert store.pdf_pages("p1", "restricted", 1, 3) == []
    store.pdf_delete("http://127.0.0.1/d.pdf", "fleet")
    assert len(store.pdf_pages("p1", "fleet", 1, 3)) == 3  # the copy still uses them
    store.pdf_put(pdf("http://127.0.0.1/copy.pdf", "p2"), [(1, "new", None)], 10**6)
    assert store.pdf_pages("p1", "fleet", 1, 3) == []  # replaced: the old pages go
    assert store.pdf_refresh("http://127.0.0.1/copy.pdf", "fleet", '"x"', None) > 1000
    assert store.pdf_get("http://127.0.0.1/copy.pdf", "fleet").etag == '"x"'


def test_digests_and_embeddings(store):
    assert store.digest_get("h", "fleet", "q", "m") is None
    store.digest_put("h", "fleet", "q", "m", {"answer": "a"})
    store.digest_put("h", "fleet", "q", "m", {"answer": "b"})
    assert store.digest_get("h", "fleet", "q", "m") == {"answer": "b"}
    assert store.digest_get("h", "restricted", "q", "m") is None
    vec = b"\x00\x00\x80?" * 2
    assert store.embed_put("h", "fleet", "e", [(0, vec), (2, vec)]) == 2
    assert store.embed_put("h", "fleet", "e", [(2, vec)]) == 2
    assert store.embed_have("h", "fleet", "e") == [0, 2]
    assert store.embed_count("h", "restricted", "e") == 0
    assert store.embed_vectors("h", "fleet", "e") == [vec, vec]
    store.content_put(doc(text="kept"), 10**6)  # content hash "h-kept" is cached
    store.digest_put("h-kept", "fleet", "q", "m", {"answer": "c"})
    assert store.digest_prune(time.time() - 60) == 0  # used just now
    assert store.digest_prune(time.time() + 1) == 3  # not the one whose content is cached
    assert store.digest_get("h-kept", "fleet", "q", "m") == {"answer": "c"}


def test_batch_round_trip_reuse_and_caps(store):
    assert store.batch_submit(job("j1"), targets(3), (1, 8), TTL) == ("created", job("j1"))
    assert store.batch_job("j1", 1000.0, TTL) == job("j1")
    ts = store.batch_targets("j1")
    assert [(t.idx, t.status, t.result) for t in ts] == [(i, "pending", None) for i in range(3)]
    assert ts[0].options == b'{"url": "x"}'
    verdict, same = store.batch_submit(job("j2", now=1050.0), targets(), (1, 8), TTL)
    assert verdict == "reused" and same.id == "j1" and same.lease == 1050.0
    assert store.batch_submit(job("j3", key="other"), targets(), (1, 8), TTL) == (
        "caller_busy",
        None,
    )
    assert store.batch_submit(job("b1", caller="b", key="x"), targets(), (1, 2), TTL)[0] == (
        "created"
    )
    assert store.batch_submit(job("c1", caller="c", key="y"), targets(), (1, 2), TTL) == (
        "busy",
        None,
    )
    assert store.batch_live_counts("agent") == (1, 2)
    store.batch_finish_job("j1", "done")
    assert store.batch_live_counts("agent") == (0, 1)
    assert store.batch_find("k", "agent", 1000.0).id == "j1"  # done jobs are reused
    store.batch_submit(job("f1", caller="f", key="f"), targets(), (1, 8), TTL)
    store.batch_cancel("f1")
    assert store.batch_find("f", "f", 1000.0) is None  # cancelled ones are not


def fc_job(job_id: str, caller: str = "agent", now: float = 1000.0) -> BatchJob:
    return msgspec.structs.replace(job(job_id, caller, key=job_id, now=now), kind="crawl")


def test_firecrawl_jobs_wait_their_turn_and_start_in_order(store):
    """Beyond the live-job caps a Firecrawl job waits (not live, never swept, visible to its
    owner), bounded per caller and in total; started oldest first as room frees, a new one
    behind those already waiting."""
    caps, queue = (1, 8), (2, 3)
    assert store.batch_submit(fc_job("a1"), targets(), caps, TTL, queue)[0] == "created"
    assert store.batch_submit(fc_job("a2", now=1001.0), targets(), caps, TTL, queue)[0] == (
        "waiting"
    )
    assert store.batch_submit(fc_job("a3", now=1002.0), targets(), caps, TTL, queue)[0] == (
        "waiting"
    )
    assert store.batch_submit(fc_job("a4"), targets(), caps, TTL, queue) == (
        "caller_queue_full",
        None,
    )
    # another caller with room still queues behind the waiting ones (order), up to the total
    assert store.batch_submit(fc_job("b1", "b", 1003.0), targets(), caps, TTL, queue)[0] == (
        "waiting"
    )
    assert store.batch_submit(fc_job("c1", "c"), targets(), caps, TTL, queue) == (
        "queue_full",
        None,
    )
    assert store.batch_live_counts("agent") == (1, 1)
    assert store.batch_job("a2", 1e9, TTL).status == "waiting"  # never lapses while it waits
    assert store.batch_sweep(1e9, TTL) == 0
    assert [j.id for j in store.batch_held_jobs("agent", "fleet", "crawl")] == ["a1", "a2", "a3"]
    started = store.batch_promote(caps, 2000.0)  # b1 fits; the caller's a2 waits for a1
    assert [(j.id, j.status, len(t)) for j, t in started.jobs] == [("b1", "queued", 3)]
    store.batch_finish_job("a1", "done")
    assert [j.id for j, _ in store.batch_promote(caps, 2001.0).jobs] == ["a2"]
    assert store.batch_promote(caps, 2002.0).jobs == []
    assert store.batch_cancel("a3") == (True, "cancelled")  # a waiting job is cancelled too
    assert store.batch_submit(job("v1", "v", "v"), targets(), (1, 2), TTL) == ("busy", None)


def test_batch_targets_count_once_lease_sweep_and_budget(store):
    store.batch_submit(job("j1", n=2), targets(2), (5, 8), TTL)
    store.batch_target_running("j1", 0)
    assert store.batch_job("j1", 1000.0, TTL).status == "running"
    store.batch_target_pending("j1", 0)
    assert store.batch_target("j1", 0).status == "pending"
    assert store.batch_finish_target("j1", 0, done(b"12345"), 1010.0, 10**9) == (True, 0)
    assert store.batch_finish_target("j1", 0, done(b"xx"), 1020.0, 10**9) == (False, 0)
    failed = TargetOutcome("failed", error="blocked", code=403)
    store.batch_finish_target("j1", 1, failed, 1030.0, 10**9)
    j = store.batch_job("j1", 1030.0, TTL)
    assert (j.targets_done, j.lease, j.nbytes) == (2, 1030.0, 5 + len("blocked"))
    assert store.batch_target("j1", 0).result == b"12345"
    assert store.batch_targets("j1", with_results=True)[1].code == 403
    assert store.batch_finish_job("j1", "partial") == "partial"
    store.batch_touch("j1", 1020.0)  # never backwards
    assert store.batch_job("j1", 1030.0 + TTL + 1, TTL) is None  # lapsed reads as gone
    for i, lease in enumerate((300.0, 100.0)):
        store.batch_submit(job(f"f{i}", key=f"k{i}", now=lease), targets(1), (5, 8), TTL)
        store.batch_finish_target(f"f{i}", 0, done(b"x" * 100), lease, 10**9)
        store.batch_finish_job(f"f{i}", "done")
    assert store.batch_evict(store.batch_nbytes() - 1, keep="j1") == 1  # f1: oldest lease
    assert store.batch_job("f1", 0, 10**9) is None and store.batch_job("f0", 0, 10**9)
    assert store.batch_sweep(2000.0, TTL) == 2
    assert store.batch_targets("j1") == []


def test_a_jobs_kind_and_spec_read_back_and_extract_jobs_bounded_apart(store):
    """A crawl's bounds (`spec`) come back with its job, on a read and on a resume. Extract
    jobs do not count against the batch caps; at most `cap` are kept, the oldest ended one
    going for a new one; none ended, none more; an ended one goes after an hour."""
    crawl = msgspec.structs.replace(job("c1", key="c"), kind="crawl", spec=b'{"limit": 5}')
    assert store.batch_submit(crawl, targets(1), (1, 8), TTL)[0] == "created"
    assert store.batch_job("c1", 1000.0, TTL) == crawl
    assert store.batch_resume(RESTART, 1001.0).jobs[0][0].spec == b'{"limit": 5}'
    for i in range(2):
        ex = msgspec.structs.replace(job(f"x{i}", key=f"x{i}", now=1000.0 + i), kind="extract")
        assert store.batch_submit(ex, targets(1), (2, 2), TTL)[0] == "created"  # caller busy: no
    late = msgspec.structs.replace(job("x2", key="x2", now=1010.0), kind="extract")
    assert store.batch_submit(late, targets(1), (2, 2), TTL) == ("busy", None)
    store.batch_finish_job("x1", "done")
    assert store.batch_submit(late, targets(1), (2, 2), TTL)[0] == "created"
    assert store.batch_job("x1", 1010.0, TTL) is None  # the ended one made room
    assert store.batch_live_counts("agent") == (1, 1)  # the crawl alone
    store.batch_finish_job("x2", "done")
    assert store.batch_sweep(1010.0 + 3601, TTL) == 1  # x2, an hour after it ended
    assert store.batch_job("c1", 1010.0 + 3601, TTL) is not None


def test_resume_tries_a_target_in_flight_once_more_then_fails_it(store):
    store.batch_submit(job("run", key="1"), targets(3), (5, 8), TTL)
    store.batch_submit(job("fin", key="3"), targets(1), (5, 8), TTL)
    store.batch_target_running("run", 0)
    store.batch_finish_target("run", 0, done(), 1001.0, 10**9)
    store.batch_target_running("run", 1)
    store.batch_finish_job("fin", "done")
    resumed = store.batch_resume(RESTART, 2000.0)
    assert [j.id for j, _ in resumed.jobs] == ["run"] and resumed.failed == 0
    assert [t.status for t in resumed.jobs[0][1]] == ["done", "pending", "pending"]
    store.batch_target_running("run", 1)
    again = store.batch_resume(RESTART, 2001.0)
    assert again.failed == 1 and again.jobs[0][0].targets_done == 2
    assert [t.status for t in store.batch_targets("run")] == ["done", "failed", "pending"]
    assert store.batch_target("run", 1).error.startswith("restart")


def test_probe_says_the_store_takes_writes(store):
    assert store.probe() is True


# -- PostgreSQL only ---------------------------------------------------------------------------


def test_caps_hold_under_concurrent_submits(pg_cluster):
    """Many submitters at once (as from several replicas): never more live jobs than the cap."""
    url = pg_cluster.create()
    stores = [PgStore(url, size=2) for _ in range(3)]
    for s in stores:
        s.open(wait=5)
    verdicts: list[str] = []

    def submit(s: PgStore, i: int) -> None:
        verdicts.append(
            s.batch_submit(job(f"j{i}", caller=f"c{i}", key=f"k{i}"), targets(1), (1, 3), TTL)[0]
        )

    threads = [threading.Thread(target=submit, args=(stores[i % 3], i)) for i in range(12)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert sorted(verdicts) == ["busy"] * 9 + ["created"] * 3
    assert stores[0].batch_live_counts("x") == (0, 3)
    for s in stores:
        s.close()


def test_schema_is_versioned_upgraded_and_a_newer_one_refused(pg_cluster):
    url = pg_cluster.create()
    with psycopg.connect(url, autocommit=True) as conn:
        assert migrate(conn, MIGRATIONS[:1]) == 1  # an older sift's database
    s = PgStore(url, replica="r1")
    s.open(wait=5)  # upgraded on start
    s.batch_submit(job("j1"), targets(1), (1, 8), TTL)
    s.close()
    newest = len(MIGRATIONS)
    with psycopg.connect(url, autocommit=True) as conn:
        assert conn.execute("SELECT MAX(version) FROM schema_version").fetchone() == (newest,)
        assert conn.execute("SELECT runner FROM batch_job").fetchone() == ("r1",)
        assert migrate(conn, [*MIGRATIONS, "CREATE TABLE later (x INTEGER)"]) == newest + 1
    s = PgStore(url)
    with pytest.raises(SchemaTooNew, match="newer than this sift"):
        s.open(wait=5)
    s.close()


def test_the_password_is_never_in_what_is_logged():
    assert "hunter2" not in redact("postgresql://sift:hunter2@db.example:5432/sift")
    assert "db.example" in redact("postgresql://sift:hunter2@db.example:5432/sift")


def test_a_replica_starting_again_resumes_only_its_own_jobs(pg_cluster):
    url = pg_cluster.create()
    mine, peer = PgStore(url, replica="a"), PgStore(url, replica="b")
    for s in (mine, peer):
        s.open(wait=5)
    mine.batch_submit(job("ja", caller="a"), targets(2), (1, 8), TTL)
    peer.batch_submit(job("jb", caller="b"), targets(2), (1, 8), TTL)
    peer.batch_target_running("jb", 0)
    assert [j.id for j, _ in mine.batch_resume(RESTART, 2000.0).jobs] == ["ja"]
    assert target(mine, "jb", 0).status == "running"  # the peer's is left alone
    for s in (mine, peer):
        s.close()


def test_a_waiting_job_is_started_by_the_replica_that_frees_room(pg_cluster):
    url = pg_cluster.create()
    a, b = PgStore(url, replica="a"), PgStore(url, replica="b")
    for s in (a, b):
        s.open(wait=5)
    a.batch_submit(fc_job("j1"), targets(), (1, 8), TTL, (5, 5))
    assert a.batch_submit(fc_job("j2", now=1001.0), targets(), (1, 8), TTL, (5, 5))[0] == (
        "waiting"
    )
    b.batch_finish_job("j1", "done")
    assert [j.id for j, _ in b.batch_promote((1, 8), 2000.0).jobs] == ["j2"]
    assert a.batch_promote((1, 8), 2000.0).jobs == []  # started once
    assert [j.id for j, _ in b.batch_resume(RESTART, 2001.0).jobs] == ["j2"]  # b runs it
    for s in (a, b):
        s.close()


def test_a_lapsed_lease_is_taken_over_once_and_the_old_runner_is_refused(pg_cluster):
    url = pg_cluster.create()
    a, b, c = (PgStore(url, replica=r, lease=10.0) for r in "abc")
    for s in (a, b, c):
        s.open(wait=5)
    now = time.time()
    a.batch_submit(job("j1", now=now), targets(3), (5, 8), TTL)
    a.batch_target_running("j1", 0)
    assert b.batch_claim(RESTART, now + 5, 4).jobs == []  # a's lease holds
    assert a.batch_heartbeat(now + 5, 1, ["j1"]) == ["j1"]  # renewed to now + 15
    assert b.batch_claim(RESTART, now + 12, 4).jobs == []
    took: list[list[str]] = []

    def claim(s: PgStore) -> None:
        took.append([j.id for j, _ in s.batch_claim(RESTART, now + 20, 4).jobs])

    threads = [threading.Thread(target=claim, args=(s,)) for s in (b, c)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert sorted(took) == [[], ["j1"]]  # one replica took it; the other skipped it
    winner = b if b.batch_heartbeat(now + 21, 1, ["j1"]) == ["j1"] else c
    assert [t.status for t in winner.batch_targets("j1")] == ["pending"] * 3  # tried again
    assert a.batch_heartbeat(now + 21, 1, ["j1"]) == []  # a no longer holds it
    assert a.batch_target_running("j1", 0) == "lost"
    assert a.batch_finish_target("j1", 0, done(b"late"), now + 21, 10**9) == (False, 0)
    assert winner.batch_finish_target("j1", 0, done(b"mine"), now + 21, 10**9) == (True, 0)
    assert target(winner, "j1", 0).result == b"mine"
    for s in (a, b, c):
        s.close()


def _stolen(s: PgStore, now: float, limit: int) -> list[str]:
    return [j.id for j, _ in s.batch_steal(now, limit).jobs]


def test_a_replica_with_room_takes_waiting_jobs_from_an_oversubscribed_one(pg_cluster):
    url = pg_cluster.create()
    a, b = PgStore(url, replica="a", lease=10.0), PgStore(url, replica="b", lease=10.0)
    for s in (a, b):
        s.open(wait=5)
    now = time.time()
    for i in range(3):
        a.batch_submit(job(f"j{i}", key=f"k{i}", now=now + i), targets(2), (5, 8), TTL)
    crawl = msgspec.structs.replace(job("c", key="c", now=now - 1), kind="crawl")
    a.batch_submit(crawl, targets(2), (5, 8), TTL)  # its frontier is in a's memory
    a.batch_heartbeat(now, 4, ["c", "j0", "j1", "j2"])  # 4 jobs, 4 workers: not oversubscribed
    assert _stolen(b, now, 4) == []
    a.batch_heartbeat(now, 1, ["c", "j0", "j1", "j2"])
    a.batch_target_running("j0", 0)  # j0 runs at a: it stays there
    assert _stolen(b, now, 1) == ["j1"]  # the oldest waiting one, within b's room
    assert a.batch_target_running("j1", 0) == "lost"  # a learns at its next mark
    assert target(a, "j1", 0).status == "pending"
    assert b.batch_target_running("j1", 0) == "running"
    assert _stolen(b, now, 4) == ["j2"]  # a's excess left: 3 live jobs (and a crawl) - 1
    assert _stolen(b, now, 4) == []  # a holds no more than its workers
    assert sorted(a.batch_heartbeat(now + 1, 1, ["c", "j0", "j1", "j2"])) == [
        "c",
        "j0",
    ]  # or learns at its beat
    assert a.batch_finish_target("j2", 0, done(b"late"), now + 1, 10**9) == (False, 0)
    assert b.batch_finish_target("j1", 0, done(b"b's"), now + 1, 10**9) == (True, 0)
    for s in (a, b):
        s.close()


def _race(a: PgStore, b: PgStore, job_id: str, now: float) -> tuple[str, bool]:
    """a marks the job's first target while b steals, both at once: (a's answer, b took it)."""
    got: dict[str, object] = {}
    gate = threading.Barrier(2)

    def mark() -> None:
        gate.wait()
        got["mark"] = a.batch_target_running(job_id, 0)

    def steal() -> None:
        gate.wait()
        got["stole"] = _stolen(b, now, 1) == [job_id]

    threads = [threading.Thread(target=mark), threading.Thread(target=steal)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    return str(got["mark"]), bool(got["stole"])


def test_a_mark_and_a_steal_racing_agree_on_who_runs_the_target(pg_cluster):
    """The old runner's mark and the steal serialise on the job's row: the target either
    runs at the old runner (and the job stays) or the job moves and the mark answers lost."""
    url = pg_cluster.create()
    a, b = PgStore(url, replica="a", lease=30.0), PgStore(url, replica="b", lease=30.0)
    for s in (a, b):
        s.open(wait=5)
    now = time.time()
    a.batch_submit(job("busy", key="busy", now=now - 1), targets(1), (99, 99), TTL)
    a.batch_target_running("busy", 0)  # a holds one more job than its one worker
    a.batch_heartbeat(now, 1, ["busy"])
    for i in range(100):
        a.batch_submit(job(f"r{i}", key=f"r{i}", now=now + i), targets(1), (99, 99), TTL)
        mark, stole = _race(a, b, f"r{i}", now)
        assert (mark == "lost") == stole, (mark, stole)
        holder = b if stole else a
        assert holder.batch_target_running(f"r{i}", 0) != "lost"
        assert holder.batch_finish_target(f"r{i}", 0, done(), now, 10**9) == (True, 0)
        a.batch_finish_job(f"r{i}", "done")
    for s in (a, b):
        s.close()


def test_a_job_its_replica_does_not_hold_in_memory_lapses_and_is_taken_over(pg_cluster):
    """A claim whose answer never came back: the heartbeat renews only what the runner holds
    in memory, so the orphan lapses and another replica goes on with it."""
    url = pg_cluster.create()
    a, b = PgStore(url, replica="a", lease=10.0), PgStore(url, replica="b", lease=10.0)
    for s in (a, b):
        s.open(wait=5)
    now = time.time()
    a.batch_submit(job("kept", key="1", now=now), targets(1), (5, 8), TTL)
    a.batch_submit(job("orphan", key="2", now=now), targets(1), (5, 8), TTL)
    assert a.batch_heartbeat(now + 5, 1, ["kept"]) == ["kept"]
    assert [j.id for j, _ in b.batch_claim(RESTART, now + 12, 4).jobs] == ["orphan"]
    for s in (a, b):
        s.close()
