"""The pure side of `/v1/read` and `/v1/verify`: one budget across sources
(`service/answer/passages.py`) and where a quote is (`documents/quotes.py`), without a
server."""

from __future__ import annotations

import re
from typing import Any

import pytest

from sift.documents import tokens
from sift.documents.pages import PagedText
from sift.documents.quotes import find, part_spans
from sift.documents.render import full_text
from sift.service.answer.passages import Source, allot, candidates
from tests.support.read_corpus import filler

FACT = "The secret vault code is 4471."


def paged_source(url: str = "http://a/doc.pdf") -> tuple[Source, str]:
    pages = tuple(
        f"Page {n} opens.\n\n{filler(n, 120)}" + (f"\n\n{FACT}" if n == 17 else "")
        for n in range(1, 41)
    )
    doc = PagedText(pages=pages)
    text = full_text(doc)
    unit, parts = part_spans(text, doc)
    return Source(url, text, "h1", unit, parts), text


def flat_source(url: str, seed: int, fact: str = "") -> Source:
    paras = [filler(seed * 100 + i, 90) for i in range(30)]
    if fact:
        paras.insert(20, fact)
    return Source(url, "\n\n".join(paras), f"h{seed}")


@pytest.mark.parametrize("budget", [100, 237, 600, 1500, 4000])
@pytest.mark.parametrize("question", [None, "What is the vault code? When did Zorbia fall?"])
def test_the_answer_never_exceeds_the_budget(budget, question):
    blocked = Source("http://b/", error={"success": False, "error": "blocked: x"}, code=403)
    sources = [paged_source()[0], flat_source("http://c/", 2, "Zorbia fell in 1204."), blocked]
    done = allot(sources, question, budget)
    assert done.tokens == tokens.count(done.content) <= budget
    assert [s["status"] for s in done.states][2] == "error"


def test_a_question_takes_the_passages_that_answer_it_from_every_source():
    pdf, text = paged_source()
    other = flat_source("http://c/", 2, "Zorbia fell in 1204.")
    done = allot([pdf, other], "What is the vault code? When did Zorbia fall?", 600)
    quoted = {p.source: text[p.start : p.end] for p in done.passages if p.score > 0}
    assert FACT in quoted[0] and "Zorbia fell in 1204." in other.text[slice(*_span(done, 1))]
    fact = next(p for p in done.passages if p.source == 0 and p.score > 0)
    assert fact.part == 17
    assert done.content.index(FACT) < done.content.index("Page 1 opens.")  # best first


def _span(done, source):
    p = max((p for p in done.passages if p.source == source), key=lambda p: p.score)
    return p.start, p.end


def test_without_a_question_each_source_gets_its_head_and_a_fair_share():
    sources = [flat_source(f"http://{n}/", n) for n in range(1, 4)]
    done = allot(sources, None, 1500)
    for i in range(len(sources)):
        mine = sorted((p.start, p.end) for p in done.passages if p.source == i)
        assert mine[0][0] == 0  # the head
        state: dict[str, Any] = done.states[i]
        assert state["status"] == "cut" and state["next"]["offset"] == mine[-1][1]
    spent = [sum(p.end - p.start for p in done.passages if p.source == i) for i in range(3)]
    assert min(spent) > 0.7 * max(spent)


def test_a_whole_short_source_is_ok_and_has_no_continuation():
    short = Source("http://s/", "A short note.", "h")
    done = allot([short, flat_source("http://l/", 4)], None, 800)
    assert done.states[0]["status"] == "ok" and "next" not in done.states[0]
    assert done.states[1]["status"] == "cut"


def test_candidates_never_cross_a_part_and_cover_the_text():
    src, text = paged_source()
    passages = list(candidates(0, src))
    for p in passages:
        part = next(q for q in src.parts if q.number == p.part)
        assert part.start <= p.start < p.end <= part.end
    shown = " ".join(text[p.start : p.end] for p in passages)
    assert shown.split() == re.sub(r"--- page \d+ ---", " ", text).split()  # all but markers


def test_find_is_exact_or_folded_and_never_a_near_miss():
    src, text = paged_source()
    exact = find(text, FACT, src.parts)
    assert exact is not None and exact.how == "exact" and exact.part == 17
    assert text[exact.start : exact.end] == FACT
    folded = find(text, "The secret\n vault  code is 4471.", src.parts)
    assert folded is not None and folded.how == "whitespace" and folded.start == exact.start
    for near in ("The secret vault code is 4472.", "The secret safe code is 4471.", "vault codes"):
        assert find(text, near, src.parts) is None
    page_3 = next(p for p in src.parts if p.number == 3)
    across = text[page_3.end - 15 : page_3.end + 40]  # end of page 3, its marker, page 4
    assert "--- page 4 ---" in across and find(text, across, src.parts) is None
    tail = text[page_3.end - 15 : page_3.end]
    bare = tail + " " + text[page_3.end + 2 + len("--- page 4 ---") + 2 :][:20]
    assert find(text, bare, src.parts) is None  # the words on both sides, marker left out
    assert find(text, "   ", src.parts) is None
