"""The store's interface: every operation the rest of sift runs on its state, typed.

The StoreActor runs calls of the form `fn(store)` on its thread (`StoreCall`); the façade's
`store`, `store_later` and `store_tell` take such a function, so mypy checks every call's
name, arguments and result. Two backends implement this Protocol, `sift.store.sqlite` and
`sift.store.postgres`, chosen in `sift.store.backend` by `[store] url`.
"""

from __future__ import annotations

from typing import Any, Protocol

from sift.core.types import (
    BatchJob,
    BatchTarget,
    Content,
    PdfDoc,
    Resumed,
    Stored,
    TargetOutcome,
)
from sift.store.batch import Caps, Rows

# The kinds a store error is reported as (metrics, /healthz), with the words /healthz says.
REASONS = {
    "locked": "database locked",
    "read_only": "database read-only",
    "io_error": "I/O error",
    "corrupt": "database corrupt",
    "disk_full": "disk full",
    "cant_open": "cannot open the database",
    "unreachable": "database unreachable",
    "other": "database error",
}

# Queries that only read (the `op` label of the store error metric).
READS = frozenset(
    {
        "doc_get",
        "content_body",
        "pdf_get",
        "pdf_pages",
        "digest_get",
        "embed_count",
        "embed_vectors",
        "embed_have",
        "cache_bytes",
        "live_bytes",
        "batch_job",
        "batch_targets",
        "batch_target",
        "batch_find",
        "batch_live_counts",
        "batch_held_jobs",
        "batch_nbytes",
    }
)


class Store(Protocol):
    """The content cache, PDF pages, digests and embeddings (disposable), and batch jobs (not)."""

    # -- health and lifetime

    def fault(self, exc: BaseException) -> str | None:
        """The kind of a database error (a key of `REASONS`), or None when `exc`
        is not one (a bug: it propagates)."""
        ...

    def rollback(self) -> None: ...

    def probe(self) -> bool: ...

    def page_limit(self, pages: int) -> int: ...

    def close(self) -> None: ...

    # -- content (web pages)

    def doc_get(self, url: str, caller_class: str) -> Content | PdfDoc | None: ...

    def content_get(self, url: str, caller_class: str) -> Content | None: ...

    def content_body(self, url: str, caller_class: str) -> bytes | None: ...

    def content_touch(self, keys: list[tuple[str, str]], when: float) -> None: ...

    def content_put(self, c: Content, max_bytes: int) -> Stored: ...

    def content_refresh(
        self, url: str, caller_class: str, etag: str | None, last_modified: str | None
    ) -> float: ...

    def cache_bytes(self) -> int: ...

    def live_bytes(self) -> int: ...

    # -- PDFs

    def pdf_get(self, url: str, caller_class: str) -> PdfDoc | None: ...

    def pdf_pages(
        self, content_hash: str, caller_class: str, first: int, last: int
    ) -> list[tuple[int, str, str | None]]: ...

    def pdf_put(
        self, doc: PdfDoc, pages: list[tuple[int, str, str | None]], max_bytes: int
    ) -> Stored: ...

    def pdf_refresh(
        self, url: str, caller_class: str, etag: str | None, last_modified: str | None
    ) -> float: ...

    # -- digests and embeddings

    def digest_get(
        self, content_hash: str, caller_class: str, question_key: str, model: str
    ) -> dict[str, Any] | None: ...

    def digest_put(
        self,
        content_hash: str,
        caller_class: str,
        question_key: str,
        model: str,
        answer: dict[str, Any],
    ) -> None: ...

    def digest_prune(self, older_than: float) -> int: ...

    def embed_have(self, content_hash: str, caller_class: str, model: str) -> list[int]: ...

    def embed_count(self, content_hash: str, caller_class: str, model: str) -> int: ...

    def embed_put(
        self, content_hash: str, caller_class: str, model: str, items: list[tuple[int, bytes]]
    ) -> int: ...

    def embed_vectors(self, content_hash: str, caller_class: str, model: str) -> list[bytes]: ...

    # -- batch jobs

    def batch_submit(
        self, job: BatchJob, targets: Rows, caps: Caps, ttl: float, queue: Caps | None = None
    ) -> tuple[str, BatchJob | None]: ...

    def batch_promote(self, caps: Caps, now: float) -> Resumed:
        """The waiting jobs that fit the live-job `caps` now, oldest first, this runner's."""
        ...

    def batch_job(self, job_id: str, now: float, ttl: float) -> BatchJob | None: ...

    def batch_held_jobs(self, caller: str, caller_class: str, kind: str) -> list[BatchJob]:
        """The caller's jobs of `kind` not ended yet, oldest first."""
        ...

    def batch_targets(self, job_id: str, with_results: bool = False) -> list[BatchTarget]: ...

    def batch_target(self, job_id: str, idx: int) -> BatchTarget | None: ...

    def batch_grow(
        self, job_id: str, first: int, targets: list[tuple[str, bytes]], skipped: list[str]
    ) -> None: ...

    def batch_skipped(self, job_id: str) -> list[str]: ...

    def batch_results(self, job_id: str, start: int, limit: int) -> list[BatchTarget]: ...

    def batch_touch(self, job_id: str, now: float) -> None: ...

    def batch_target_running(self, job_id: str, idx: int) -> str: ...

    def batch_target_pending(self, job_id: str, idx: int) -> None: ...

    def batch_finish_target(
        self, job_id: str, idx: int, out: TargetOutcome, now: float, max_bytes: int
    ) -> tuple[bool, int]: ...

    def batch_finish_job(self, job_id: str, status: str, error: str | None = None) -> str: ...

    def batch_cancel(self, job_id: str) -> tuple[bool, str]: ...

    def batch_sweep(self, now: float, ttl: float) -> int: ...

    def batch_resume(self, reason: str, now: float) -> Resumed:
        """At start-up: this process's live jobs, to go on with (a target in flight at two
        restarts fails with `reason`)."""
        ...

    def batch_claim(self, reason: str, now: float, limit: int) -> Resumed:
        """Up to `limit` live jobs whose runner's lease lapsed, now this runner's (none on a
        backend that one process owns)."""
        ...

    def batch_steal(self, now: float, limit: int) -> Resumed:
        """Up to `limit` live jobs waiting at replicas that hold more jobs than workers, now
        this runner's (none on a backend that one process owns)."""
        ...

    def batch_heartbeat(self, now: float, workers: int, held: list[str]) -> list[str]:
        """Renew the lease of the jobs this runner `held` and publish its `workers`; returns
        the ids it still holds."""
        ...
