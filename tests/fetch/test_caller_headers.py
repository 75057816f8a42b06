"""A caller's own request headers (`headers`): sent upstream for pages behind a login, never
logged, never cached, never answered to another caller; headers that would change where or
how sift connects are refused."""

from __future__ import annotations

import logging
import re
import sqlite3
import threading
import time
from pathlib import Path
from typing import Any

import pytest

from sift.actors.bridge import ThreadReply
from sift.actors.embed import EmbedIdle
from sift.core.callers import sha256_hex
from sift.web.logs import JsonFormatter
from tests.support.digest_corpus import document, to_pdf
from tests.support.origin import MEMBER_COOKIE, Origin
from tests.support.pdfs import PHRASES
from tests.support.sift_server import FLEET_TOKEN, RESTRICTED_TOKEN, SiftServer

OTHER_TOKEN = "second-fleet-token-for-tests"
UPSTREAM_AUTH = "Bearer upstream-secret-9c2e1"
MEMBER = "The members' report"
PUBLIC = "The public front page"
COOKIE = {"Cookie": f"session={MEMBER_COOKIE}"}


CALLERS = [
    {"name": "agent", "token_sha256": sha256_hex(FLEET_TOKEN), "class": "fleet"},
    {"name": "other", "token_sha256": sha256_hex(OTHER_TOKEN), "class": "fleet"},
]
CACHE_TABLES = ("content", "pdf_doc", "pdf_page", "digest", "embedding")


@pytest.fixture
def sift(make_sift):
    return make_sift({"caller": CALLERS})


@pytest.fixture
def other_host():
    """A second origin on 127.0.0.2: another host for the redirect rule."""
    other = Origin("127.0.0.2").start()
    yield other
    other.stop()


def _state_files(root: Path) -> dict[str, bytes]:
    return {str(p): p.read_bytes() for p in root.rglob("*") if p.is_file()}


def test_the_page_behind_a_cookie_is_served_only_to_its_caller(sift, origin, caplog):
    caplog.set_level(logging.DEBUG)
    url = origin.url("/members?case=one")
    first = sift.fetch(url, token=OTHER_TOKEN)  # the public page, now in the shared cache
    assert first.status == 200 and PUBLIC in first.json["content"]
    seen = origin.count("/members")

    mine = sift.fetch(url, headers={**COOKIE, "Authorization": UPSTREAM_AUTH})
    assert mine.status == 200, mine.json
    content = mine.json["content"]
    assert MEMBER in content and "Authorization header: present" in content
    assert mine.json["cached"] is False
    assert origin.count("/members") == seen + 1  # not answered from the shared cache
    sent = origin.last_headers("/members")
    assert sent["Cookie"] == f"session={MEMBER_COOKIE}" and sent["Authorization"] == UPSTREAM_AUTH

    for token in (OTHER_TOKEN, FLEET_TOKEN):  # neither caller gets it back without the cookie
        again = sift.fetch(url, token=token)
        assert again.status == 200 and PUBLIC in again.json["content"]
        assert MEMBER not in again.json["content"]
    fresh = sift.fetch(origin.url("/members?case=two"), token=OTHER_TOKEN)  # never cached first
    assert PUBLIC in fresh.json["content"]
    mine_again = sift.fetch(url, headers=COOKIE)  # fetched again: nothing private was kept
    assert MEMBER in mine_again.json["content"]
    assert origin.count("/members") == seen + 3

    metrics = sift.request("GET", "/metrics").body.decode()
    logged = "\n".join(JsonFormatter().format(r) for r in caplog.records)
    files = _state_files(Path(sift.cfg.state_dir))
    assert files  # the cache has been written (the public page)
    for secret in (MEMBER_COOKIE, "upstream-secret-9c2e1"):
        assert secret not in logged and secret not in metrics
        assert not [name for name, data in files.items() if secret.encode() in data]
    assert not [name for name, data in files.items() if b"quarterly figures" in data]


def test_firecrawl_scrape_sends_the_headers(sift, origin):
    r = sift.post("/v2/scrape", {"url": origin.url("/members?case=fc"), "headers": COOKIE})
    assert r.status == 200, r.body
    data = r.json["data"]
    assert MEMBER in data["markdown"]
    assert "headers" not in data.get("warning", "")
    other = sift.post("/v2/scrape", {"url": origin.url("/members?case=fc")}, token=OTHER_TOKEN)
    assert PUBLIC in other.json["data"]["markdown"]


