"""SQLite's queries for digests and embeddings (schema step 4).

Digests are cached per (content hash, caller class, question, model); the question is kept
only as a hash. Embeddings are per (content hash, caller class, model key, chunk), so they serve
every question and every URL that had the same content, and never cross a caller class. Both
go when they have not been used for a while and no cached document has their content hash.
"""

from __future__ import annotations

import time

import msgspec

from sift.store.sqlite.connection import SqliteConnection


class SqliteDigest(SqliteConnection):
    """The digest and embedding tables, in the cache file."""

    def digest_get(
        self, content_hash: str, caller_class: str, question_key: str, model: str
    ) -> dict | None:  # type: ignore[type-arg]
        key = (content_hash, caller_class, question_key, model)
        r = self.db.execute(
            "SELECT answer_json FROM digest WHERE content_hash = ? AND caller_class = ? "
            "AND question_key = ? AND model = ?",
            key,
        ).fetchone()
        if r is None:
            return None
        self.db.execute(
            "UPDATE digest SET used_at = ? WHERE content_hash = ? AND caller_class = ? "
            "AND question_key = ? AND model = ?",
            (time.time(), *key),
        )
        return msgspec.json.decode(r[0])  # type: ignore[no-any-return]

    def digest_put(
        self,
        content_hash: str,
        caller_class: str,
        question_key: str,
        model: str,
        answer: dict,  # type: ignore[type-arg]
    ) -> None:
        now = time.time()
        self.db.execute(
            "INSERT OR REPLACE INTO digest (content_hash, caller_class, question_key, model, "
            "answer_json, created_at, used_at) VALUES (?,?,?,?,?,?,?)",
            (
                content_hash,
                caller_class,
                question_key,
                model,
                msgspec.json.encode(answer),
                now,
                now,
            ),
        )

    def embed_have(self, content_hash: str, caller_class: str, model: str) -> list[int]:
        """The chunk numbers that already have an embedding."""
        rows = self.db.execute(
            "SELECT chunk FROM embedding WHERE content_hash = ? AND caller_class = ? "
            "AND model = ? ORDER BY chunk",
            (content_hash, caller_class, model),
        ).fetchall()
        return [r[0] for r in rows]

    def embed_count(self, content_hash: str, caller_class: str, model: str) -> int:
        return int(
            self.db.execute(
                "SELECT COUNT(*) FROM embedding WHERE content_hash = ? AND caller_class = ? "
                "AND model = ?",
                (content_hash, caller_class, model),
            ).fetchone()[0]
        )

    def embed_put(
        self, content_hash: str, caller_class: str, model: str, items: list[tuple[int, bytes]]
    ) -> int:
        """Store (chunk number, vector) pairs; returns how many the set now holds."""
        now = time.time()
        self.db.executemany(
            "INSERT OR REPLACE INTO embedding (content_hash, caller_class, model, chunk, vector, "
            "used_at) VALUES (?,?,?,?,?,?)",
            [(content_hash, caller_class, model, n, v, now) for n, v in items],
        )
        return self.embed_count(content_hash, caller_class, model)

    def embed_vectors(self, content_hash: str, caller_class: str, model: str) -> list[bytes]:
        """Every stored vector, by chunk number (float32, unit length)."""
        now = time.time()
        self.db.execute(
            "UPDATE embedding SET used_at = ? WHERE content_hash = ? AND caller_class = ? "
            "AND model = ? AND chunk = 0",
            (now, content_hash, caller_class, model),
        )
        rows = self.db.execute(
            "SELECT vector FROM embedding WHERE content_hash = ? AND caller_class = ? "
            "AND model = ? ORDER BY chunk",
            (content_hash, caller_class, model),
        ).fetchall()
        return [r[0] for r in rows]

    def digest_prune(self, older_than: float) -> int:
        """Drop digests and embedding sets unused since `older_than` (epoch seconds) whose
        content is no longer cached; returns the rows removed."""
        cached = (
            "SELECT content_hash, caller_class FROM content "
            "UNION SELECT content_hash, caller_class FROM pdf_doc"
        )
        gone = self.db.execute(
            f"DELETE FROM digest WHERE used_at < ? AND (content_hash, caller_class) "
            f"NOT IN ({cached})",
            (older_than,),
        ).rowcount
        stale_sets = (
            "SELECT content_hash, caller_class, model FROM embedding "
            "GROUP BY content_hash, caller_class, model HAVING MAX(used_at) < ?"
        )
        gone += self.db.execute(
            f"DELETE FROM embedding WHERE (content_hash, caller_class, model) IN ({stale_sets}) "
            f"AND (content_hash, caller_class) NOT IN ({cached})",
            (older_than,),
        ).rowcount
        return gone
