"""The digest's plain parts: chunks, BM25, ranking and fusion, the extractive answer, the
prompt, and the digest/embedding queries — no threads, no network."""

from __future__ import annotations

import sqlite3
import time
from array import array

from sift.actors.digest import DigestActor, Prepare, Rank
from sift.digest import bm25, chunks, extractive, prompt
from sift.digest.rank import Index, cosine_order, fuse, to_bytes
from sift.store.sqlite.connection import connect
from sift.store.sqlite.store import SqliteStore as Store


def test_chunks_know_their_pages_and_pack_small_ones():
    pages = [f"Page {n} says something short." for n in range(1, 6)]
    cs = chunks.split(pages)
    assert len(cs) == 1
    assert [p for p, _ in cs[0].parts] == [1, 2, 3, 4, 5]
    text = cs[0].render()
    assert text.startswith("--- page 1 ---\n\nPage 1 says")
    assert "--- page 5 ---\n\nPage 5 says" in text


def test_a_long_page_is_split_at_paragraphs_and_the_split_is_stable():
    para = " ".join(["word"] * 300)  # ~375 tokens
    pages = ["\n\n".join([para] * 8), "Short second page."]
    cs = chunks.split(pages)
    assert len(cs) >= 3
    assert all(c.tokens <= chunks.TARGET_TOKENS for c in cs)
    assert cs[0].first_page == 1 and cs[-1].last_page == 2
    assert [c.index for c in cs] == list(range(len(cs)))
    assert chunks.split(pages) == cs  # same pages, same chunks: embeddings can key on index


def test_a_giant_sentence_is_cut_hard():
    cs = chunks.split(["x" * 50_000])
    assert len(cs) > 10
    assert all(c.tokens <= chunks.TARGET_TOKENS + 2 for c in cs)  # + the joins between parts


def test_tokenize_stems_drops_stop_words_and_bigrams_cjk():
    assert bm25.tokenize("The pages of the Reports") == ["page", "report"]
    assert bm25.tokenize("running classes") == ["runn", "class"]
    assert bm25.tokenize("注意力机制") == ["注意", "意力", "力机", "机制"]


def test_bm25_prefers_the_rare_word_and_the_shorter_document():
    docs = [
        "the cat sat on the mat",
        "the cat saw the zebra",
        "a long text about the zebra and " + "many other words " * 10,
    ]
    index = bm25.BM25(bm25.tokenize(d) for d in docs)
    assert index.rank(bm25.tokenize("zebra"))[0] == 1
    assert index.rank(bm25.tokenize("cat mat")) == [0, 1]
    assert index.rank(bm25.tokenize("nothing here")) == []


def test_fusion_and_cosine():
    assert fuse([1, 2, 3], [2, 3, 1])[0] == 2
    assert cosine_order([1.0, 0.0], [[0.0, 1.0], [1.0, 0.0], [0.7, 0.7]]) == [1, 2, 0]


def test_index_ranks_every_chunk_and_goes_hybrid_only_with_all_vectors():
    pages = ["alpha " * 900, "beta " * 900, "gamma " * 900]
    index = Index.build(pages)
    order, how = index.rank("beta")
    assert how == "bm25" and sorted(order) == list(range(len(index.chunks)))
    assert index.chunks[order[0]].first_page == 2
    index.vectors["m"] = [array("f", [1.0, 0.0])] * (len(index.chunks) - 1)  # incomplete
    assert index.rank("beta", [1.0, 0.0], "m")[1] == "bm25"


def test_extractive_answer_quotes_the_sentence_and_its_page():
    pages = [
        "Welcome to the annual report. It covers the year.",
        "Revenue grew strongly. The warehouse in Leeds holds 4,200 pallets of tea. Staff grew.",
        "Outlook for next year is stable.",
    ]
    index = Index.build(pages)
    q = "How many pallets does the Leeds warehouse hold?"
    order, _ = index.rank(q)
    text = extractive.answer(index, q, order, cap=2000)
    first = text.split("\n\n")[0]
    assert first == "The warehouse in Leeds holds 4,200 pallets of tea. (p. 2)"
    assert len(extractive.answer(index, q, order, cap=60)) <= 60


def test_prompt_renders_excerpts_in_order_with_gaps_and_markers():
    cs = chunks.split(["one " * 900, "two " * 900, "three " * 900, "four " * 900])
    text = prompt.render([cs[3], cs[0]], "page")
    assert text.index("--- page 1 ---") < text.index("[…]") < text.index("--- page 4 ---")
    chosen = prompt.select(cs, [2, 0, 1, 3], tokens=cs[2].tokens + cs[0].tokens)
    assert [c.index for c in chosen] == [2, 0]
    assert prompt.CITE_LINE in prompt.SYSTEM


def test_digest_and_embedding_queries(tmp_path):
    store = Store(connect(tmp_path / "s.db"))
    try:
        assert store.digest_get("h", "fleet", "q", "m") is None
        store.digest_put("h", "fleet", "q", "m", {"answer": "a", "model": "m"})
        assert store.digest_get("h", "fleet", "q", "m") == {"answer": "a", "model": "m"}
        assert store.digest_get("h", "restricted", "q", "m") is None
        vec = to_bytes([3.0, 4.0])
        assert store.embed_put("h", "fleet", "e", [(0, vec), (2, vec)]) == 2
        assert store.embed_have("h", "fleet", "e") == [0, 2]
        assert store.embed_count("h", "restricted", "e") == 0
        assert store.embed_vectors("h", "fleet", "e") == [vec, vec]
        # Nothing cached references "h", but it was used just now: kept until it ages.
        assert store.digest_prune(time.time() - 60) == 0
        assert store.digest_prune(time.time() + 1) == 3
        assert store.embed_count("h", "fleet", "e") == 0
    finally:
        store.close()


def test_schema_has_the_digest_tables(tmp_path):
    db = connect(tmp_path / "s.db")
    names = {r[0] for r in db.execute("SELECT name FROM sqlite_master WHERE type = 'table'")}
    assert {"digest", "embedding"} <= names
    assert isinstance(db, sqlite3.Connection)
    db.close()


def test_a_private_documents_index_is_dropped_once_ranked():
    """The DigestActor's work on a plain actor object (no thread): a shared document's index
    is kept for the next question, a private one's (`keep=False`) is not."""
    actor = DigestActor()
    pages = ("The harbour master keeps the ledger key in a blue copper box.", "Other things.")
    for key, keep in ((("h1", "fleet"), True), (("h2", "fleet"), False)):
        actor.handle_prepare(Prepare(key, pages, reply=None))  # type: ignore[arg-type]
        ranked = actor.handle_rank(
            Rank(
                key,
                pages,
                "Where is the ledger key?",
                2000,
                False,
                500,
                "page",
                reply=None,  # type: ignore[arg-type]
                keep=keep,
            )
        )
        assert "blue copper box" in ranked.extractive
        assert (key in actor.indexes) is keep