@pytest.mark.parametrize(
    "name",
    [
        "Host",
        "host",
        "Connection",
        "Keep-Alive",
        "TE",
        "Trailer",
        "Transfer-Encoding",
        "Upgrade",
        "Content-Length",
        "Expect",
        "Proxy-Authorization",
        "X-Forwarded-For",
        "Accept-Encoding",
    ],
)
def test_headers_that_change_the_connection_are_refused(sift, origin, name):
    before = origin.count("/members")
    r = sift.fetch(origin.url("/members"), headers={name: "evil.example"})
    assert r.status == 400 and r.json["success"] is False
    assert f"`{name}`" in r.json["error"] and "evil.example" not in r.json["error"]
    assert origin.count("/members") == before


@pytest.mark.parametrize(
    ("headers", "says"),
    [
        ({"Cookie": "a=1\r\nHost: evil"}, "control characters"),
        ({"Cookie": "a=1\nX-Injected: 1"}, "control characters"),
        ({"Authorization": "Basic \x00abc"}, "control characters"),
        ({"Bad Name": "1"}, "not a valid name"),
        ({"X-Ok\r\nHost": "1"}, "not a valid name"),
        ({f"X-H{i}": "1" for i in range(33)}, "more than 32"),
        ({"Cookie": "c" * 9000}, "over 8192 bytes"),
        ({"Cookie": "a", "cookie": "b"}, "given twice"),
        ({"Cookie": 5}, "invalid request"),
    ],
)
def test_malformed_headers_are_refused(sift, origin, headers, says):
    before = origin.count("/members")
    r = sift.fetch(origin.url("/members"), headers=headers)
    assert r.status == 400 and says in r.json["error"], r.json
    assert "evil" not in r.json["error"]
    assert origin.count("/members") == before


def test_credentials_do_not_follow_a_redirect_to_another_host(sift, origin, other_host):
    sent = {**COOKIE, "Authorization": UPSTREAM_AUTH}
    away = other_host.url("/members?case=away")
    r = sift.fetch(origin.url(f"/redirect?to={away}"), headers=sent)
    assert r.status == 200, r.json
    assert PUBLIC in r.json["content"] and "Authorization header: absent" in r.json["content"]
    arrived = other_host.last_headers("/members")
    assert "Authorization" not in arrived and "Cookie" not in arrived
    # on the same origin they follow
    r = sift.fetch(origin.url("/redirect?to=/members%3Fcase%3Dhome"), headers=sent)
    assert MEMBER in r.json["content"] and "Authorization header: present" in r.json["content"]


def test_a_batch_target_with_headers_is_refused(sift, origin):
    body = {"targets": [{"url": origin.url("/members"), "headers": COOKIE}]}
    r = sift.post("/v1/batch", body)
    assert r.status == 400 and "target 0" in r.json["error"] and "headers" in r.json["error"]
    assert MEMBER_COOKIE not in r.json["error"]


def test_authorization_does_not_follow_to_another_port_of_the_host(sift, origin):
    other_port = Origin("127.0.0.1").start()
    try:
        there = other_port.url("/members?case=port")
        sent = {**COOKIE, "Authorization": UPSTREAM_AUTH}
        r = sift.fetch(origin.url(f"/redirect?to={there}"), headers=sent)
        assert r.status == 200, r.json
        assert MEMBER in r.json["content"]  # cookies belong to the host, not the port
        assert "Authorization header: absent" in r.json["content"]
        assert "Authorization" not in other_port.last_headers("/members")
    finally:
        other_port.stop()


def test_a_pdf_behind_a_cookie_is_not_cached(sift, origin, pdfs):
    async def members_pdf(h):
        if f"session={MEMBER_COOKIE}" in h.request.headers.get("Cookie", ""):
            await h.send(pdfs.three, "application/pdf")
        else:
            await h.send(b"<html><body><p>sign up to read the paper</p></body></html>")

    origin.route("/members.pdf", members_pdf)
    mine = sift.fetch(origin.url("/members.pdf"), headers=COOKIE)
    assert mine.status == 200, mine.json
    assert PHRASES[2] in mine.json["content"] and mine.json["cached"] is False
    other = sift.fetch(origin.url("/members.pdf"), token=OTHER_TOKEN)
    assert other.status == 200 and PHRASES[2] not in other.json["content"]
    assert "sign up" in other.json["content"]
    files = _state_files(Path(sift.cfg.state_dir))
    assert not [name for name, data in files.items() if PHRASES[2].encode() in data]


