"""Jobs among PostgreSQL's replicas: each live job is held by its runner for a lease the
runner renews (`batch_heartbeat`); at start a replica goes on with its own jobs
(`batch_resume`), takes over those whose runner's lease lapsed (`batch_claim`), and takes
waiting jobs from a replica holding more than it has workers (`batch_steal`)."""

from __future__ import annotations

from sift.core.types import Resumed
from sift.store.batch import LIVE, WAITING, restart_error
from sift.store.postgres.batch import PgBatch

_STEAL_LOCK = 0x51F7_57EA  # the one replicas take in turn to count and take waiting jobs
# A job waiting in its runner's round-robin: no target running, one still to run.
_WAITING = (
    "NOT EXISTS (SELECT 1 FROM batch_target t WHERE t.job_id = j.id AND t.status = 'running') "
    "AND EXISTS (SELECT 1 FROM batch_target t WHERE t.job_id = j.id AND t.status = 'pending')"
)


class PgReplicas(PgBatch):
    """The runner of each live job, and its lease."""

    def batch_resume(self, reason: str, now: float) -> Resumed:
        """As SQLite's, for the jobs this replica was running: its peers' jobs are theirs."""
        with self._tx():
            ids = [
                r[0]
                for r in self._all(
                    f"SELECT id FROM batch_job WHERE status IN {LIVE} AND runner = %s "
                    "ORDER BY created_at FOR UPDATE",
                    (self.replica,),
                )
            ]
            return self._take(ids, reason, now)

    def batch_claim(self, reason: str, now: float, limit: int) -> Resumed:
        """Take over up to `limit` live jobs whose runner's lease lapsed (it died or lost the
        database): the same as a resume, done by another replica. Rows another replica is
        claiming at this moment are skipped, not waited for."""
        with self._tx():
            ids = [
                r[0]
                for r in self._all(
                    f"SELECT id FROM batch_job WHERE status IN {LIVE} AND runner_until < %s "
                    "ORDER BY created_at LIMIT %s FOR UPDATE SKIP LOCKED",
                    (now, limit),
                )
            ]
            return self._take(ids, reason, now)

    def batch_steal(self, now: float, limit: int) -> Resumed:
        """Take up to `limit` live jobs waiting (no target running) at replicas that hold more
        live jobs than they have workers, oldest first, at most each one's excess: an idle
        replica drains a busy one's queue. Stealers take turns (an advisory lock), so each
        counts what the last one left; a job row locked by its runner's mark is skipped."""
        with self._tx():
            self._run("SELECT pg_advisory_xact_lock(%s)", (_STEAL_LOCK,))
            rows = self._all(
                f"SELECT j.id, j.runner, h.held - r.workers FROM batch_job j "
                f"JOIN batch_replica r ON r.replica = j.runner AND r.until >= %s "
                f"JOIN (SELECT runner, COUNT(*) AS held FROM batch_job WHERE status IN {LIVE} "
                f"AND runner_until >= %s GROUP BY runner) h ON h.runner = j.runner "
                f"WHERE j.status IN {LIVE} AND j.runner != %s AND j.runner_until >= %s "
                f"AND j.kind != 'crawl' AND h.held > r.workers AND {_WAITING} "
                "ORDER BY j.created_at",
                (now, now, self.replica, now),
            )  # a crawl stays with its runner: its frontier grows there as pages are read
            picked: dict[str, str] = {}
            for job_id, runner, excess in rows:
                if len(picked) < limit and list(picked.values()).count(runner) < excess:
                    picked[job_id] = runner
            if not picked:
                return Resumed([], 0)
            locked = self._all(
                "SELECT id, runner FROM batch_job WHERE id = ANY(%s) FOR NO KEY UPDATE SKIP LOCKED",
                (list(picked),),
            )
            # Read again now that the rows are locked (a new snapshot: READ COMMITTED): a mark
            # committed before the lock shows its target running, and the job stays.
            mine = [job_id for job_id, runner in locked if picked[job_id] == runner]
            ids = [
                r[0]
                for r in self._all(
                    f"SELECT j.id FROM batch_job j WHERE j.id = ANY(%s) AND status IN {LIVE} "
                    f"AND {_WAITING} ORDER BY j.created_at",
                    (mine,),
                )
            ]
            return self._take(ids, "steal", now)

    def batch_heartbeat(self, now: float, workers: int, held: list[str]) -> list[str]:
        """Renew this replica's hold on the live jobs it `held` (in memory) and publish its
        `workers` (what `batch_steal` weighs its load against); the ids it still holds. A job
        this replica holds here but not in memory (a claim whose answer was lost) lapses and
        is taken over."""
        with self._tx():
            self._run(
                "INSERT INTO batch_replica (replica, workers, until) VALUES (%s, %s, %s) "
                "ON CONFLICT (replica) DO UPDATE SET workers = EXCLUDED.workers, "
                "until = EXCLUDED.until",
                (self.replica, workers, now + self.lease),
            )
            rows = self._all(
                f"UPDATE batch_job SET runner_until = %s WHERE runner = %s AND status IN {LIVE} "
                "AND id = ANY(%s) RETURNING id",
                (now + self.lease, self.replica, held),
            )
        return [str(r[0]) for r in rows]

    def _waiting(self) -> list[tuple[str, str]]:
        rows = self._all(
            "SELECT id, caller FROM batch_job WHERE status = %s ORDER BY created_at, id",
            (WAITING,),
        )
        return [(str(r[0]), str(r[1])) for r in rows]

    def _start(self, ids: list[str], now: float) -> Resumed:
        """The waiting jobs `ids` queued, run by this replica from now on (`_take`)."""
        with self._tx():
            self._run(
                "UPDATE batch_job SET status = 'queued' WHERE id = ANY(%s) AND status = %s",
                (ids, WAITING),
            )
            return self._take(ids, "start", now)

    def _take(self, ids: list[str], reason: str, now: float) -> Resumed:
        """Run `ids` from here on: the target in flight is tried once more (failed if it was
        in flight at a stop before)."""
        with self._tx():
            failed = 0
            for job_id in ids:
                n = self._run(
                    "UPDATE batch_target SET status = 'failed', error = %s, code = 503 "
                    "WHERE job_id = %s AND status = 'running' AND restarts >= 1",
                    (restart_error(reason), job_id),
                )
                failed += n
                self._run(
                    "UPDATE batch_target SET status = 'pending', restarts = restarts + 1 "
                    "WHERE job_id = %s AND status = 'running'",
                    (job_id,),
                )
                self._run(
                    "UPDATE batch_job SET lease = GREATEST(lease, %s), "
                    "targets_done = targets_done + %s, runner = %s, runner_until = %s "
                    "WHERE id = %s",
                    (now, n, self.replica, now + self.lease, job_id),
                )
            jobs = [self.batch_job(i, now, 0.0) for i in ids]
            return Resumed([(j, self.batch_targets(j.id)) for j in jobs if j is not None], failed)
