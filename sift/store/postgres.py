"""The PostgreSQL backend of `Store` (`sift.store.protocol`): SQLite's queries, for several
replicas.

Every public method is one transaction on a connection from a `psycopg_pool` pool shared by the
store actors (one per connection). What SQLite gets from one serialising thread, PostgreSQL gets
from row locks and one advisory lock: a batch submit checks the caps and inserts the job under
it, so the caps hold across replicas. Connections lost are replaced by the pool on their own;
the password comes from the URL, `$PGPASSWORD` or `~/.pgpass` (libpq) and is never logged.
"""

from __future__ import annotations

import contextlib
import dataclasses
import logging
import threading
import time
import zlib
from collections.abc import Iterator
from typing import Any

import msgspec
import psycopg
import psycopg_pool
from psycopg import errors as pgerr
from psycopg.conninfo import conninfo_to_dict, make_conninfo

from sift.core.types import (
    BatchJob,
    BatchTarget,
    Content,
    PdfDoc,
    Resumed,
    Stored,
    TargetOutcome,
)
from sift.store.batch import EXTRACT, EXTRACT_KEEP, LIVE, REUSABLE, restart_error
from sift.store.content import COLUMNS, LIGHT, content_row, packed
from sift.store.pg_schema import migrate

log = logging.getLogger("sift.store")

_BATCH_LOCK = 0x51F7_BA7C  # the advisory lock a batch submit holds while it checks the caps
_STEAL_LOCK = 0x51F7_57EA  # the one replicas take in turn to count and take waiting jobs
# A job waiting in its runner's round-robin: no target running, one still to run.
_WAITING = (
    "NOT EXISTS (SELECT 1 FROM batch_target t WHERE t.job_id = j.id AND t.status = 'running') "
    "AND EXISTS (SELECT 1 FROM batch_target t WHERE t.job_id = j.id AND t.status = 'pending')"
)


def redact(url: str) -> str:
    """The URL without its password, for log lines and errors."""
    with contextlib.suppress(psycopg.ProgrammingError):
        info = conninfo_to_dict(url)
        if "password" in info:
            info["password"] = "***"
        return make_conninfo(**{k: str(v) for k, v in info.items() if v is not None})
    return "postgresql://(unparsable URL)"


def classify(exc: BaseException) -> str:
    """The kind of a database error: a key of `protocol.REASONS` (never the message)."""
    if isinstance(exc, psycopg_pool.PoolTimeout | psycopg.OperationalError) and not isinstance(
        exc, pgerr.DiskFull | pgerr.LockNotAvailable | pgerr.QueryCanceled
    ):
        return "unreachable"
    if isinstance(exc, pgerr.DiskFull | pgerr.OutOfMemory):
        return "disk_full"
    if isinstance(exc, pgerr.LockNotAvailable | pgerr.DeadlockDetected | pgerr.QueryCanceled):
        return "locked"
    if isinstance(exc, pgerr.SerializationFailure):
        return "locked"
    if isinstance(exc, pgerr.ReadOnlySqlTransaction | pgerr.InsufficientPrivilege):
        return "read_only"
    if isinstance(exc, pgerr.DataCorrupted | pgerr.IndexCorrupted):
        return "corrupt"
    return "other"


_PDF = (
    "url, caller_class, final_url, content_type, content_hash, etag, last_modified, meta_json, "
    "fetched_at, size"
)
_JOB = (
    "id, caller, caller_class, idem_key, status, error, targets_total, targets_done, "
    "created_at, lease, nbytes, kind, spec"
)
_TARGET = "job_id, idx, url, options, status, {result}, error, hint, code, upstream_status"


def _bytes(v: Any) -> bytes | None:
    return bytes(v) if v is not None else None


def _job(r: tuple[Any, ...] | None) -> BatchJob | None:
    if not r:
        return None
    job = BatchJob(*r)
    return dataclasses.replace(job, spec=_bytes(job.spec))


def _target(r: tuple[Any, ...]) -> BatchTarget:
    return BatchTarget(r[0], r[1], r[2], bytes(r[3]), r[4], _bytes(r[5]), *r[6:])


