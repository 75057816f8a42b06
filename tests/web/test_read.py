"""POST /v1/read and POST /v1/verify through HTTP (issue 36): five sources, one question, one
budget, citations that verify, continuations that read the rest exactly once."""

from __future__ import annotations

import re
from typing import Any

import pytest

from sift.documents import tokens
from tests.support.read_corpus import (
    BLOCKED,
    FACT_PAGE,
    FACTS,
    QUESTION,
    html_page,
    install,
    pdf_report,
)


def chain(sift: Any, url: str, offset: int, **fields: Any) -> str:
    """`/v1/fetch` from `offset`, following `next` to the end: each step starts where the one
    before stopped, so the text comes back exactly once."""
    parts: list[str] = []
    while True:
        r = sift.fetch(url, offset=offset, context=False, **fields)
        assert r.status == 200, r.body
        parts.append(r.json["content"])
        nxt = r.json.get("next")
        if nxt is None:
            return "".join(parts)
        assert isinstance(nxt, int) and nxt > offset, nxt
        offset = nxt


@pytest.fixture
def read_of_five(sift: Any, origin: Any) -> tuple[list[str], dict[str, Any]]:
    urls = install(origin)
    r = sift.post("/v1/read", {"urls": urls, "question": QUESTION, "max_tokens": 3000})
    assert r.status == 200, r.body
    return urls, r.json


def test_a_read_of_five_sources_quotes_every_fact_within_the_budget(sift, read_of_five):
    urls, answer = read_of_five
    assert answer["tokens"] == tokens.count(answer["content"]) <= 3000
    by_url = {s["url"]: s for s in answer["sources"]}
    assert [s["url"] for s in answer["sources"]] == urls
    blocked = by_url[BLOCKED]
    assert blocked["status"] == "error" and blocked["code"] == 403, blocked
    assert blocked["error"]["success"] is False
    assert blocked["error"]["error"].startswith("blocked: "), blocked
    assert "403 blocked: " in answer["content"]
    for planted in FACTS:
        holding = [p for p in answer["passages"] if planted.fact in p["text"]]
        assert holding, (planted.fact, answer["content"])
        p = holding[0]
        assert p["text"] in answer["content"]
        assert p["content_hash"] == by_url[p["url"]]["content_hash"]
        if p["url"].endswith(".pdf"):
            assert (p["unit"], p["part"]) == ("page", FACT_PAGE), p
        v = sift.post(
            "/v1/verify", {"url": p["url"], "quote": p["text"], "content_hash": p["content_hash"]}
        )
        assert v.status == 200, v.body
        assert v.json["found"] and v.json["match"] == "exact", v.json
        assert (v.json["start"], v.json["end"], v.json["part"]) == (p["start"], p["end"], p["part"])
        assert v.json["changed"] is False


def test_a_reads_citations_and_continuations_are_the_sources_text(sift, read_of_five):
    """A passage's offsets are in the text `/v1/fetch` reads by `offset`; a cut source's
    continuation reads the rest of it exactly once."""
    _, answer = read_of_five
    for state in answer["sources"]:
        if state["status"] == "error":
            continue
        whole = chain(sift, state["url"], 0)
        assert len(whole) == state["chars"]
        for p in answer["passages"]:
            if p["url"] == state["url"]:
                assert whole[p["start"] : p["end"]] == p["text"]
        assert state["status"] == "cut", state  # 3,000 tokens hold none of them whole
        nxt = state["next"]
        assert nxt["url"] == state["url"]
        assert chain(sift, state["url"], nxt["offset"]) == whole[nxt["offset"] :]
        # nothing before the continuation went unshown but spacing and page markers
        before = list(whole[: nxt["offset"]])
        for p in answer["passages"]:
            if p["url"] == state["url"]:
                before[p["start"] : p["end"]] = [" "] * (p["end"] - p["start"])
        assert not re.sub(r"--- page \d+ ---", "", "".join(before)).strip()


def test_without_a_question_every_source_gets_its_head_and_a_fair_share(sift, origin):
    urls = [u for u in install(origin) if u != BLOCKED]
    r = sift.post("/v1/read", {"urls": urls, "max_tokens": 2000})
    assert r.status == 200, r.body
    answer = r.json
    assert answer["tokens"] <= 2000
    spent: dict[str, int] = {}
    for p in answer["passages"]:
        spent[p["url"]] = spent.get(p["url"], 0) + tokens.count(p["text"])
    assert set(spent) == set(urls)
    assert min(spent.values()) > 0.5 * max(spent.values()), spent
    for url in urls:
        first = min(p["start"] for p in answer["passages"] if p["url"] == url)
        assert first < 200  # the head


