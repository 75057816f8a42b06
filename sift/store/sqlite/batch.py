"""SQLite's queries for batch jobs, in their own file (`jobs.db`, not the disposable cache).
The statuses, the submit verdict and which jobs go over the byte budget are
`store/batch.py`'s."""

from __future__ import annotations

from typing import Any

from sift.core.types import BatchJob, BatchTarget, Resumed, TargetOutcome
from sift.store.batch import (
    EXTRACT,
    EXTRACT_KEEP,
    HELD,
    JOB_COLUMNS,
    LIVE,
    REUSABLE,
    TARGET_COLUMNS,
    WAITING,
    BatchRules,
    job_row,
    job_values,
    restart_error,
    target_row,
)
from sift.store.sqlite.connection import SqliteConnection
from sift.store.sqlite.transaction import transaction


class SqliteBatch(SqliteConnection, BatchRules):
    """The batch tables, on `jobs`."""

    def _extracts_kept(self, not_before: float) -> int:
        return int(
            self.jobs.execute(
                "SELECT COUNT(*) FROM batch_job WHERE kind = ? "
                f"AND (status IN {LIVE} OR lease >= ?)",
                (EXTRACT, not_before),
            ).fetchone()[0]
        )

    def _drop_oldest_extract(self) -> bool:
        cur = self.jobs.execute(
            "DELETE FROM batch_job WHERE id = (SELECT id FROM batch_job WHERE kind = ? AND "
            f"status NOT IN {LIVE} ORDER BY lease LIMIT 1)",
            (EXTRACT,),
        )
        return cur.rowcount == 1

    def batch_find(self, idem_key: str, caller: str, not_before: float) -> BatchJob | None:
        r = self.jobs.execute(
            f"SELECT {JOB_COLUMNS} FROM batch_job WHERE idem_key = ? AND caller = ? AND lease >= ? "
            f"AND status IN {REUSABLE} ORDER BY created_at DESC LIMIT 1",
            (idem_key, caller, not_before),
        ).fetchone()
        return job_row(r)

    def batch_live_counts(self, caller: str) -> tuple[int, int]:
        r = self.jobs.execute(
            "SELECT COALESCE(SUM(caller = ?), 0), COUNT(*) FROM batch_job "
            f"WHERE status IN {LIVE} AND kind != ?",
            (caller, EXTRACT),
        ).fetchone()
        return int(r[0]), int(r[1])

    def _waiting(self) -> list[tuple[str, str]]:
        rows = self.jobs.execute(
            "SELECT id, caller FROM batch_job WHERE status = ? ORDER BY created_at, id",
            (WAITING,),
        ).fetchall()
        return [(str(r[0]), str(r[1])) for r in rows]

    def _start(self, ids: list[str], now: float) -> Resumed:
        for job_id in ids:
            self.jobs.execute(
                "UPDATE batch_job SET status = 'queued', lease = MAX(lease, ?) "
                "WHERE id = ? AND status = ?",
                (now, job_id, WAITING),
            )
        jobs = [self.batch_job(i, now, 0.0) for i in ids]
        return Resumed([(j, self.batch_targets(j.id)) for j in jobs if j is not None], 0)

    def batch_create(self, job: BatchJob, targets: list[tuple[str, bytes]]) -> None:
        with transaction(self.jobs):
            self.jobs.execute(
                f"INSERT INTO batch_job ({JOB_COLUMNS}) VALUES (?,?,?,?,?,?,?,?,?,?,?,?,?)",
                job_values(job),
            )
            self.jobs.executemany(
                "INSERT INTO batch_target (job_id, idx, url, options, status) "
                "VALUES (?, ?, ?, ?, 'pending')",
                [(job.id, i, url, opts) for i, (url, opts) in enumerate(targets)],
            )

    def batch_job(self, job_id: str, now: float, ttl: float) -> BatchJob | None:
        """The job, unless its lease has lapsed (a live job is always visible)."""
        r = self.jobs.execute(
            f"SELECT {JOB_COLUMNS} FROM batch_job WHERE id = ? "
            f"AND (lease >= ? OR status IN {HELD})",
            (job_id, now - ttl),
        ).fetchone()
        return job_row(r)

    def batch_held_jobs(self, caller: str, caller_class: str, kind: str) -> list[BatchJob]:
        """The caller's jobs of `kind` not ended yet (waiting, queued or running), oldest first."""
        rows = self.jobs.execute(
            f"SELECT {JOB_COLUMNS} FROM batch_job WHERE caller = ? AND caller_class = ? "
            f"AND kind = ? AND status IN {HELD} ORDER BY created_at",
            (caller, caller_class, kind),
        ).fetchall()
        return [j for j in map(job_row, rows) if j is not None]

    def batch_targets(self, job_id: str, with_results: bool = False) -> list[BatchTarget]:
        cols = TARGET_COLUMNS.format(result="result" if with_results else "NULL")
        rows = self.jobs.execute(
            f"SELECT {cols} FROM batch_target WHERE job_id = ? ORDER BY idx", (job_id,)
        ).fetchall()
        return [target_row(r) for r in rows]

    def batch_target(self, job_id: str, idx: int) -> BatchTarget | None:
        r = self.jobs.execute(
            f"SELECT {TARGET_COLUMNS.format(result='result')} FROM batch_target "
            "WHERE job_id = ? AND idx = ?",
            (job_id, idx),
        ).fetchone()
        return target_row(r) if r else None

    def batch_grow(
        self, job_id: str, first: int, targets: list[tuple[str, bytes]], skipped: list[str]
    ) -> None:
        """A crawl's new targets (from index `first`) and the URLs robots.txt kept it from."""
        with transaction(self.jobs):
            self.jobs.executemany(
                "INSERT INTO batch_target (job_id, idx, url, options, status) "
                "VALUES (?, ?, ?, ?, 'pending')",
                [(job_id, first + i, url, opts) for i, (url, opts) in enumerate(targets)],
            )
            self.jobs.execute(
                "UPDATE batch_job SET targets_total = targets_total + ? WHERE id = ?",
                (len(targets), job_id),
            )
            self.jobs.executemany(
                "INSERT OR IGNORE INTO batch_skip (job_id, url) VALUES (?, ?)",
                [(job_id, url) for url in skipped],
            )

    def batch_skipped(self, job_id: str) -> list[str]:
        rows = self.jobs.execute(
            "SELECT url FROM batch_skip WHERE job_id = ? ORDER BY url", (job_id,)
        ).fetchall()
        return [str(r[0]) for r in rows]

    def batch_results(self, job_id: str, start: int, limit: int) -> list[BatchTarget]:
        """Done targets from index `start` on, in order, with results: a page of a job's data."""
        rows = self.jobs.execute(
            f"SELECT {TARGET_COLUMNS.format(result='result')} FROM batch_target "
            "WHERE job_id = ? AND idx >= ? AND status = 'done' ORDER BY idx LIMIT ?",
            (job_id, start, limit),
        ).fetchall()
        return [target_row(r) for r in rows]

    def batch_touch(self, job_id: str, now: float) -> None:
        """Slide the job's lease: on submit, on each completion, on every owner read."""
        self.jobs.execute("UPDATE batch_job SET lease = MAX(lease, ?) WHERE id = ?", (now, job_id))

    def batch_target_running(self, job_id: str, idx: int) -> str:
        """A worker took the target: it runs, and its job is no longer queued. Returns the
        job's status (a cancel may have come through another replica)."""
        self.jobs.execute(
            "UPDATE batch_target SET status = 'running' WHERE job_id = ? AND idx = ? "
            "AND status = 'pending'",
            (job_id, idx),
        )
        self.jobs.execute(
            "UPDATE batch_job SET status = 'running' WHERE id = ? AND status = 'queued'",
            (job_id,),
        )
        r = self.jobs.execute("SELECT status FROM batch_job WHERE id = ?", (job_id,)).fetchone()
        return str(r[0]) if r else "gone"

    def batch_target_pending(self, job_id: str, idx: int) -> None:
        """Busy: the target waits to be tried again."""
        self.jobs.execute(
            "UPDATE batch_target SET status = 'pending' WHERE job_id = ? AND idx = ? "
            "AND status = 'running'",
            (job_id, idx),
        )

    def batch_finish_target(
        self, job_id: str, idx: int, out: TargetOutcome, now: float, max_bytes: int
    ) -> tuple[bool, int]:
        """Store a target's outcome once; count it and bump the lease only the first time.

        Returns (whether this call finished the target, jobs evicted to fit the byte budget).
        """
        with transaction(self.jobs):
            cur = self.jobs.execute(
                "UPDATE batch_target SET status = ?, result = ?, error = ?, hint = ?, code = ?, "
                "upstream_status = ? WHERE job_id = ? AND idx = ? "
                "AND status IN ('pending', 'running')",
                (
                    out.status,
                    out.result,
                    out.error,
                    out.hint,
                    out.code,
                    out.upstream_status,
                    job_id,
                    idx,
                ),
            )
            counted = cur.rowcount == 1
            if counted:
                self.jobs.execute(
                    "UPDATE batch_job SET targets_done = targets_done + 1, "
                    "lease = MAX(lease, ?), nbytes = nbytes + ? WHERE id = ?",
                    (now, out.nbytes, job_id),
                )
        return counted, self.batch_evict(max_bytes, keep=job_id) if counted else 0

    def batch_finish_job(self, job_id: str, status: str, error: str | None = None) -> str:
        """End a live job with `status`; a job already ended (cancelled) keeps its status."""
        self.jobs.execute(
            f"UPDATE batch_job SET status = ?, error = ? WHERE id = ? AND status IN {LIVE}",
            (status, error, job_id),
        )
        r = self.jobs.execute("SELECT status FROM batch_job WHERE id = ?", (job_id,)).fetchone()
        return str(r[0]) if r else "gone"

    def batch_cancel(self, job_id: str) -> tuple[bool, str]:
        """Cancel a live job. Returns (whether it was live, its status now)."""
        cur = self.jobs.execute(
            f"UPDATE batch_job SET status = 'cancelled' WHERE id = ? AND status IN {HELD}",
            (job_id,),
        )
        r = self.jobs.execute("SELECT status FROM batch_job WHERE id = ?", (job_id,)).fetchone()
        return cur.rowcount == 1, str(r[0]) if r else "gone"

    def batch_sweep(self, now: float, ttl: float) -> int:
        """Delete finished jobs (and their targets) whose lease is older than the TTL (an
        extract job's: an hour)."""
        cur = self.jobs.execute(
            f"DELETE FROM batch_job WHERE status NOT IN {HELD} AND "
            "(lease < ? OR (kind = ? AND lease < ?))",
            (now - ttl, EXTRACT, now - EXTRACT_KEEP),
        )
        return cur.rowcount

    def batch_nbytes(self) -> int:
        r = self.jobs.execute("SELECT COALESCE(SUM(nbytes), 0) FROM batch_job").fetchone()
        return int(r[0])

    def _ended_by_lease(self, keep: str) -> list[tuple[Any, ...]]:
        return self.jobs.execute(
            f"SELECT id, nbytes FROM batch_job WHERE status NOT IN {HELD} AND id != ? "
            "ORDER BY lease ASC",
            (keep,),
        ).fetchall()

    def _job_delete(self, job_id: str) -> None:
        self.jobs.execute("DELETE FROM batch_job WHERE id = ?", (job_id,))

    def batch_claim(self, reason: str, now: float, limit: int) -> Resumed:
        """One process runs every job: nothing to take over (PostgreSQL's replicas do)."""
        return Resumed([], 0)

    def batch_steal(self, now: float, limit: int) -> Resumed:
        """One process runs every job: there is no other to take from."""
        return Resumed([], 0)

    def batch_heartbeat(self, now: float, workers: int, held: list[str]) -> list[str]:
        """The live jobs, all this process's."""
        rows = self.jobs.execute(f"SELECT id FROM batch_job WHERE status IN {LIVE}").fetchall()
        return [str(r[0]) for r in rows]

    def batch_resume(self, reason: str, now: float) -> Resumed:
        """At start-up: the jobs that were live when sift stopped, to go on with. The target
        that was in flight is tried once more; one in flight at a second crash as well fails
        with `reason` (a poison pill cannot crash-loop sift)."""
        with transaction(self.jobs):
            ids = [
                r[0]
                for r in self.jobs.execute(
                    f"SELECT id FROM batch_job WHERE status IN {LIVE} ORDER BY created_at"
                ).fetchall()
            ]
            failed = 0
            for job_id in ids:
                cur = self.jobs.execute(
                    "UPDATE batch_target SET status = 'failed', error = ?, code = 503 "
                    "WHERE job_id = ? AND status = 'running' AND restarts >= 1",
                    (restart_error(reason), job_id),
                )
                failed += cur.rowcount
                self.jobs.execute(
                    "UPDATE batch_target SET status = 'pending', restarts = restarts + 1 "
                    "WHERE job_id = ? AND status = 'running'",
                    (job_id,),
                )
                self.jobs.execute(
                    "UPDATE batch_job SET lease = MAX(lease, ?), targets_done = targets_done + ? "
                    "WHERE id = ?",
                    (now, cur.rowcount, job_id),
                )
            jobs = [self.batch_job(i, now, 0.0) for i in ids]
            resumed = [(j, self.batch_targets(j.id)) for j in jobs if j is not None]
        return Resumed(resumed, failed)