def _behind_cookie(member: bytes, content_type: str):
    """An origin route that serves `member` only with the member's cookie."""

    async def serve(h):
        if f"session={MEMBER_COOKIE}" in h.request.headers.get("Cookie", ""):
            await h.send(member, content_type)
        else:
            await h.send(b"<html><body><p>sign up to read the report</p></body></html>")

    return serve


def _long_html(pages: list[str]) -> bytes:
    parts = "".join(
        f"<h2>Part {n}</h2>" + "".join(f"<p>{para}</p>" for para in text.split("\n\n"))
        for n, text in enumerate(pages, start=1)
    )
    return f"<html><head><title>Report</title></head><body><article>{parts}</article>".encode()


def _cache_rows(s: SiftServer, origin: Origin) -> dict[str, int]:
    """Rows in each table of `cache.db` once the server has settled: the embeddings built
    and the held writes sent (a later request's store read goes after them)."""
    idle: ThreadReply[str] = ThreadReply()
    s.svc.roles.embed().tell(EmbedIdle(idle))
    assert idle.wait(60) == "idle"
    assert s.fetch(origin.url("/article?settle"), token=OTHER_TOKEN, store=False).status == 200
    db = sqlite3.connect(f"file:{Path(s.cfg.state_dir) / 'cache.db'}?mode=ro", uri=True)
    try:
        return {t: db.execute(f"SELECT count(*) FROM {t}").fetchone()[0] for t in CACHE_TABLES}
    finally:
        db.close()


@pytest.mark.parametrize("kind", ["html", "pdf"])
def test_a_question_behind_a_cookie_leaves_nothing_in_any_cache(
    make_sift, origin, fake_model, kind
):
    embed = {"endpoint": fake_model.url, "model": "fake-embed", "batch": 64}
    s = make_sift({"caller": CALLERS, "embed": embed})  # extractive digests, real embeddings
    pages, facts = document(20, words_per_page=120, seed=31)
    body, ctype = (
        (to_pdf(pages), "application/pdf") if kind == "pdf" else (_long_html(pages), "text/html")
    )
    origin.route(f"/members/report.{kind}", _behind_cookie(body, ctype))
    url = origin.url(f"/members/report.{kind}")
    fact = facts[0]
    for _ in range(2):  # the second ask is answered afresh too: nothing was kept
        r = s.fetch(url, headers=COOKIE, question=fact.question)
        assert r.status == 200, r.body
        assert fact.answer in r.json["content"] and r.json["digest"]["cached"] is False
        assert r.json["digest"]["retrieval"] == "bm25"  # embeddings would be cached
    ranged = s.fetch(url, headers=COOKIE, pages="2-3")
    assert ranged.status == 200, ranged.body
    unit = "page" if kind == "pdf" else "section"
    assert f"--- {unit} 2 ---" in ranged.json["content"]

    assert _cache_rows(s, origin) == dict.fromkeys(CACHE_TABLES, 0)
    assert fake_model.embed_calls == 0
    assert len(s.svc.sections) == 0 and len(s.svc.renders) == 0  # nor in memory
    files = _state_files(Path(s.cfg.state_dir))
    assert not [name for name, data in files.items() if fact.sentence.encode() in data]

    # The same document without the cookie fills every table the private one left alone.
    origin.set(f"/public/report.{kind}", body, ctype)
    public = s.fetch(origin.url(f"/public/report.{kind}"), question=fact.question)
    assert public.status == 200, public.body
    rows = _cache_rows(s, origin)
    stored = {"content"} if kind == "html" else {"pdf_doc", "pdf_page"}
    assert {t for t, n in rows.items() if n} == stored | {"digest", "embedding"}