def test_a_short_source_is_ok_whole_and_its_leftover_goes_to_the_rest(sift, origin):
    urls = install(origin)
    origin.set("/read/short", "<html><body><article><p>A short note.</p></article></body></html>")
    short = origin.url("/read/short")
    r = sift.post("/v1/read", {"urls": [short, urls[0]], "max_tokens": 1500})
    states = {s["url"]: s for s in r.json["sources"]}
    assert states[short]["status"] == "ok" and "next" not in states[short]
    assert states[urls[0]]["status"] == "cut"
    long_tokens = sum(tokens.count(p["text"]) for p in r.json["passages"] if p["url"] == urls[0])
    assert long_tokens > 900  # more than half of the budget: the short one left it


def test_verify_never_finds_a_near_miss(sift, origin):
    urls = install(origin)
    pdf = urls[-1]
    fact = FACTS[-1].fact
    whole = chain(sift, pdf, 0)
    page = whole.index(f"--- page {FACT_PAGE} ---")
    before, after = whole[:page].rstrip().rsplit("\n", 1)[-1], whole[page:].split("\n\n", 2)[1]
    across = f"{before[-20:]} {after[:20]}"
    cases = {
        fact: ("exact", True),
        fact.replace("7319", "7318"): (None, False),
        fact.replace("vault", "safe"): (None, False),
        fact.replace(" code ", "\n   code\t"): ("whitespace", True),
        across: (None, False),
    }
    for quote, (how, found) in cases.items():
        v = sift.post("/v1/verify", {"url": pdf, "quote": quote})
        assert v.status == 200, v.body
        assert (v.json["found"], v.json["match"]) == (found, how), (quote, v.json)
        if found:
            assert v.json["part"] == FACT_PAGE and v.json["unit"] == "page"
            assert " ".join(whole[v.json["start"] : v.json["end"]].split()) == fact


def test_verify_says_when_the_page_changed(sift, origin):
    urls = install(origin)
    url = urls[0]
    first = sift.post("/v1/verify", {"url": url, "quote": FACTS[0].fact})
    old = first.json["content_hash"]
    assert first.json["found"] and first.json["changed"] is None
    origin.set(
        FACTS[0].path,
        "<html><body><article><p>The bridge was replaced.</p></article></body></html>",
    )
    cached = sift.post("/v1/verify", {"url": url, "quote": FACTS[0].fact, "content_hash": old})
    assert cached.json["found"] and cached.json["changed"] is False  # not asked to refetch
    again = sift.post(
        "/v1/verify", {"url": url, "quote": FACTS[0].fact, "content_hash": old, "refetch": True}
    )
    assert again.status == 200, again.body
    assert again.json["changed"] is True and again.json["found"] is False
    assert again.json["content_hash"] != old


def test_the_budget_holds_when_the_sources_lines_alone_would_overflow_it(sift, origin):
    """Ten sources with long URLs and the least budget: the answer still never exceeds it (the
    sources' lines shortened, then those that do not fit left to `sources`); with a little
    more, short lines leave room for a passage."""
    paths = [f"/read/many/{n}/{'a' * 300}" for n in range(9)]
    for n, path in enumerate(paths):
        origin.set(path, html_page(f"Page {n}", "The ferry leaves at noon.", seed=n, at=0))
    urls = [origin.url(p) for p in paths] + [f"{BLOCKED}/{'x' * 3000}"]
    for asked in ({}, {"question": "When does the ferry leave?"}):
        r = sift.post("/v1/read", {"urls": urls, "max_tokens": 100, **asked})
        assert r.status == 200, r.body
        assert r.json["tokens"] == tokens.count(r.json["content"]) <= 100, r.json["content"]
        assert [s["url"] for s in r.json["sources"]] == urls
        assert r.json["sources"][-1]["code"] == 403
    r = sift.post("/v1/read", {"urls": urls, "max_tokens": 400, "question": "ferry"})
    assert r.json["tokens"] == tokens.count(r.json["content"]) <= 400, r.json["content"]
    assert r.json["passages"] and "ferry" in r.json["passages"][0]["text"], r.json["content"]


def test_a_read_of_several_pdfs_reads_them_all(sift, origin):
    """A caller has one PDF job at a time (`429` to a second at once): a read's own sources
    wait their turn within its deadline instead of failing each other."""
    urls = []
    for n in range(3):
        fact = f"The archive shelf number is {n}{n}{n}7."
        origin.set(f"/read/many-{n}.pdf", pdf_report(fact, pages=6, fact_page=4), "application/pdf")
        urls.append(origin.url(f"/read/many-{n}.pdf"))
    r = sift.post("/v1/read", {"urls": urls, "question": "shelf number", "max_tokens": 2000})
    assert r.status == 200, r.body
    assert all(s["status"] in ("ok", "cut") for s in r.json["sources"]), r.json["sources"]
    for n in range(3):
        assert any(f"{n}{n}{n}7" in p["text"] for p in r.json["passages"]), r.json["content"]


