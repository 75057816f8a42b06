"""Digests through the real actors and a fake OpenAI-compatible model on loopback: prompts,
citations, caching, fallbacks, the digest gate, BM25 then hybrid on 2,000 pages, privacy."""

from __future__ import annotations

import asyncio
import logging
from pathlib import Path
from typing import Any, cast

import msgspec
import pytest

from sift.core.callers import Caller
from sift.digest import prompt
from sift.service.answer.digest import Asked, DigestAnswer, digest
from sift.service.parts.runtime import Runtime
from tests.support.digest_corpus import document
from tests.support.digest_harness import DigestServices
from tests.support.fake_llm import FakeModel, refused_url

FLEET = Caller("agent", "fleet")
RESTRICTED = Caller("secret", "restricted")

THREE_PAGES = [
    "Annual report of the Northwind Tea Company. This report covers the year 2025.",
    "Revenue grew by nine percent. The warehouse in Leeds holds 4,200 pallets of tea. "
    "Staff numbers were stable.",
    "The outlook for next year is stable. The board thanks every employee.",
]
QUESTION = "How many pallets does the Leeds warehouse hold?"


def model_cfg(fake: FakeModel | None = None, url: str = "", **digest: Any) -> dict[str, Any]:
    return {"digest": {"endpoint": url or (fake.url if fake else ""), "model": "fake-1", **digest}}


async def ask(
    svc: DigestServices,
    question: str = QUESTION,
    pages: list[str] = THREE_PAGES,
    caller: Caller = FLEET,
    content_hash: str = "hash-3p",
    kind: str = "pdf",
) -> DigestAnswer:
    runtime = cast(Runtime, svc)  # the harness has the parts of a Runtime that digest uses
    asked = Asked(
        caller_class=caller.cls,
        content_hash=content_hash,
        pages=tuple(pages),
        kind=kind,
        title="Report",
        question=question,
        out_cap=50_000,
    )
    return await digest(runtime, asked)


def run(tmp_path: Path, overrides: dict[str, Any], scenario: Any) -> Any:
    with DigestServices(tmp_path, overrides) as svc:
        return asyncio.run(scenario(svc))


def test_extractive_digest_without_a_model(tmp_path):
    d = run(tmp_path, {}, ask)
    assert d.model == "extractive" and d.warning is None and d.cached is False
    assert d.answer.split("\n\n")[0] == "The warehouse in Leeds holds 4,200 pallets of tea. (p. 2)"
    assert d.retrieval == "bm25" and d.embedded == "0/1"
    assert msgspec.structs.asdict(d.facts()) == {
        "answer": d.answer,
        "model": "extractive",
        "retrieval": "bm25",
        "chunks": 1,
        "embedded": "0/1",
        "cached": False,
    }


def test_an_empty_document_is_answered_without_asking_the_model(tmp_path, fake_model):
    d = run(tmp_path, model_cfg(fake_model), lambda svc: ask(svc, pages=["", "  "]))
    assert d.answer == "The document has no text to answer from." and d.embedded == "0/0"
    assert d.model == "extractive" and not fake_model.chats


def test_model_gets_page_markers_and_the_cite_line_and_cites_the_page(tmp_path, fake_model):
    d = run(tmp_path, model_cfg(fake_model), ask)
    assert d.model == "fake-1" and d.retrieval == "full" and d.warning is None
    assert "(p. 2)" in d.answer and "4,200 pallets" in d.answer
    [chat] = fake_model.chats
    system, user = chat["messages"][0]["content"], chat["messages"][1]["content"]
    assert prompt.CITE_LINE in system
    assert "--- page 2 ---" in user and "--- page 3 ---" in user and QUESTION in user
    assert chat["model"] == "fake-1" and chat["temperature"] == 0


def test_the_same_question_twice_is_cached_and_asks_the_model_once(tmp_path, fake_model):
    async def scenario(svc):
        first = await ask(svc)
        second = await ask(svc, question="  how many PALLETS does the Leeds warehouse hold? ")
        other_class = await ask(svc, caller=RESTRICTED)
        return first, second, other_class

    first, second, other_class = run(tmp_path, model_cfg(fake_model), scenario)
    assert first.cached is False and second.cached is True
    assert second.answer == first.answer and second.retrieval == first.retrieval
    # The restricted class has its own partition: not served from the fleet's cache.
    assert other_class.cached is False
    assert len(fake_model.chats) == 2