class PgStore:
    """Every query sift runs, on PostgreSQL. Thread-safe: each store actor's call takes a
    connection for one transaction (nested calls on the same thread share it)."""

    errors: tuple[type[BaseException], ...] = (psycopg.Error, psycopg_pool.PoolTimeout)

    def __init__(
        self,
        url: str,
        size: int = 4,
        connect_timeout: float = 5.0,
        replica: str = "",
        lease: float = 15.0,
    ) -> None:
        self.url = url
        self.replica = replica  # this replica's id: the runner of the jobs it creates
        self.lease = lease  # how long a runner holds a job without renewing
        self._local = threading.local()
        self._migrated = False
        self.down = False  # the last connection failed: calls fail fast until a probe works
        self._lock = threading.Lock()
        self.pool = psycopg_pool.ConnectionPool(
            url,
            min_size=1,
            max_size=size,
            open=False,
            timeout=connect_timeout,
            kwargs={"connect_timeout": max(1, int(connect_timeout))},
            check=psycopg_pool.ConnectionPool.check_connection,
            name="sift-store",
        )

    def fault(self, exc: BaseException) -> str | None:
        """The kind of a database error, or None when `exc` is not one (a bug)."""
        return classify(exc) if isinstance(exc, self.errors) else None

    def open(self, wait: float | None = None) -> None:
        """Open the pool; with `wait`, check the schema now (a newer one raises
        `SchemaTooNew`; an unreachable database raises a psycopg error)."""
        self.pool.open(wait=False)
        if wait is not None:
            with self._tx():
                pass

    @contextlib.contextmanager
    def _tx(self) -> Iterator[psycopg.Connection[Any]]:
        conn: psycopg.Connection[Any] | None = getattr(self._local, "conn", None)
        if conn is not None:
            yield conn
            return
        if self.down and not getattr(self._local, "probing", False):
            # Fail fast while it is away: calls answer at once; the probe finds it again.
            raise psycopg.OperationalError("database unreachable")
        try:
            with self.pool.connection() as conn:
                if not self._migrated:
                    with self._lock:
                        if not self._migrated:
                            migrate(conn)
                            self._migrated = True
                self._local.conn = conn
                try:
                    with conn.transaction():
                        yield conn
                finally:
                    self._local.conn = None
        except (psycopg_pool.PoolTimeout, psycopg.OperationalError) as exc:
            if classify(exc) == "unreachable":
                self.down = True
            raise
        self.down = False

    def _one(self, sql: str, args: tuple[Any, ...] = ()) -> tuple[Any, ...] | None:
        with self._tx() as c:
            return c.execute(sql, args).fetchone()  # type: ignore[no-any-return]

    def _all(self, sql: str, args: tuple[Any, ...] = ()) -> list[tuple[Any, ...]]:
        with self._tx() as c:
            return c.execute(sql, args).fetchall()

    def _run(self, sql: str, args: tuple[Any, ...] = ()) -> int:
        with self._tx() as c:
            return c.execute(sql, args).rowcount

    # -- content -------------------------------------------------------------------------------

    def doc_get(self, url: str, caller_class: str) -> Content | PdfDoc | None:
        with self._tx():
            return self.content_get(url, caller_class) or self.pdf_get(url, caller_class)

    def content_get(self, url: str, caller_class: str) -> Content | None:
        r = self._one(
            f"UPDATE content SET used_at = %s WHERE url = %s AND caller_class = %s "
            f"RETURNING {LIGHT}",
            (time.time(), url, caller_class),
        )
        return content_row(r) if r else None

    def content_body(self, url: str, caller_class: str) -> bytes | None:
        r = self._one(
            "SELECT body FROM content WHERE url = %s AND caller_class = %s", (url, caller_class)
        )
        return zlib.decompress(r[0]) if r and r[0] is not None else None

    def content_touch(self, keys: list[tuple[str, str]], when: float) -> None:
        with self._tx() as c, c.cursor() as cur:
            cur.executemany(
                "UPDATE content SET used_at = GREATEST(used_at, %s) "
                "WHERE url = %s AND caller_class = %s",
                [(when, url, cls) for url, cls in keys],
            )

    def content_put(self, c: Content, max_bytes: int) -> Stored:
        now = time.time()
        c, body = packed(c)
        cols = COLUMNS.split(", ")
        update = ", ".join(f"{k} = EXCLUDED.{k}" for k in [*cols[2:], "used_at"])
        with self._tx():
            self._run(
                f"INSERT INTO content ({COLUMNS}, used_at) VALUES ({', '.join(['%s'] * 21)}) "
                f"ON CONFLICT (url, caller_class) DO UPDATE SET {update}",
                (
                    c.url, c.caller_class, c.final_url, c.kind, c.content_type, c.title, c.text,
                    body, c.hint, c.fallback, c.etag, c.last_modified, c.content_hash,
                    c.fetched_at, c.size, c.coverage, c.page, c.served, c.hidden_removed,
                    c.warning, now,
                ),
            )  # fmt: skip
            return self.evict(max_bytes, keep=("content", c.url, c.caller_class))

    def content_refresh(
        self, url: str, caller_class: str, etag: str | None, last_modified: str | None
    ) -> float:
        now = time.time()
        self._run(
            "UPDATE content SET fetched_at = %s, used_at = %s, etag = COALESCE(%s, etag), "
            "last_modified = COALESCE(%s, last_modified) WHERE url = %s AND caller_class = %s",
            (now, now, etag, last_modified, url, caller_class),
        )
        return now

    def cache_bytes(self) -> int:
        r = self._one(
            "SELECT (SELECT COALESCE(SUM(size), 0) FROM content)"
            " + (SELECT COALESCE(SUM(size), 0) FROM pdf_doc)"
        )
        return int(r[0]) if r else 0

    def evict(self, max_bytes: int, keep: tuple[str, str, str]) -> Stored:
        with self._tx():
            total = self.cache_bytes()
            evicted: list[tuple[str, str, str, int]] = []
            if total <= max_bytes:
                return Stored(evicted, total)
            rows = self._all(
                "SELECT 'content', url, caller_class, size, used_at FROM content UNION ALL "
                "SELECT 'pdf', url, caller_class, size, used_at FROM pdf_doc ORDER BY used_at ASC"
            )
            for table, url, cls, size, _ in rows:
                if total <= max_bytes:
                    break
                if (table, url, cls) == keep:
                    continue
                if table == "pdf":
                    self.pdf_delete(url, cls)
                else:
                    self._run(
                        "DELETE FROM content WHERE url = %s AND caller_class = %s", (url, cls)
                    )
                total -= size
                evicted.append((table, url, cls, size))
            return Stored(evicted, total)

    # -- PDF -----------------------------------------------------------------------------------

    def pdf_get(self, url: str, caller_class: str) -> PdfDoc | None:
        r = self._one(
            "UPDATE pdf_doc SET used_at = %s WHERE url = %s AND caller_class = %s "
            f"RETURNING {_PDF}",
            (time.time(), url, caller_class),
        )
        if r is None:
            return None
        return PdfDoc(
            url=r[0], caller_class=r[1], final_url=r[2], content_type=r[3], content_hash=r[4],
            etag=r[5], last_modified=r[6], meta=msgspec.json.decode(r[7]), fetched_at=r[8],
            size=r[9],
        )  # fmt: skip

    def pdf_pages(
        self, content_hash: str, caller_class: str, first: int, last: int
    ) -> list[tuple[int, str, str | None]]:
        rows = self._all(
            "SELECT page, text, warning FROM pdf_page WHERE content_hash = %s "
            "AND caller_class = %s AND page BETWEEN %s AND %s ORDER BY page",
            (content_hash, caller_class, first, last),
        )
        return [(r[0], r[1], r[2]) for r in rows]

    def pdf_put(
        self, doc: PdfDoc, pages: list[tuple[int, str, str | None]], max_bytes: int
    ) -> Stored:
        size = sum(len(t.encode()) + 64 for _, t, _ in pages) + 512
        now = time.time()
        cols = _PDF.split(", ")
        update = ", ".join(f"{k} = EXCLUDED.{k}" for k in [*cols[2:], "used_at"])
        with self._tx() as c:
            old = self._one(
                "SELECT content_hash FROM pdf_doc WHERE url = %s AND caller_class = %s FOR UPDATE",
                (doc.url, doc.caller_class),
            )
            self._run(
                f"INSERT INTO pdf_doc ({_PDF}, used_at) VALUES ({', '.join(['%s'] * 11)}) "
                f"ON CONFLICT (url, caller_class) DO UPDATE SET {update}",
                (
                    doc.url, doc.caller_class, doc.final_url, doc.content_type, doc.content_hash,
                    doc.etag, doc.last_modified, msgspec.json.encode(doc.meta), doc.fetched_at,
                    size, now,
                ),
            )  # fmt: skip
            with c.cursor() as cur:
                cur.executemany(
                    "INSERT INTO pdf_page (content_hash, caller_class, page, text, warning) "
                    "VALUES (%s,%s,%s,%s,%s) ON CONFLICT (content_hash, caller_class, page) "
                    "DO UPDATE SET text = EXCLUDED.text, warning = EXCLUDED.warning",
                    [(doc.content_hash, doc.caller_class, n, t, w) for n, t, w in pages],
                )
            if old and old[0] != doc.content_hash:
                self._drop_pages_if_unused(old[0], doc.caller_class)
            return self.evict(max_bytes, keep=("pdf", doc.url, doc.caller_class))

    def pdf_refresh(
        self, url: str, caller_class: str, etag: str | None, last_modified: str | None
    ) -> float:
        now = time.time()
        self._run(
            "UPDATE pdf_doc SET fetched_at = %s, used_at = %s, etag = COALESCE(%s, etag), "
            "last_modified = COALESCE(%s, last_modified) WHERE url = %s AND caller_class = %s",
            (now, now, etag, last_modified, url, caller_class),
        )
        return now

    def pdf_delete(self, url: str, caller_class: str) -> None:
        with self._tx():
            r = self._one(
                "DELETE FROM pdf_doc WHERE url = %s AND caller_class = %s RETURNING content_hash",
                (url, caller_class),
            )
            if r:
                self._drop_pages_if_unused(r[0], caller_class)

    def _drop_pages_if_unused(self, content_hash: str, caller_class: str) -> None:
        self._run(
            "DELETE FROM pdf_page WHERE content_hash = %s AND caller_class = %s AND NOT EXISTS "
            "(SELECT 1 FROM pdf_doc WHERE content_hash = %s AND caller_class = %s)",
            (content_hash, caller_class, content_hash, caller_class),
        )

    # -- digests and embeddings ----------------------------------------------------------------

    def digest_get(
        self, content_hash: str, caller_class: str, question_key: str, model: str
    ) -> dict | None:  # type: ignore[type-arg]
        r = self._one(
            "UPDATE digest SET used_at = %s WHERE content_hash = %s AND caller_class = %s "
            "AND question_key = %s AND model = %s RETURNING answer_json",
            (time.time(), content_hash, caller_class, question_key, model),
        )
        return msgspec.json.decode(r[0]) if r else None  # type: ignore[no-any-return]

    def digest_put(
        self,
        content_hash: str,
        caller_class: str,
        question_key: str,
        model: str,
        answer: dict,  # type: ignore[type-arg]
    ) -> None:
        now = time.time()
        self._run(
            "INSERT INTO digest (content_hash, caller_class, question_key, model, answer_json, "
            "created_at, used_at) VALUES (%s,%s,%s,%s,%s,%s,%s) "
            "ON CONFLICT (content_hash, caller_class, question_key, model) DO UPDATE SET "
            "answer_json = EXCLUDED.answer_json, created_at = EXCLUDED.created_at, "
            "used_at = EXCLUDED.used_at",
            (content_hash, caller_class, question_key, model, msgspec.json.encode(answer), now,
             now),
        )  # fmt: skip

    def embed_have(self, content_hash: str, caller_class: str, model: str) -> list[int]:
        rows = self._all(
            "SELECT chunk FROM embedding WHERE content_hash = %s AND caller_class = %s "
            "AND model = %s ORDER BY chunk",
            (content_hash, caller_class, model),
        )
        return [int(r[0]) for r in rows]

    def embed_count(self, content_hash: str, caller_class: str, model: str) -> int:
        r = self._one(
            "SELECT COUNT(*) FROM embedding WHERE content_hash = %s AND caller_class = %s "
            "AND model = %s",
            (content_hash, caller_class, model),
        )
        return int(r[0]) if r else 0

    def embed_put(
        self, content_hash: str, caller_class: str, model: str, items: list[tuple[int, bytes]]
    ) -> int:
        now = time.time()
        with self._tx() as c:
            with c.cursor() as cur:
                cur.executemany(
                    "INSERT INTO embedding (content_hash, caller_class, model, chunk, vector, "
                    "used_at) VALUES (%s,%s,%s,%s,%s,%s) ON CONFLICT "
                    "(content_hash, caller_class, model, chunk) DO UPDATE SET "
                    "vector = EXCLUDED.vector, used_at = EXCLUDED.used_at",
                    [(content_hash, caller_class, model, n, v, now) for n, v in items],
                )
            return self.embed_count(content_hash, caller_class, model)

    def embed_vectors(self, content_hash: str, caller_class: str, model: str) -> list[bytes]:
        with self._tx():
            self._run(
                "UPDATE embedding SET used_at = %s WHERE content_hash = %s "
                "AND caller_class = %s AND model = %s AND chunk = 0",
                (time.time(), content_hash, caller_class, model),
            )
            rows = self._all(
                "SELECT vector FROM embedding WHERE content_hash = %s AND caller_class = %s "
                "AND model = %s ORDER BY chunk",
                (content_hash, caller_class, model),
            )
        return [bytes(r[0]) for r in rows]

    def digest_prune(self, older_than: float) -> int:
        cached = (
            "SELECT content_hash, caller_class FROM content "
            "UNION SELECT content_hash, caller_class FROM pdf_doc"
        )
        stale_sets = (
            "SELECT content_hash, caller_class, model FROM embedding "
            "GROUP BY content_hash, caller_class, model HAVING MAX(used_at) < %s"
        )
        with self._tx():
            gone = self._run(
                f"DELETE FROM digest WHERE used_at < %s AND (content_hash, caller_class) "
                f"NOT IN ({cached})",
                (older_than,),
            )
            gone += self._run(
                f"DELETE FROM embedding WHERE (content_hash, caller_class, model) IN "
                f"({stale_sets}) AND (content_hash, caller_class) NOT IN ({cached})",
                (older_than,),
            )
        return gone

    # -- batch jobs ----------------------------------------------------------------------------

    def batch_submit(
        self, job: BatchJob, targets: list[tuple[str, bytes]], caps: tuple[int, int], ttl: float
    ) -> tuple[str, BatchJob | None]:
        """As SQLite's, in one transaction under an advisory lock: the caps hold across
        every replica that shares the database."""
        now = job.created_at
        with self._tx():
            self._run("SELECT pg_advisory_xact_lock(%s)", (_BATCH_LOCK,))
            found = self.batch_find(job.idem_key, job.caller, now - ttl)
            if found is not None:
                self.batch_touch(found.id, now)
                return "reused", self.batch_job(found.id, now, ttl)
            if job.kind == EXTRACT:
                if not self._extract_room(now, caps[1]):
                    return "busy", None
            else:
                mine, everyone = self.batch_live_counts(job.caller)
                if mine >= caps[0]:
                    return "caller_busy", None
                if everyone >= caps[1]:
                    return "busy", None
            self.batch_create(job, targets)
            return "created", job

    def _extract_room(self, now: float, cap: int) -> bool:
        """As SQLite's: room for one more extract job among at most `cap` kept."""
        r = self._one(
            f"SELECT COUNT(*) FROM batch_job WHERE kind = %s AND (status IN {LIVE} OR lease >= %s)",
            (EXTRACT, now - EXTRACT_KEEP),
        )
        if r is not None and int(r[0]) < cap:
            return True
        gone = self._run(
            "DELETE FROM batch_job WHERE id = (SELECT id FROM batch_job WHERE kind = %s AND "
            f"status NOT IN {LIVE} ORDER BY lease LIMIT 1)",
            (EXTRACT,),
        )
        return gone == 1

    def batch_find(self, idem_key: str, caller: str, not_before: float) -> BatchJob | None:
        r = self._one(
            f"SELECT {_JOB} FROM batch_job WHERE idem_key = %s AND caller = %s AND lease >= %s "
            f"AND status IN {REUSABLE} ORDER BY created_at DESC LIMIT 1",
            (idem_key, caller, not_before),
        )
        return _job(r)

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
                f"INSERT INTO batch_job ({_JOB}, runner, runner_until) "
                f"VALUES ({', '.join(['%s'] * 15)})",
                (job.id, job.caller, job.caller_class, job.idem_key, job.status, job.error,
                 job.targets_total, job.targets_done, job.created_at, job.lease, job.nbytes,
                 job.kind, job.spec, self.replica, time.time() + self.lease),
            )  # fmt: skip
            with c.cursor() as cur:
                cur.executemany(
                    "INSERT INTO batch_target (job_id, idx, url, options, status) "
                    "VALUES (%s, %s, %s, %s, 'pending')",
                    [(job.id, i, url, opts) for i, (url, opts) in enumerate(targets)],
                )

    def batch_job(self, job_id: str, now: float, ttl: float) -> BatchJob | None:
        r = self._one(
            f"SELECT {_JOB} FROM batch_job WHERE id = %s AND (lease >= %s OR status IN {LIVE})",
            (job_id, now - ttl),
        )
        return _job(r)

    def batch_targets(self, job_id: str, with_results: bool = False) -> list[BatchTarget]:
        cols = _TARGET.format(result="result" if with_results else "NULL::bytea")
        rows = self._all(
            f"SELECT {cols} FROM batch_target WHERE job_id = %s ORDER BY idx", (job_id,)
        )
        return [_target(r) for r in rows]

    def batch_target(self, job_id: str, idx: int) -> BatchTarget | None:
        r = self._one(
            f"SELECT {_TARGET.format(result='result')} FROM batch_target "
            "WHERE job_id = %s AND idx = %s",
            (job_id, idx),
        )
        return _target(r) if r else None

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
            f"SELECT {_TARGET.format(result='result')} FROM batch_target "
            "WHERE job_id = %s AND idx >= %s AND status = 'done' ORDER BY idx LIMIT %s",
            (job_id, start, limit),
        )
        return [_target(r) for r in rows]

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
                (out.status, out.result, out.error, out.hint, out.code, out.upstream_status,
                 job_id, idx),
            )  # fmt: skip
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
                f"UPDATE batch_job SET status = 'cancelled' WHERE id = %s AND status IN {LIVE}",
                (job_id,),
            )
            r = self._one("SELECT status FROM batch_job WHERE id = %s", (job_id,))
        return n == 1, str(r[0]) if r else "gone"

    def batch_sweep(self, now: float, ttl: float) -> int:
        return self._run(
            f"DELETE FROM batch_job WHERE status NOT IN {LIVE} AND "
            "(lease < %s OR (kind = %s AND lease < %s))",
            (now - ttl, EXTRACT, now - EXTRACT_KEEP),
        )

    def batch_nbytes(self) -> int:
        r = self._one("SELECT COALESCE(SUM(nbytes), 0) FROM batch_job")
        return int(r[0]) if r else 0

    def batch_evict(self, max_bytes: int, keep: str = "") -> int:
        with self._tx():
            total = self.batch_nbytes()
            if total <= max_bytes:
                return 0
            rows = self._all(
                f"SELECT id, nbytes FROM batch_job WHERE status NOT IN {LIVE} AND id != %s "
                "ORDER BY lease ASC",
                (keep,),
            )
            evicted = 0
            for job_id, nbytes in rows:
                if total <= max_bytes:
                    break
                self._run("DELETE FROM batch_job WHERE id = %s", (job_id,))
                total -= nbytes
                evicted += 1
            return evicted

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

    # -- health and life -----------------------------------------------------------------------

    def rollback(self) -> None:
        """Nothing to do: each call's transaction ends with the call (rolled back on error)."""

    def probe(self) -> bool:
        """Can the database take a write? One row rewritten (the only call that tries while
        the database is away)."""
        self._local.probing = True
        try:
            self._run(
                "INSERT INTO probe (id, at) VALUES (1, %s) ON CONFLICT (id) DO UPDATE SET at = "
                "EXCLUDED.at",
                (time.time(),),
            )
        finally:
            self._local.probing = False
        return True

    def live_bytes(self) -> int:
        r = self._one(
            "SELECT COALESCE(SUM(pg_total_relation_size(c.oid)), 0) FROM pg_class c "
            "WHERE c.relname IN ('content', 'pdf_doc', 'pdf_page') AND c.relkind = 'r'"
        )
        return int(r[0]) if r else 0

    def page_limit(self, pages: int) -> int:
        """SQLite's file cap; PostgreSQL's size is the operator's (0: no limit here)."""
        return 0

    def pool_stats(self) -> dict[str, int]:
        return self.pool.get_stats()

    def close(self) -> None:
        self.pool.close()
