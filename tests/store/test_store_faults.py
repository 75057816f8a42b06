"""A database error degrades sift instead of killing it (issue 11, items 2 and 8), through HTTP.

Each fault is real and made on the real files: the database full (`max_page_count` on sift's
own connections, the real files' limit), the write lock held by a second connection past the
busy timeout, the files made unwritable (`chattr +i`: tests run as root, where chmod stops
nothing; an immutable inode refuses root's writes too, and the kernel says EPERM, which SQLite
reports as an I/O error), garbage pages in the cache, a corrupt jobs database. Each time:
/v1/fetch answers live with a warning, /v1/batch answers 503 with Retry-After, /healthz is 503
and says why, a metric counts the errors — and when the cause is removed sift recovers by
itself, without a restart.
"""

from __future__ import annotations

import json
import re
import shutil
import sqlite3
import subprocess
import sys
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from typing import Any

import pytest

from sift.actors.bridge import ThreadReply
from sift.actors.store import StoreCall
from sift.core.errors import SiftError
from sift.store.protocol import Store
from sift.store.sqlite.connection import connect
from sift.store.sqlite.store import open_store
from tests.support.sift_server import SiftServer
from tests.support.store_faults import FAST, PATIENT, degrades_and_recovers, health, page
from tests.support.store_records import doc, job, pdf, targets
from tests.support.until import until


def _store_call(sift: SiftServer, fn: Callable[[Store], Any]) -> Any:
    """A test hook straight to the StoreActor (as the pipeline sends its calls)."""
    reply: ThreadReply[Any] = ThreadReply()
    sift.svc.roles.store().tell(StoreCall(fn, reply))
    return reply.wait(10)


def test_a_full_database_degrades_and_recovers_when_space_is_freed(make_sift, origin):
    sift = make_sift(PATIENT)

    @contextmanager
    def full() -> Iterator[None]:
        _store_call(sift, lambda s: s.page_limit(1))  # no page more than the files hold now
        try:
            yield
        finally:
            _store_call(sift, lambda s: s.page_limit(0))

    degrades_and_recovers(sift, origin, "disk_full", "disk full", full)


def test_every_write_on_a_full_database_fails_as_disk_full_and_leaves_no_transaction(tmp_path):
    """SQLite rolls a transaction back by itself when the file is full; undoing it again must
    not hide the cause ("cannot rollback - no transaction is active" is a plain error, which
    /healthz and a batch's 503 would call "database error")."""
    store = open_store(tmp_path)
    big = "words " * 200_000
    writes: dict[str, Callable[[], Any]] = {
        "content_put": lambda: store.content_put(doc(text=big), 10**9),
        "pdf_put": lambda: store.pdf_put(pdf(), [(n, big, None) for n in range(1, 4)], 10**9),
        "batch_create": lambda: store.batch_create(job("full", n=2000), targets(2000)),
        "probe": store.probe,
    }
    try:
        store.page_limit(1)  # no page more than the files hold now
        for name, write in writes.items():
            with pytest.raises(sqlite3.Error) as failed:
                write()
            assert store.fault(failed.value) == "disk_full", (name, failed.value)
            store.rollback()
            assert not any(db.in_transaction for db in store.connections()), name
        store.page_limit(0)
        for write in writes.values():
            write()  # each works once there is room: nothing was left half-done
    finally:
        store.close()


def test_a_write_lock_held_past_the_busy_timeout_degrades_until_released(make_sift, origin):
    sift = make_sift(FAST)
    state = sift.cfg.state_path

    @contextmanager
    def locked() -> Iterator[None]:
        holders = [
            sqlite3.connect(state / name, isolation_level=None) for name in ("cache.db", "jobs.db")
        ]
        for db in holders:
            db.execute("BEGIN IMMEDIATE")
        try:
            yield
        finally:
            for db in holders:
                db.execute("ROLLBACK")
                db.close()

    degrades_and_recovers(sift, origin, "locked", "database locked", locked)


def test_unwritable_files_degrade_and_recover_when_writable_again(make_sift, origin):
    sift = make_sift(PATIENT)
    state = sift.cfg.state_path
    files = [state / n for n in ("cache.db", "cache.db-wal", "jobs.db", "jobs.db-wal")]
    if (
        shutil.which("chattr") is None
        or subprocess.run(["chattr", "+i", str(files[0])], capture_output=True).returncode
    ):
        pytest.skip("chattr +i is not available on this filesystem (needs root and ext4/xfs)")
    subprocess.run(["chattr", "-i", str(files[0])], check=True)

    @contextmanager
    def immutable() -> Iterator[None]:
        # Never the -shm file: SQLite maps it, and an immutable mapping is a SIGBUS.
        subprocess.run(["chattr", "+i", *map(str, files)], check=True)
        try:
            yield
        finally:
            subprocess.run(["chattr", "-i", *map(str, files)], check=True)

    degrades_and_recovers(sift, origin, "io_error", "I/O error", immutable)