@pytest.mark.parametrize(
    ("body", "words"),
    [
        ({"urls": []}, "`urls`"),
        ({"urls": ["http://127.0.0.1/"] * 11}, "`urls`"),
        ({"urls": ["http://127.0.0.1/"], "max_tokens": 10**7}, "`max_tokens`"),
        ({"urls": ["http://127.0.0.1/"], "max_tokens": 5}, "`max_tokens`"),
        ({"urls": ["http://127.0.0.1/"], "grep": "x"}, "`grep`"),
        ({"urls": [{"url": "http://127.0.0.1/", "jq": "."}]}, "`urls[0].jq`"),
        ({"urls": ["http://127.0.0.1/"], "pages": "x-"}, "pages"),
        ({"urls": ["http://127.0.0.1/"], "headers": {"Host": "x"}}, "Host"),
        ({"urls": [5]}, "`urls[0]`"),
        ({"urls": ["http://127.0.0.1/"], "question": 5}, "`question`"),
    ],
)
def test_a_bad_read_is_a_400_naming_the_field(sift, body, words):
    r = sift.post("/v1/read", body)
    assert r.status == 400 and r.json["success"] is False and words in r.json["error"], r.body


def test_the_urls_cap_is_configured(make_sift, origin):
    s = make_sift({"read": {"max_urls": 2, "max_tokens": 500}})
    urls = install(origin)[:3]
    assert s.post("/v1/read", {"urls": urls}).status == 400
    r = s.post("/v1/read", {"urls": urls[:2]})
    assert r.status == 200 and r.json["max_tokens"] == 500 and r.json["tokens"] <= 500
    # null is no value, as in `/v1/fetch`: the default budget, no question
    r = s.post("/v1/read", {"urls": urls[:2], "max_tokens": None, "question": None})
    assert r.status == 200 and r.json["max_tokens"] == 500, r.body


@pytest.mark.parametrize(
    "body",
    [{"url": "http://127.0.0.1/"}, {"url": "http://127.0.0.1/", "quote": ""}, {"quote": "x"}],
)
def test_a_bad_verify_is_a_400(sift, body):
    r = sift.post("/v1/verify", body)
    assert r.status == 400 and r.json["success"] is False, r.body


def test_grep_hits_and_a_digests_passages_carry_citations_that_verify(sift, origin):
    urls = install(origin)
    pdf, page = urls[-1], urls[0]
    whole = chain(sift, pdf, 0)
    hits = sift.fetch(pdf, grep="vault code").json
    assert hits["citations"], hits
    c = hits["citations"][0]
    assert (c["part"], c["unit"], c["url"]) == (FACT_PAGE, "page", pdf)
    assert whole[c["start"] : c["end"]] == FACTS[-1].fact
    asked = sift.fetch(pdf, question="What is the Kessing archive vault code?").json
    quoted = [c for c in asked["citations"] if "7319" in whole[c["start"] : c["end"]]]
    assert quoted and quoted[0]["part"] == FACT_PAGE, asked
    html = sift.fetch(page, question="When did the Vellmar bridge open?").json
    assert html["citations"], html
    for c in (*hits["citations"], *asked["citations"], *html["citations"]):
        text = chain(sift, c["url"], 0)[c["start"] : c["end"]]
        v = sift.post(
            "/v1/verify", {"url": c["url"], "quote": text, "content_hash": c["content_hash"]}
        )
        assert v.json["found"] and (v.json["start"], v.json["end"]) == (c["start"], c["end"])
        assert v.json["changed"] is False


def test_a_source_read_in_a_page_range_is_cited_and_continued_in_that_range(sift, origin):
    pdf = install(origin)[-1]
    r = sift.post(
        "/v1/read",
        {"urls": [{"url": pdf, "pages": "20-30"}], "question": QUESTION, "max_tokens": 600},
    )
    assert r.status == 200, r.body
    state = r.json["sources"][0]
    nxt = state["next"]
    assert nxt["pages"] == "20-30" and state["status"] == "cut", state
    ranged = chain(sift, pdf, 0, pages="20-30")
    assert len(ranged) == state["chars"]
    fact = next(p for p in r.json["passages"] if FACTS[-1].fact in p["text"])
    assert fact["part"] == FACT_PAGE and ranged[fact["start"] : fact["end"]] == fact["text"]
    rest = chain(sift, pdf, nxt["offset"], pages="20-30")
    assert rest == ranged[nxt["offset"] :]
