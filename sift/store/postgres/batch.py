"""PostgreSQL's queries for batch jobs, as SQLite's (`sqlite/batch.py`), for several
replicas: each live job has a runner (the replica that runs it), and its writes check it
under the job's row lock. The statuses, the submit verdict and which jobs go over the byte
budget are `store/batch.py`'s; taking jobs over from other replicas is `replicas.py`'s."""

from __future__ import annotations

import time
from typing import Any

from sift.core.types import BatchJob, BatchTarget, TargetOutcome
from sift.store.batch import (
    EXTRACT,
    EXTRACT_KEEP,
    HELD,
    JOB_COLUMNS,
    LIVE,
    REUSABLE,
    TARGET_COLUMNS,
    BatchRules,
    job_row,
    job_values,
    target_row,
)
from sift.store.postgres.connection import PgConnection


class PgBatch(PgConnection, BatchRules):
    """The batch tables."""

    def _extracts_kept(self, not_before: float) -> int:
        r = self._one(
            f"SELECT COUNT(*) FROM batch_job WHERE kind = %s AND (status IN {LIVE} OR lease >= %s)",
            (EXTRACT, not_before),
        )
        return int(r[0]) if r else 0

    def _drop_oldest_extract(self) -> bool:
        gone = self._run(
            "DELETE FROM batch_job WHERE id = (SELECT id FROM batch_job WHERE kind = %s AND "
            f"status NOT IN {LIVE} ORDER BY lease LIMIT 1)",
            (EXTRACT,),
        )
        return gone == 1

    def batch_find(self, idem_key: str, caller: str, not_before: float) -> BatchJob | None:
        r = self._one(
            f"SELECT {JOB_COLUMNS} FROM batch_job WHERE idem_key = %s AND caller = %s "
            f"AND lease >= %s AND status IN {REUSABLE} ORDER BY created_at DESC LIMIT 1",
            (idem_key, caller, not_before),
        )
        return job_row(r)

    def batch_live_counts(self, caller: str) -> tuple[int, int]:
        r = self._one(
            f"SELECT COUNT(*) FILTER (WHERE caller = %s), COUNT(*) FROM batch_job "
            f"WHERE status IN {LIVE} AND kind != %s",
            (caller, EXTRACT),
        )
        return (int(r[0]), int(r[1])) if r else (0, 0)

    def batch_create(self, job: BatchJob, targets: list[tuple[str, bytes]]) -> None:
        with self._tx() as c:
            self._run(
                f"INSERT INTO batch_job ({JOB_COLUMNS}, runner, runner_until) "
                f"VALUES ({', '.join(['%s'] * 15)})",
                (*job_values(job), self.replica, time.time() + self.lease),
            )
            with c.cursor() as cur:
                cur.executemany(
                    "INSERT INTO batch_target (job_id, idx, url, options, status) "
                    "VALUES (%s, %s, %s, %s, 'pending')",
                    [(job.id, i, url, opts) for i, (url, opts) in enumerate(targets)],
                )

    def batch_job(self, job_id: str, now: float, ttl: float) -> BatchJob | None:
        r = self._one(
            f"SELECT {JOB_COLUMNS} FROM batch_job WHERE id = %s "
            f"AND (lease >= %s OR status IN {HELD})",
            (job_id, now - ttl),
        )
        return job_row(r)

    def batch_held_jobs(self, caller: str, caller_class: str, kind: str) -> list[BatchJob]:
        rows = self._all(
            f"SELECT {JOB_COLUMNS} FROM batch_job WHERE caller = %s AND caller_class = %s "
            f"AND kind = %s AND status IN {HELD} ORDER BY created_at",
            (caller, caller_class, kind),
        )
        return [j for j in map(job_row, rows) if j is not None]

    def batch_targets(self, job_id: str, with_results: bool = False) -> list[BatchTarget]:
        cols = TARGET_COLUMNS.format(result="result" if with_results else "NULL::bytea")
        rows = self._all(
            f"SELECT {cols} FROM batch_target WHERE job_id = %s ORDER BY idx", (job_id,)
        )
        return [target_row(r) for r in rows]

    def batch_target(self, job_id: str, idx: int) -> BatchTarget | None:
        r = self._one(
            f"SELECT {TARGET_COLUMNS.format(result='result')} FROM batch_target "
            "WHERE job_id = %s AND idx = %s",
            (job_id, idx),
        )
        return target_row(r) if r else None

    def batch_grow(
        self, job_id: str, first: int, targets: list[tuple[str, bytes]], skipped: list[str]
    ) -> None:
        """A crawl's new targets (from index `first`) and the URLs robots.txt kept it from."""
        with self._tx() as c, c.cursor() as cur:
            cur.executemany(
                "INSERT INTO batch_target (job_id, idx, url, options, status) "
                "VALUES (%s, %s, %s, %s, 'pending')",
                [(job_id, first + i, url, opts) for i, (url, opts) in enumerate(targets)],
            )
            cur.execute(
                "UPDATE batch_job SET targets_total = targets_total + %s WHERE id = %s",
                (len(targets), job_id),
            )
            cur.executemany(
                "INSERT INTO batch_skip (job_id, url) VALUES (%s, %s) ON CONFLICT DO NOTHING",
                [(job_id, url) for url in skipped],
            )

    def batch_skipped(self, job_id: str) -> list[str]:
        rows = self._all("SELECT url FROM batch_skip WHERE job_id = %s ORDER BY url", (job_id,))
        return [str(r[0]) for r in rows]

    def batch_results(self, job_id: str, start: int, limit: int) -> list[BatchTarget]:
        """Done targets from index `start` on, in order, with results: a page of a job's data."""
        rows = self._all(
            f"SELECT {TARGET_COLUMNS.format(result='result')} FROM batch_target "
            "WHERE job_id = %s AND idx >= %s AND status = 'done' ORDER BY idx LIMIT %s",
            (job_id, start, limit),
        )
        return [target_row(r) for r in rows]

    def batch_touch(self, job_id: str, now: float) -> None:
        self._run("UPDATE batch_job SET lease = GREATEST(lease, %s) WHERE id = %s", (now, job_id))

    def batch_target_running(self, job_id: str, idx: int) -> str:
        """As SQLite's, under the job's row lock, which `batch_claim` and `batch_steal` take
        too: a job taken from this replica answers "lost" and its target is left alone, and
        a target marked here is seen running by any later steal (it keeps the job). NO KEY:
        the inserts of a crawl's new targets (their foreign key shares the row) go on."""
        with self._tx():
            r = self._one(
                "SELECT status, runner FROM batch_job WHERE id = %s FOR NO KEY UPDATE", (job_id,)
            )
            if r is None:
                return "gone"
            if r[1] != self.replica:
                return "lost"
            self._run(
                "UPDATE batch_target SET status = 'running' WHERE job_id = %s AND idx = %s "
                "AND status = 'pending'",
                (job_id, idx),
            )
            n = self._run(
                "UPDATE batch_job SET status = 'running' WHERE id = %s AND status = 'queued'",
                (job_id,),
            )
        return "running" if n else str(r[0])

    def batch_target_pending(self, job_id: str, idx: int) -> None:
        self._run(
            "UPDATE batch_target SET status = 'pending' WHERE job_id = %s AND idx = %s "
            "AND status = 'running'",
            (job_id, idx),
        )

    def batch_finish_target(
        self, job_id: str, idx: int, out: TargetOutcome, now: float, max_bytes: int
    ) -> tuple[bool, int]:
        with self._tx():
            # The job's row first, as every batch write that takes it: no two wait on each
            # other. Taken over: the new runner's result counts.
            r = self._one("SELECT runner FROM batch_job WHERE id = %s FOR NO KEY UPDATE", (job_id,))
            if r is None or r[0] != self.replica:
                return False, 0
            updated = self._run(
                "UPDATE batch_target SET status = %s, result = %s, error = %s, hint = %s, "
                "code = %s, upstream_status = %s WHERE job_id = %s AND idx = %s "
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
            counted = updated == 1
            if counted:
                self._run(
                    "UPDATE batch_job SET targets_done = targets_done + 1, "
                    "lease = GREATEST(lease, %s), nbytes = nbytes + %s WHERE id = %s",
                    (now, out.nbytes, job_id),
                )
            return counted, self.batch_evict(max_bytes, keep=job_id) if counted else 0

    def batch_finish_job(self, job_id: str, status: str, error: str | None = None) -> str:
        with self._tx():
            self._run(
                f"UPDATE batch_job SET status = %s, error = %s WHERE id = %s AND status IN {LIVE}",
                (status, error, job_id),
            )
            r = self._one("SELECT status FROM batch_job WHERE id = %s", (job_id,))
        return str(r[0]) if r else "gone"

    def batch_cancel(self, job_id: str) -> tuple[bool, str]:
        with self._tx():
            n = self._run(
                f"UPDATE batch_job SET status = 'cancelled' WHERE id = %s AND status IN {HELD}",
                (job_id,),
            )
            r = self._one("SELECT status FROM batch_job WHERE id = %s", (job_id,))
        return n == 1, str(r[0]) if r else "gone"

    def batch_sweep(self, now: float, ttl: float) -> int:
        return self._run(
            f"DELETE FROM batch_job WHERE status NOT IN {HELD} AND "
            "(lease < %s OR (kind = %s AND lease < %s))",
            (now - ttl, EXTRACT, now - EXTRACT_KEEP),
        )

    def batch_nbytes(self) -> int:
        r = self._one("SELECT COALESCE(SUM(nbytes), 0) FROM batch_job")
        return int(r[0]) if r else 0

    def _ended_by_lease(self, keep: str) -> list[tuple[Any, ...]]:
        return self._all(
            f"SELECT id, nbytes FROM batch_job WHERE status NOT IN {HELD} AND id != %s "
            "ORDER BY lease ASC",
            (keep,),
        )

    def _job_delete(self, job_id: str) -> None:
        self._run("DELETE FROM batch_job WHERE id = %s", (job_id,))
