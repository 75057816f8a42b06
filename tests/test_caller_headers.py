"""A caller's own request headers (`headers`): sent upstream for pages behind a login, never
logged, never cached, never answered to another caller; headers that would change where or
how sift connects are refused."""

from __future__ import annotations

import logging
from pathlib import Path

import pytest

from sift.core.callers import sha256_hex
from sift.web.logs import JsonFormatter
from tests.origin import MEMBER_COOKIE, Origin
from tests.pdfs import PHRASES, pdfs_fixture  # noqa: F401
from tests.sift_server import FLEET_TOKEN

OTHER_TOKEN = "second-fleet-token-for-tests"
UPSTREAM_AUTH = "Bearer upstream-secret-9c2e1"
MEMBER = "The members' report"
PUBLIC = "The public front page"
COOKIE = {"Cookie": f"session={MEMBER_COOKIE}"}


@pytest.fixture
def sift(make_sift):
    return make_sift({"caller": [
        {"name": "agent", "token_sha256": sha256_hex(FLEET_TOKEN), "class": "fleet"},
        {"name": "other", "token_sha256": sha256_hex(OTHER_TOKEN), "class": "fleet"},
    ]})  # fmt: skip


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
    ["Host", "host", "Connection", "Keep-Alive", "TE", "Trailer", "Transfer-Encoding",
     "Upgrade", "Content-Length", "Expect", "Proxy-Authorization", "X-Forwarded-For",
     "Accept-Encoding"],
)  # fmt: skip
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
    async def members_pdf(h):  # type: ignore[no-untyped-def]
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
