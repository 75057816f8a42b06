"""PostgreSQL's queries for digests and embeddings, as SQLite's (`sqlite/digest.py`)."""

from __future__ import annotations

import time

import msgspec

from sift.store.postgres.connection import PgConnection


class PgDigest(PgConnection):
    """The digest and embedding tables."""

    def digest_get(
        self, content_hash: str, caller_class: str, question_key: str, model: str
    ) -> dict | None:  # type: ignore[type-arg]
        r = self._one(
            "UPDATE digest SET used_at = %s WHERE content_hash = %s AND caller_class = %s "
            "AND question_key = %s AND model = %s RETURNING answer_json",
            (time.time(), content_hash, caller_class, question_key, model),
        )
        return msgspec.json.decode(r[0]) if r else None

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