@pytest.mark.parametrize("how", ["refused", "500", "timeout"])
def test_a_failing_model_gives_the_extractive_answer_with_a_warning(tmp_path, fake_model, how):
    url = refused_url() if how == "refused" else fake_model.url
    fake_model.down = how == "500"
    fake_model.hold_chat = how == "timeout"

    async def scenario(svc):
        failed = await ask(svc)
        fake_model.down = False
        fake_model.release()
        again = await ask(svc)  # a fallback is not cached: the model is asked again
        return failed, again

    failed, again = run(tmp_path, model_cfg(url=url, timeout=0.5), scenario)
    assert failed.model == "extractive" and failed.warning and "model failed" in failed.warning
    assert "The warehouse in Leeds holds 4,200 pallets of tea. (p. 2)" in failed.answer
    assert again.cached is False
    if how != "refused":
        assert again.model == "fake-1" and again.warning is None


def test_the_digest_gate_lets_one_model_call_through_at_a_time(tmp_path, fake_model):
    fake_model.hold_chat = True

    async def scenario(svc):
        loop = asyncio.get_running_loop()
        a = asyncio.create_task(ask(svc, question="What does the board thank?"))
        b = asyncio.create_task(ask(svc, question="How did revenue grow?"))
        await loop.run_in_executor(None, fake_model.chat_arrived.wait, 30)
        fake_model.release()
        return await a, await b

    a, b = run(tmp_path, model_cfg(fake_model, concurrency=1), scenario)
    assert a.model == b.model == "fake-1"
    assert len(fake_model.chats) == 2 and fake_model.chat_max_inflight == 1


def test_two_thousand_pages_bm25_at_once_then_hybrid(tmp_path, fake_model):
    pages, facts = document(2000)
    overrides = {
        **model_cfg(fake_model),
        "embed": {"endpoint": fake_model.url, "model": "fake-embed", "batch": 64},
    }
    fake_model.hold_embeddings = True  # the first question must not wait for them

    async def scenario(svc):
        first = await ask(svc, facts[0].question, pages, content_hash="big")
        fake_model.release()
        settled = await svc.embeddings_settled("big", "fleet")
        later = [await ask(svc, f.question, pages, content_hash="big") for f in facts[1:]]
        return first, settled, later

    first, settled, later = run(tmp_path, overrides, scenario)
    n = first.embedded.split("/")[1]
    assert first.retrieval == "bm25" and first.embedded == f"0/{n}" and int(n) > 500
    assert f"(p. {facts[0].page})" in first.answer
    # Every chunk embedded once, then one embedding per later question.
    assert settled == "done" and fake_model.embedded_texts == int(n) + len(later)
    assert {d.retrieval for d in later} == {"hybrid"}
    assert {d.embedded for d in later} == {f"{n}/{n}"}
    for fact, d in zip(facts[1:], later, strict=True):
        assert f"(p. {fact.page})" in d.answer, (fact.question, d.answer)
        assert fact.answer in d.answer


def test_hit_at_5_on_planted_facts():
    from bench.digest_hits import measure

    pages, facts = document(2000)
    r = measure(pages, facts, k=5)
    assert r["bm25_hit@5"] >= 19 and r["hybrid_hit@5"] >= 16, r


def test_extractive_digest_ranks_hybrid_once_embedded(tmp_path, fake_model):
    pages = [f"Filler page {n} about shipping schedules and harbours." for n in range(1, 40)]
    pages[20] = "The lighthouse keeper of Halvard replaces the lamp every eleven months."
    overrides = {"embed": {"endpoint": fake_model.url, "model": "fake-embed"}}
    pages = [p + " " + " ".join(["filler"] * 700) for p in pages]  # several chunks

    async def scenario(svc):
        first = await ask(svc, "How often is the Halvard lamp replaced?", pages, content_hash="x")
        await svc.embeddings_settled("x", "fleet")
        second = await ask(svc, "Who replaces the lamp at Halvard?", pages, content_hash="x")
        return first, second

    first, second = run(tmp_path, overrides, scenario)
    assert first.retrieval == "bm25" and second.retrieval == "hybrid"
    assert "(p. 21)" in first.answer and "(p. 21)" in second.answer
    assert first.model == second.model == "extractive"


def test_questions_and_prompts_never_reach_the_logs(tmp_path, fake_model, caplog):
    secret_q = "What is the quokka-zebra-7731 clearance of the Leeds warehouse?"
    secret_fact = "The quokka-zebra-7731 clearance is granted to the night shift."
    pages = [THREE_PAGES[0], secret_fact, THREE_PAGES[2]]
    caplog.set_level(logging.DEBUG)
    fake_model.down = True  # the failure path logs a warning: it must not carry text

    async def scenario(svc):
        return await ask(svc, secret_q, pages, caller=RESTRICTED, content_hash="secret")

    d = run(tmp_path, model_cfg(fake_model), scenario)
    assert d.warning and "(p. 2)" in d.answer
    assert any("digest model failed" in r.getMessage() for r in caplog.records)
    for record in caplog.records:
        line = record.getMessage() + repr(getattr(record, "fields", ""))
        assert "quokka" not in line and "clearance" not in line and "warehouse" not in line
