"""The PostgreSQL backend of `Store`: one database shared by several replicas. One query
module per table (`content`, `pdf`, `digest`, `batch`) as SQLite's, on the pool and the
transactions of `connection`; jobs among the replicas in `replicas`; the migrations in
`schema`. What both backends decide the same way is in `store/cache.py` and `store/batch.py`.
psycopg is imported only when this package is (a `postgresql://` store URL)."""

from __future__ import annotations

from sift.store.postgres.connection import redact
from sift.store.postgres.content import PgContent
from sift.store.postgres.digest import PgDigest
from sift.store.postgres.pdf import PgPdf
from sift.store.postgres.replicas import PgReplicas

__all__ = ["PgStore", "redact"]


class PgStore(PgContent, PgPdf, PgDigest, PgReplicas):
    """Every query sift runs (`sift.store.protocol.Store`), on PostgreSQL. Thread-safe: each
    store actor's call takes a connection for one transaction."""