def test_a_cache_with_garbage_pages_is_moved_aside_and_rebuilt(tmp_path, origin, caplog):
    state = tmp_path / "state"
    sift = SiftServer(state).start()
    try:
        assert sift.fetch(page(origin, "garbage-1")).status == 200
        until(lambda: _store_call(sift, lambda s: s.cache_bytes()) > 0, "the page to be cached")
    finally:
        sift.stop()
    cache = state / "cache.db"
    with cache.open("r+b") as f:  # every page after the header page: garbage
        f.seek(4096)
        f.write(b"\xde\xad\xbe\xef" * (cache.stat().st_size // 4))

    sift = SiftServer(state).start()
    try:
        aside = list(state.glob("cache.db.corrupt-*"))
        assert len(aside) == 1 and re.fullmatch(r"cache\.db\.corrupt-\d{8}T\d{6}Z", aside[0].name)
        assert any(
            "corrupt" in r.getMessage() and "rebuilt" in r.getMessage() for r in caplog.records
        )
        healthz = health(sift)
        assert healthz.status == 200 and healthz.json["store"] == "ok"
        r = sift.fetch(page(origin, "garbage-1"))
        assert r.status == 200 and "warning" not in r.json
    finally:
        sift.stop()


def test_a_corrupt_jobs_database_stops_start_up_with_exit_2(tmp_path):
    state = tmp_path / "state"
    state.mkdir()
    (state / "jobs.db").write_bytes(b"this is not a database, it is garbage\n" * 200)
    config = tmp_path / "sift.toml"
    config.write_text(f'listen = "127.0.0.1:0"\nstate_dir = "{state}"\n')
    proc = subprocess.run(
        [sys.executable, "-m", "sift", "--config", str(config), "serve"],
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert proc.returncode == 2, proc.stderr
    lines = proc.stderr.strip().splitlines()
    assert lines[-1] == (
        f"sift: the batch jobs database {state / 'jobs.db'} is corrupt; move it aside to start "
        "with no jobs, or restore it from a backup"
    ), proc.stderr
    assert "Traceback" not in proc.stderr


def test_an_older_single_database_becomes_the_cache_and_keeps_its_jobs(tmp_path, origin):
    first = tmp_path / "first"
    sift = SiftServer(first).start()
    try:
        job_id = sift.post("/v1/batch", {"targets": [{"url": page(origin, "legacy")}]}).json[
            "job_id"
        ]
        until(
            lambda: sift.request("GET", f"/v1/batch/{job_id}").json["status"] == "done",
            "the batch job",
        )
    finally:
        sift.stop()
    # What an older sift left: one sift.db holding the cache and the jobs.
    state = tmp_path / "state"
    state.mkdir()
    legacy = connect(state / "sift.db")
    for name, tables in (("cache.db", ("content",)), ("jobs.db", ("batch_job", "batch_target"))):
        legacy.execute("ATTACH DATABASE ? AS src", (str(first / name),))
        for table in tables:
            legacy.execute(f"INSERT INTO main.{table} SELECT * FROM src.{table}")
        legacy.execute("DETACH DATABASE src")
    legacy.close()

    sift = SiftServer(state).start()
    try:
        assert not (state / "sift.db").exists()
        summary = sift.request("GET", f"/v1/batch/{job_id}")
        assert summary.status == 200 and summary.json["status"] == "done"
        target = json.loads(sift.request("GET", f"/v1/batch/{job_id}/0").body)
        assert target["status"] == "done" and target["result"]["success"] is True
        assert _store_call(sift, lambda s: s.cache_bytes()) > 0  # the cached page came along
    finally:
        sift.stop()
    cache = sqlite3.connect(state / "cache.db")
    assert cache.execute("SELECT COUNT(*) FROM batch_job").fetchone()[0] == 0
    cache.close()


@pytest.mark.allow_error_logs
def test_a_store_actor_crash_restarts_the_store_not_the_process(make_sift, origin):
    fatal: list[str] = []
    sift = make_sift()
    sift.svc.system.on_fatal = fatal.append
    crashed = sift.svc.roles.store()
    with pytest.raises(SiftError):  # a bug: a query that does not exist crashes the actor
        _store_call(sift, lambda s: s.no_such_query())  # type: ignore[attr-defined]
    until(lambda: sift.svc.roles.store() is not crashed, "the store to be restarted")
    until(lambda: health(sift).status == 200, "/healthz 200")
    assert fatal == []
    assert health(sift).json["workers"]["store"] == 1
    r = sift.fetch(page(origin, "after-crash"))
    assert r.status == 200 and "warning" not in r.json