def test_a_private_pdf_waits_in_memory_never_in_a_spool_file(make_sift, origin, pdfs):
    """A PDF over `spool_over` waits for its child in a file; a private one stays in memory
    (a slow child, a test hook, gives a watcher time to see a file if there were one)."""
    s = make_sift(
        {"caller": CALLERS, "pdf": {"spool_over": 1000}},
        extract_args=["--allow-test-hooks", "--test-sleep", "1"],
    )
    spool = Path(s.cfg.state_dir) / "tmp"
    assert len(pdfs.three) > 1000
    origin.route("/members/paper.pdf", _behind_cookie(pdfs.three, "application/pdf"))
    seen: set[str] = set()
    done = threading.Event()

    def watch() -> None:
        while not done.is_set():
            seen.update(p.name for p in spool.glob("*.pdf"))
            time.sleep(0.005)

    watcher = threading.Thread(target=watch)
    watcher.start()
    try:
        r = s.fetch(origin.url("/members/paper.pdf"), headers=COOKIE)
    finally:
        done.set()
        watcher.join()
    assert r.status == 200 and PHRASES[2] in r.json["content"], r.body
    assert seen == set()


def _upload(s: SiftServer, token: str, name: str, data: bytes) -> Any:
    boundary = "pr1vacy-b0undary"
    form = (
        (
            f'--{boundary}\r\nContent-Disposition: form-data; name="file"; filename="{name}"\r\n'
            "Content-Type: application/pdf\r\n\r\n"
        ).encode()
        + data
        + f"\r\n--{boundary}--\r\n".encode()
    )
    ctype = {"Content-Type": f"multipart/form-data; boundary={boundary}"}
    r = s.post("/v2/parse", raw=form, headers=ctype, token=token)
    assert r.status == 200, r.body
    return r.json["data"]


def _pdf_cache_hits(s: SiftServer) -> float:
    found = re.search(
        r"^sift_pdf_cache_hits_total (\S+)$", s.request("GET", "/metrics").body.decode(), re.M
    )
    assert found is not None
    return float(found.group(1))


def test_an_upload_is_cached_under_its_callers_class(make_sift, pdfs):
    s = make_sift()  # `agent` (fleet) and `secret` (restricted)
    pages, _ = document(20, words_per_page=40, seed=5)
    first, second = pdfs.three, to_pdf(pages)
    hits = _pdf_cache_hits(s)
    for data, order in (
        (first, (FLEET_TOKEN, RESTRICTED_TOKEN)),
        (second, (RESTRICTED_TOKEN, FLEET_TOKEN)),
    ):
        for token in order:
            assert "--- page 2 ---" in _upload(s, token, "paper.pdf", data)["markdown"]
    assert _pdf_cache_hits(s) == hits  # neither class was answered from the other's cache
    _upload(s, FLEET_TOKEN, "again.pdf", first)
    _upload(s, RESTRICTED_TOKEN, "again.pdf", second)
    assert _pdf_cache_hits(s) == hits + 2  # each class from its own
    db = sqlite3.connect(f"file:{Path(s.cfg.state_dir) / 'cache.db'}?mode=ro", uri=True)
    try:
        classes = sorted(c for (c,) in db.execute("SELECT caller_class FROM pdf_doc"))
    finally:
        db.close()
    assert classes == ["fleet", "fleet", "restricted", "restricted"]


def _access_lines(caplog: pytest.LogCaptureFixture, count: int) -> list[str]:
    """The access log's lines once there are `count` (each is written as its answer ends)."""
    deadline = time.monotonic() + 10
    while True:
        lines = [JsonFormatter().format(r) for r in caplog.records if r.name == "sift.access"]
        if len(lines) >= count or time.monotonic() > deadline:
            return lines
        time.sleep(0.02)


def test_an_error_quoting_a_private_page_is_not_logged(sift, origin, caplog):
    """A jq error may quote the page (`error(.x)`): the caller gets it, the log does not."""
    caplog.set_level(logging.INFO)
    secret = "account-balance-991"
    origin.route(
        "/members.json", _behind_cookie(f'{{"balance": "{secret}"}}'.encode(), "application/json")
    )
    r = sift.fetch(origin.url("/members.json"), headers=COOKIE, jq="error(.balance)")
    assert r.status == 422 and secret in r.json["error"]
    public = sift.fetch(origin.url("/article"), jq=".")  # a fleet caller's error is logged
    assert public.status == 400
    private_line, public_line = _access_lines(caplog, 2)
    assert secret not in private_line and '"status": 422' in private_line
    assert "needs a JSON response" in public_line
