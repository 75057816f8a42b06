"""Digests through HTTP: `question` on /v1/fetch, the envelope's `digest` object, the cache,
a model that is down, and the logs of a restricted caller's question."""

from __future__ import annotations

import logging

from sift.actors.bridge import ThreadReply
from sift.actors.embed import EmbedIdle
from tests.support.digest_corpus import document, to_pdf
from tests.support.pdfs import PHRASES, three_page_pdf
from tests.support.sift_server import RESTRICTED_TOKEN

DOC = (
    "Northwind Tea Company, annual report.\n\n"
    "Revenue grew by nine percent. The warehouse in Leeds holds 4,200 pallets of tea. "
    "Staff numbers were stable.\n\n"
    "The outlook for next year is stable. The board thanks every employee.\n"
)
QUESTION = "How many pallets does the Leeds warehouse hold?"


def model_overrides(url: str, **digest: object) -> dict[str, object]:
    return {"digest": {"endpoint": url, "model": "fake-1", **digest}}


def test_a_question_implies_digest_and_is_answered_extractively(sift, origin):
    origin.set("/report.txt", DOC, "text/plain")
    r = sift.fetch(origin.url("/report.txt"), question=QUESTION, context=False)
    assert r.status == 200, r.body
    env = r.json
    d = env["digest"]
    assert d["model"] == "extractive" and d["cached"] is False and d["retrieval"] == "bm25"
    assert d["chunks"] == 1 and d["embedded"] == "0/1"
    assert env["content"].startswith("The warehouse in Leeds holds 4,200 pallets of tea.")
    assert env["content"] == d["answer"] and env["chars"] == len(env["content"])
    r = sift.fetch(origin.url("/report.txt"), mode="digest")
    assert r.status == 400 and "question" in r.json["error"]


def test_the_model_answers_once_and_the_second_ask_is_cached(make_sift, origin, fake_model):
    s = make_sift(model_overrides(fake_model.url))
    origin.set("/report.txt", DOC, "text/plain")
    first = s.fetch(origin.url("/report.txt"), question=QUESTION)
    second = s.fetch(origin.url("/report.txt"), question=QUESTION)
    assert first.status == second.status == 200, first.body
    assert first.json["digest"]["model"] == "fake-1"
    assert first.json["digest"]["retrieval"] == "full"
    assert "4,200 pallets" in first.json["content"]
    assert first.json["content"].startswith("Source: ")  # the context header, then the answer
    assert first.json["digest"]["cached"] is False and second.json["digest"]["cached"] is True
    assert second.json["digest"]["answer"] == first.json["digest"]["answer"]
    assert len(fake_model.chats) == 1
    metrics = s.request("GET", "/metrics", token=None).body.decode()
    for line in (
        'sift_digest_total{outcome="model"}',
        'sift_digest_total{outcome="cached"}',
        'sift_digest_tokens_total{direction="sent"}',
        "sift_digest_seconds_count",
        "sift_embed_chunks_total",
    ):
        assert line in metrics, line


def test_a_model_that_is_down_gives_the_extractive_answer_and_200(make_sift, origin, fake_model):
    fake_model.down = True
    s = make_sift(model_overrides(fake_model.url))
    origin.set("/report.txt", DOC, "text/plain")
    r = s.fetch(origin.url("/report.txt"), question=QUESTION, context=False)
    assert r.status == 200, r.body
    assert r.json["digest"]["model"] == "extractive"
    assert "model failed" in r.json["warning"]
    assert "4,200 pallets of tea" in r.json["content"]


def test_a_restricted_callers_question_and_prompt_reach_no_log(
    make_sift, origin, fake_model, caplog
):
    caplog.set_level(logging.DEBUG)
    fake_model.down = True  # the failure path logs too
    s = make_sift(model_overrides(fake_model.url))
    secret = "The quokka-zebra clearance is granted to the night shift only."
    origin.set("/secret.txt", DOC + "\n" + secret, "text/plain")
    question = "Who is granted the quokka-zebra clearance?"
    r = s.fetch(origin.url("/secret.txt"), question=question, token=RESTRICTED_TOKEN)
    assert r.status == 200, r.body
    assert "night shift" in r.json["content"]
    assert fake_model.chats  # the prompt went to the model…
    for record in caplog.records:  # …and to no log line
        line = record.getMessage() + repr(getattr(record, "fields", ""))
        assert "quokka" not in line and "clearance" not in line and "pallets" not in line, line


def test_a_batch_target_with_a_question_runs_the_same_digest(make_sift, origin, fake_model, events):
    s = make_sift(model_overrides(fake_model.url))
    origin.set("/report.txt", DOC, "text/plain")
    r = s.post("/v1/batch", {"targets": [{"url": origin.url("/report.txt"), "question": QUESTION}]})
    assert r.status == 202, r.body
    job_id = r.json["job_id"]
    assert events.job(job_id) == "done"
    result = s.request("GET", f"/v1/batch/{job_id}/0").json["result"]
    assert result["digest"]["model"] == "fake-1" and "4,200 pallets" in result["content"]
    direct = s.fetch(origin.url("/report.txt"), question=QUESTION)
    assert direct.json["digest"]["cached"] is True  # the batch's digest, from the cache
    assert len(fake_model.chats) == 1


def test_a_pdf_question_sends_page_markers_and_cites_the_page(make_sift, origin, fake_model):
    s = make_sift(model_overrides(fake_model.url))
    origin.set("/three.pdf", three_page_pdf(), "application/pdf")
    question = f"On which page is the {PHRASES[2]}?"
    r = s.fetch(origin.url("/three.pdf"), question=question)
    assert r.status == 200, r.body
    assert r.json["kind"] == "pdf" and r.json["digest"]["model"] == "fake-1"
    assert "(p. 2)" in r.json["content"] and PHRASES[2] in r.json["content"]
    [chat] = fake_model.chats
    system, user = chat["messages"][0]["content"], chat["messages"][1]["content"]
    assert "When the document has `--- page N ---` markers, cite pages as (p. N)." in system
    assert "--- page 2 ---" in user and "--- page 3 ---" in user


def test_a_long_pdf_is_answered_by_bm25_at_once_then_by_hybrid(make_sift, origin, fake_model):
    pages, facts = document(300)
    origin.set("/facts.pdf", to_pdf(pages), "application/pdf")
    embed = {"endpoint": fake_model.url, "model": "fake-embed", "batch": 64}
    s = make_sift({**model_overrides(fake_model.url), "embed": embed})
    fake_model.hold_embeddings = True  # the first question must not wait for them
    first = s.fetch(origin.url("/facts.pdf"), question=facts[0].question, context=False)
    assert first.status == 200, first.body
    d = first.json["digest"]
    assert d["retrieval"] == "bm25" and d["embedded"].startswith("0/")
    assert f"(p. {facts[0].page})" in first.json["content"]
    assert "--- page " in fake_model.chats[0]["messages"][1]["content"]

    fake_model.release()
    idle: ThreadReply[str] = ThreadReply()
    s.svc.roles.embed().tell(EmbedIdle(idle))
    assert idle.wait(60) == "idle"
    for fact in facts[1:6]:
        r = s.fetch(origin.url("/facts.pdf"), question=fact.question, context=False)
        assert r.status == 200, r.body
        n = r.json["digest"]["embedded"].split("/")[1]
        assert (
            r.json["digest"]["retrieval"] == "hybrid" and r.json["digest"]["embedded"] == f"{n}/{n}"
        )
        assert f"(p. {fact.page})" in r.json["content"], (fact.question, r.json["content"])
