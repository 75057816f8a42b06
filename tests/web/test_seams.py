"""The seam suite: every promise holds at every door (issue 22 item 8).

The doors are the adapters of `tests/support/seam_doors.py` (`/v1/fetch`, `/v2/scrape`,
`/v1/scrape`, `/r/`, MCP over stdio and streamable HTTP, `sift fetch`, `/v1/batch`, `sift
batch`, Firecrawl batch scrape, crawl, extract, a job's webhook, map, params-preview, parse,
search, and `/v1/read` and `/v1/verify` over HTTP, MCP (both transports) and the CLI); each
promise below is one test function run over the doors that declare it. One sift serves the
module (in this process; the restart rows run a real `sift serve` each). Rows a branch is
fixing are strict xfails naming the branch.

The shared sift allows 127.0.0.1 only: the blocked address is a second origin on 127.0.0.2,
so a guard that failed would be seen connecting there, and nothing ever leaves loopback.
"""

from __future__ import annotations

import contextlib
import functools
import gc
import itertools
import json
import logging
import re
import threading
import uuid
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pykka
import pytest

from sift.core.callers import sha256_hex
from sift.documents import tokens
from tests.support import forged, seam_doors, web_bot_auth
from tests.support.fake_llm import FakeModel
from tests.support.fake_searxng import FakeSearx
from tests.support.origin import Origin
from tests.support.pdfs import three_page_pdf
from tests.support.processes import Served
from tests.support.seam_doors import DOORS, Answer, Door, JobDoor, McpListen, Parse
from tests.support.sift_server import SiftServer
from tests.support.until import until
from tests.support.webhook_receiver import Receiver

CAP = 20_000  # the shared sift's out_cap
DEADLINE = 3  # its request_deadline, in seconds
COOKIE = "seam-cookie-4f1c9a"


def token(door: Door | str) -> str:
    return f"seam-{door}-token"


class Rig:
    """The module's world: the origin, the blocked origin, a fake SearXNG and model, the
    shared sift and the MCP servers in front of it."""

    def __init__(self, origin: Origin, tmp: Path) -> None:
        self.origin = origin
        self.tmp = tmp
        self.blocked = Origin("127.0.0.2").start()
        self.searx = FakeSearx().start()
        self.model = FakeModel().start()
        names = [d.name for d in DOORS.all] + ["settle"]
        self.callers = [
            {"name": n, "token_sha256": sha256_hex(token(n)), "class": "fleet"} for n in names
        ]
        self.sift = SiftServer(
            tmp / "state",
            {
                "guard": {"allow_prefixes": ["127.0.0.1/32"]},
                "out_cap": CAP,
                "request_deadline": f"{DEADLINE}s",
                "clean": {"workers": 2, "deadline": "4s"},
                "gates": {"global": 32, "per_host": 16, "per_caller": 16},
                "digest": {"endpoint": self.model.url},
                "search": {"searxng_url": self.searx.url},
                "caller": self.callers,
                **web_bot_auth.ON,  # every request it sends signed (the `identity` rows)
            },
            # Only parse's deadline row reads a PDF: its child stalls after page 2.
            extract_args=[
                "--allow-test-hooks",
                "--test-stall-after",
                "2",
                "--test-stall-for",
                "30",
            ],
        ).start()
        self.mcp_http = McpListen(self.sift.url, tmp / "mcp-http.log")
        self.settled = itertools.count()
        page = "/seam/page"
        origin.set(
            page,
            "<html><head><title>Seam</title></head><body><article><p>"
            + "A small page for the seam suite. " * 20
            + "</p></article></body></html>",
        )
        Door.page = origin.url(page)
        for door in DOORS.all:
            if isinstance(door, seam_doors.Search):
                door.searx = self.searx
            if isinstance(door, seam_doors.Mcp):
                door.opener = self._opener(door)
                door.refusal = self._refusal(door.transport)
                door.edge = functools.partial(seam_doors.http_refusal, self.mcp_http.url)

    def _opener(self, door: seam_doors.Mcp) -> Any:
        if door.transport == "stdio":
            return lambda tok: seam_doors.stdio_session(self.sift.url, tok or "", **door.options())
        return lambda tok: seam_doors.http_session(self.mcp_http.url, tok, **door.options())

    def _refusal(self, transport: str) -> Any:
        if transport == "stdio":
            return lambda tok: seam_doors.stdio_refusal(self.sift.url, tok or "")
        return lambda tok: seam_doors.http_refusal(self.mcp_http.url, tok)

    def blocked_url(self, path: str) -> str:
        return self.blocked.url(path)

    def settle(self) -> None:
        """A later request through the store: the writes held for earlier answers are done."""
        url = self.origin.url(f"/text?settle={next(self.settled)}")
        r = self.sift.post("/v1/fetch", {"url": url}, token=token("settle"))
        assert r.status == 200, r.body

    def jq_stopped(self) -> float:
        """Clean workers replaced at their deadline so far (this process's metric)."""
        text = self.sift.request("GET", "/metrics", token=None).body.decode()
        found = re.search(
            r'^sift_clean_worker_restarts_total\{reason="deadline"\} (\S+)$', text, re.MULTILINE
        )
        return float(found.group(1)) if found else 0.0

    def state_files(self) -> dict[str, bytes]:
        """Every file in the state directory now (one gone between the listing and its read,
        a spool or a journal, holds nothing any more)."""
        found = {}
        for p in Path(self.sift.cfg.state_dir).rglob("*"):
            with contextlib.suppress(FileNotFoundError, IsADirectoryError):
                found[str(p)] = p.read_bytes()
        return found

    def stop(self) -> None:
        for door in DOORS.all:
            if isinstance(door, seam_doors.Mcp):
                door.close()
                door.sessions.clear()
        self.mcp_http.stop()
        self.sift.stop()
        self.model.stop()
        self.searx.stop()
        self.blocked.stop()


@pytest.fixture(scope="module")
def rig(origin: Origin, tmp_path_factory: pytest.TempPathFactory) -> Iterator[Rig]:
    world = Rig(origin, tmp_path_factory.mktemp("seams"))
    try:
        yield world
    finally:
        world.stop()
        gc.collect()  # what the stopped sift left is collected here, outside any test
    left = pykka.ActorRegistry.get_all()
    assert not left, f"the seam suite left actors running: {left}"


@pytest.fixture(autouse=True)
def no_actors_left() -> None:
    """conftest's check, replaced here: the module's sift runs across tests (the rig checks
    that nothing is left once it stops)."""


def rows(promise: str, xfail_key: str | None = None) -> list[Any]:
    """The doors that declare `promise`, with the strict xfail a branch is fixing."""
    params = []
    for door in DOORS.with_promise(promise):
        reason = door.xfail.get(xfail_key or promise)
        marks: list[pytest.MarkDecorator] = []
        if reason:
            # A broken row may log the traceback of its bug: allowed, until the fix drops the mark.
            marks = [pytest.mark.xfail(strict=True, reason=reason), pytest.mark.allow_error_logs]
        params.append(pytest.param(door, id=door.name, marks=marks))
    return params


def get(rig: Rig, door: Door, url: str, **opts: Any) -> Answer:
    return door.get(rig.sift, token(door), url, **opts)


# -- 1. the error shape and statuses -------------------------------------------------------


@pytest.mark.parametrize("door", rows("shape"))
def test_a_missing_or_unknown_token_is_401_unauthorized(rig, door):
    for bad in (None, "not-a-sift-token"):
        if isinstance(door, seam_doors.Mcp) and door.transport == "http" and bad is None:
            a = mcp_http_without_token(rig)
        else:
            a = door.get(rig.sift, bad, door.page)
        assert not a.ok and "unauthorized" in a.error and a.status in (401, None), (bad, a)
        if a.status == 401 and isinstance(a.raw, dict):
            assert a.raw == {"success": False, "error": "unauthorized"}


def mcp_http_without_token(rig: Rig) -> Answer:
    """No token is refused before any tool is listed: a 401 in sift's shape."""
    import httpx2

    body = {"jsonrpc": "2.0", "id": 1, "method": "tools/list"}
    accept = {"Accept": "application/json, text/event-stream"}
    r = httpx2.post(rig.mcp_http.url, json=body, headers=accept, trust_env=False)
    payload = r.json()
    assert payload["success"] is False and "\n" not in payload["error"], payload
    return Answer(False, r.status_code, payload["error"])


@pytest.mark.parametrize("door", rows("shape", "malformed"))
def test_a_malformed_request_is_400_in_the_doors_shape(rig, door):
    a = door.malformed(rig.sift, token(door))
    assert not a.ok and a.status in (400, None), a
    assert "internal error" not in a.error


@pytest.mark.parametrize("door", rows("url"))
def test_a_url_sift_cannot_read_is_400(rig, door):
    a = get(rig, door, "http://")
    assert not a.ok and a.status in (door.url_status, None), a
    assert "url" in a.error.lower(), a


# -- 2. the guard ----------------------------------------------------------------------------


@pytest.mark.parametrize("door", rows("guard", "blocked"))
def test_a_blocked_url_is_refused_before_connecting(rig, door):
    path = f"/blocked/{door.name}"
    a = get(rig, door, rig.blocked_url(path))
    assert not a.ok and "blocked: loopback address 127.0.0.2" in a.error, a
    assert a.status in (door.blocked_status, None), a
    assert rig.blocked.count(path) == 0


@pytest.mark.parametrize("door", rows("guard", "redirect"))
def test_a_redirect_to_a_blocked_address_is_refused(rig, door):
    path = f"/blocked/hop-{door.name}"
    url = rig.origin.url(f"/redirect?to={rig.blocked_url(path)}&door={door.name}")
    a = get(rig, door, url)
    assert not a.ok and "blocked: loopback address 127.0.0.2" in a.error, a
    # a Firecrawl door answers 400 (the SDK reads 403 as "Website Not Supported"); a job
    # door's target failed with 403
    assert a.status in (door.blocked_status, 403, None), a
    assert rig.blocked.count(path) == 0


@pytest.mark.parametrize("door", rows("hook"))
def test_a_blocked_webhook_is_refused_before_connecting(rig, door):
    path = f"/blocked/{door.name}"
    a = get(rig, door, rig.blocked_url(path))
    assert not a.ok and "blocked: loopback address 127.0.0.2" in a.error, a
    assert a.status in (400, 403) and "webhook" in a.error, a
    assert rig.blocked.count(path) == 0


@pytest.mark.parametrize("door", rows("hook"))
def test_webhook_posts_are_bounded_follow_no_redirect_and_keep_headers_private(rig, door, caplog):
    """A receiver that redirects to the blocked address: each event is posted once (a
    redirect is not followed, nor tried again), the job's status names it, and the caller's
    webhook headers reach the receiver only — no log line, no answer."""
    caplog.set_level(logging.DEBUG)
    receiver = Receiver().start()
    try:
        path = f"/blocked/hook-{door.name}"
        receiver.answer(302, times=100, headers={"Location": rig.blocked_url(path)})
        hidden = f"hook-secret-{uuid.uuid4().hex[:10]}"
        a = get(rig, door, receiver.url(), headers={"X-Hook-Auth": hidden})
        assert a.ok, a
        until(lambda: "redirect" in status_of(rig, door, a), "the redirect named", 30)
        assert "webhook: 3 post(s) failed" in status_of(rig, door, a)
        assert len(receiver.received()) == 3 and rig.blocked.count(path) == 0
        assert all(p.headers["X-Hook-Auth"] == hidden for p in receiver.received())
        logged = "\n".join(f"{r.getMessage()} {r.__dict__}" for r in caplog.records)
        assert hidden not in logged and hidden not in json.dumps(a.raw)
    finally:
        receiver.stop()


def status_of(rig: Rig, door: Door, a: Answer) -> str:
    """The answer's job status, read again: its `warning` now."""
    r = rig.sift.request("GET", f"/v2/batch/scrape/{a.raw['id']}", token=token(door))
    return str(r.json.get("warning", ""))


# -- 3. the request deadline ----------------------------------------------------------------

TIMEOUT_KNOB = {
    "v1_fetch",
    "v2_scrape",
    "v1_scrape",
    "batch",
    "cli_batch",
    "fc_batch_scrape",
    "fc_crawl",
}


def honest_in_time(a: Answer) -> bool:
    """Out of time, said so: a 504 with hint retry, Firecrawl's 202 note, or a failed target
    or source naming the deadline — never the page, which comes only after 60 s."""
    if a.pending:
        return "ask again" in a.warning
    return not a.ok and (a.status == 504 or a.hint == "retry" or "deadline" in a.error)


@pytest.mark.parametrize("door", rows("deadline"))
def test_an_upstream_that_stalls_gets_an_honest_answer_in_time(rig, door):
    if isinstance(door, Parse):
        # A PDF whose child stalls after page 2 (the rig's test hook): out of time, a document
        # in extraction answers the pages so far with a warning.
        a = door.upload(rig.sift, token(door), "slow.pdf", three_page_pdf())
        assert a.ok and "--- page 2 ---" in a.content and "deadline" in a.warning, a
        return
    opts = {"timeout": 1} if door.name in TIMEOUT_KNOB else {}
    a = get(rig, door, rig.origin.url(f"/slow?secs=60&door={door.name}"), **opts)
    assert honest_in_time(a), a


# -- 4. privacy with `headers` --------------------------------------------------------------


def private_page(rig: Rig, name: str) -> tuple[str, str]:
    """A page whose text (a secret) is served only with the cookie: (url, secret)."""
    secret = f"kestrel{uuid.uuid4().hex[:10]}"
    text = (
        f"The main points of this document: the secret code word is {secret}. "
        f"Summarise it as the secret code word {secret}. "
    ) * 8

    async def handler(h: Any) -> None:
        member = f"session={COOKIE}" in h.request.headers.get("Cookie", "")
        body = text if member else "A public page for everyone, with nothing secret in it. " * 8
        await h.send(
            f"<html><head><title>Private</title></head><body><article><p>{body}</p>"
            "</article></body></html>".encode()
        )

    path = f"/seam/private/{name}"
    rig.origin.route(path, handler)
    return rig.origin.url(path), secret


def assert_nothing_kept(rig: Rig, *secrets: str) -> None:
    rig.settle()
    for name, data in rig.state_files().items():
        for secret in (*secrets, COOKIE):
            assert secret.encode() not in data, f"{secret} was written to {name}"


@pytest.mark.parametrize("door", rows("privacy"))
def test_a_request_with_headers_leaves_nothing_in_the_cache(rig, door):
    url, secret = private_page(rig, door.name)
    a = get(rig, door, url, headers={"Cookie": f"session={COOKIE}"})
    assert a.ok and secret in a.content, a  # the cookie was sent: the private page came back
    assert_nothing_kept(rig, secret)


@pytest.mark.parametrize("door", rows("question"))
def test_a_question_with_headers_leaves_nothing_in_the_cache(rig, door):
    """The digest of a private page (its answer quotes the secret) is cached nowhere."""
    url, secret = private_page(rig, f"{door.name}-q")
    extra = (
        {"question": "what is the secret code word"}
        if door.name == "v1_fetch"
        else {"formats": ["markdown", "summary"]}
    )
    a = get(rig, door, url, headers={"Cookie": f"session={COOKIE}"}, extra=extra)
    assert a.ok and secret in a.content, a
    assert_nothing_kept(rig, secret)


@pytest.mark.parametrize("door", rows("refuse_headers"))
def test_a_stored_target_never_keeps_the_callers_headers(rig, door):
    """`/v1/batch` refuses `headers` (targets are stored): 400. A Firecrawl job either refuses
    them too, or runs without storing them anywhere."""
    url, secret = private_page(rig, door.name)
    a = get(rig, door, url, headers={"Cookie": f"session={COOKIE}"})
    if door.name in ("batch", "cli_batch"):
        assert not a.ok and a.status in (400, None) and "headers" in a.error, a
    elif not a.ok:
        assert a.status == 400 and "headers" in a.error, a
    assert_nothing_kept(rig, secret)


@pytest.mark.parametrize("door", rows("refuse_headers", "silent_headers"))
def test_a_job_never_drops_the_callers_headers_in_silence(rig, door):
    """Asked with the caller's cookie, a job refuses it (400), or honours it, or names it in
    a warning — never the logged-out page passed off as the one asked for."""
    url, secret = private_page(rig, f"{door.name}-silent")
    a = get(rig, door, url, headers={"Cookie": f"session={COOKIE}"})
    refused = not a.ok and a.status in (400, None) and "headers" in a.error
    assert refused or secret in a.content or "headers" in a.warning, a


# -- 5. a restart in the middle of a job ----------------------------------------------------


def _served(rig: Rig, tmp: Path) -> Served:
    """A real `sift serve` with the rig's callers and model, for the restart rows."""
    callers = "".join(
        f'[[caller]]\nname = "{c["name"]}"\ntoken_sha256 = "{c["token_sha256"]}"\n'
        for c in rig.callers
    )
    return Served(
        tmp,
        '[guard]\nallow_prefixes = ["127.0.0.1/32"]\n[clean]\nworkers = 1\n'
        f'[pdf]\nspares = false\n[digest]\nendpoint = "{rig.model.url}"\n{callers}',
    )


@pytest.mark.parametrize("door", rows("restart"))
def test_a_job_killed_mid_target_finishes_after_a_restart(rig, door, tmp_path):
    assert isinstance(door, JobDoor)
    served = _served(rig, tmp_path).start()
    name = f"restart-{uuid.uuid4().hex[:12]}"  # no `_`: markdown would escape it
    rig.model.replies = ['{"title": "released"}']  # the extract job's model answer
    try:
        job = door.submit(served, token(door), rig.origin.url(f"/hold/{name}"))
        assert isinstance(job, str), job
        assert rig.origin.wait_arrived(name, 60), "the target never started"
        served.kill()
        rig.origin.release(name)  # its next try is answered
        served.start()
        a = door.finish(served, token(door), job)
        assert a.ok, (a, served.log())
        assert f"released {name}" in a.content or any(
            f"released {name}" in p for p in rig.model.prompts
        )
    finally:
        served.stop()
        rig.origin.release(name)
        rig.model.replies = []


# -- 6. bounded answers ---------------------------------------------------------------------


def huge_page() -> bytes:
    paras = "".join(
        f"<p>Paragraph {i}: the harbour ledger lists cargo number {i * 7919 % 100003} and the "
        f"ship that carried it, with its captain and the tide it sailed on.</p>"
        for i in range(3000)
    )
    return (
        f"<html><head><title>Ledger</title></head><body><article><h1>Ledger</h1>{paras}"
        "</article></body></html>"
    ).encode()


@pytest.mark.parametrize("door", rows("bounded"))
def test_a_huge_page_answers_within_the_output_cap(rig, door):
    if isinstance(door, Parse):
        a = door.upload(rig.sift, token(door), "ledger.html", huge_page())
    else:
        rig.origin.set("/seam/huge", huge_page())
        a = get(rig, door, rig.origin.url("/seam/huge"))
    assert a.ok, a
    assert "Paragraph 0:" in a.content
    assert len(a.content) <= CAP + CAP // 10, len(a.content)


@pytest.mark.parametrize("door", rows("fence"))
def test_no_line_of_a_document_passes_for_one_of_sifts(rig, door):
    if isinstance(door, Parse):
        a = door.upload(rig.sift, token(door), "forged.txt", forged.forged_text())
    else:
        rig.origin.set("/seam/forged.txt", forged.forged_text(), "text/plain; charset=utf-8")
        a = get(rig, door, rig.origin.url("/seam/forged.txt"))
    assert a.ok, a
    assert forged.SEEN in a.content, a.content
    assert not forged.passed_for_sifts(a.content), a.content


@pytest.mark.parametrize("door", rows("read_bounds"))
def test_a_read_is_bounded_by_its_budget_and_its_caps(rig, door):
    """A huge page read within `max_tokens` (sift's tokenizer), its head first; more URLs than
    `[read] max_urls`, a `max_tokens` over the cap and a body over 64 KiB are refused."""
    rig.origin.set("/seam/huge", huge_page())
    a = get(rig, door, rig.origin.url("/seam/huge"), extra={"max_tokens": 2000})
    assert a.ok and "Paragraph 0:" in a.content, a
    assert tokens.count(a.content.rstrip("\n")) <= 2000
    many = door.read_many(rig.sift, token(door), [door.page] * 11)
    assert not many.ok and many.status in (400, None) and "`urls`" in many.error, many
    big = get(rig, door, door.page, extra={"max_tokens": 10**7})
    assert not big.ok and big.status in (400, None) and "`max_tokens`" in big.error, big
    if isinstance(door, seam_doors.V1Read):
        over = door.oversized(rig.sift, token(door))
        assert not over.ok and over.status == 413, over


@pytest.mark.parametrize("door", rows("verify_privacy"))
def test_a_verify_with_headers_reads_the_private_page_and_keeps_nothing(rig, door):
    url, secret = private_page(rig, door.name)
    quote = f"the secret code word is {secret}"
    a = get(rig, door, url, headers={"Cookie": f"session={COOKIE}"}, extra={"quote": quote})
    assert a.ok and a.raw["found"] and a.raw["match"] == "exact", a
    assert_nothing_kept(rig, secret)


# -- 7. never a 500 ------------------------------------------------------------------------


@pytest.mark.parametrize("door", rows("fuzz"))
def test_bad_input_is_never_a_500(rig, door):
    seen = 0
    for what, a in door.fuzz(rig.sift, token(door)):
        seen += 1
        assert a.status != 500, (what, a)  # 501–504 are statuses of their own
        assert "internal error" not in a.error, (what, a)
    assert seen > 5
    assert json.dumps(rig.sift.request("GET", "/healthz", token=None).json)  # still up


# -- 4. the service's edges, its identity, a site's price (issue 35) -----------------------

FOREIGN = (
    ({"Host": "evil.example"}, 421, "allowed_hosts"),
    ({"Origin": "http://evil.example"}, 403, "allowed_origins"),
)
PAID_TEXT = "Only paying crawlers may read this paragraph"


@pytest.mark.parametrize("door", rows("edge"))
def test_a_foreign_host_or_origin_is_refused_before_any_work(rig, door):
    """A page that rebinds a name to sift, or posts to it cross-origin, is refused in the
    door's own error shape, and nothing is fetched."""
    path = f"/seam/edge/{door.name}"
    rig.origin.set(path, "<html><body><p>never read</p></body></html>")
    for http, status, words in FOREIGN:
        a = door.with_headers(rig.sift, token(door), rig.origin.url(path), http)
        assert not a.ok and a.status == status and words in a.error, (http, a)
    assert rig.origin.count(path) == 0


@pytest.mark.parametrize("door", rows("identity"))
def test_every_request_sift_sends_is_signed(rig, door):
    """The request a door's fetch sends verifies at the origin, by an independent RFC 9421
    implementation, against the key directory sift serves."""
    path = f"/seam/signed/{door.name}"
    rig.origin.set(path, "<html><body><article><p>signed</p></article></body></html>")
    a = get(rig, door, rig.origin.url(path))
    assert a.ok, a
    keys = web_bot_auth.directory_keys(rig.sift.url)
    web_bot_auth.verify(keys, web_bot_auth.seen(rig.origin.last_headers(path), path))


@pytest.mark.parametrize("door", rows("payment"))
def test_a_sites_price_is_a_refusal_never_paid_cached_or_shown(rig, door):
    path = f"/seam/paid/{door.name}"
    priced = {"crawler-price": "USD 0.01"}
    rig.origin.set(path, f"<p>{PAID_TEXT}</p>", status=402, headers=priced)
    for asked in (1, 2):
        a = get(rig, door, rig.origin.url(path))
        assert not a.ok and a.status in (door.blocked_status, None), a
        assert "asks to be paid" in a.error and "never pays" in a.error, a
        assert PAID_TEXT not in a.error + a.content, a
        if isinstance(a.raw, dict):
            want = {"price": "0.01", "currency": "USD", "scheme": "pay-per-crawl"}
            assert a.raw["payment_required"] == want, a.raw
        assert rig.origin.count(path) == asked  # never cached: the site is asked again


# -- 3b. a runaway jq program (last: see below) ------------------------------------------


@pytest.mark.parametrize("door", rows("jq"))
def test_a_runaway_jq_program_is_422_never_504(rig, door):
    """jq is bounded by the smaller of its own bound and the request's deadline: a 422.

    Last in the module: on main the clean task left behind logs `Future exception was never
    retrieved` when it is collected, which only these (allowed) rows and the rig's teardown
    may see."""
    program = "last(range(1e12))"
    opts = {"timeout": 1} if door.name in TIMEOUT_KNOB else {}
    stopped = rig.jq_stopped()
    try:
        a = get(rig, door, rig.origin.url("/json"), extra={"jq": program}, **opts)
    finally:  # the runaway program's worker is replaced before the next row
        until(lambda: rig.jq_stopped() > stopped, "the jq worker's replacement", seam_doors.WAIT)
    assert not a.ok and a.status in (422, None) and "jq program over its time bound" in a.error, a


@pytest.mark.parametrize("door", rows("jq_wait"))
def test_a_jq_program_out_of_time_waiting_for_a_worker_is_422(rig, door):
    """One caller's two runaway programs at once: the second waits for the first one's worker
    (a caller's jq never holds every worker) and its request's deadline passes while it
    waits. Both are the 422 of a program over its bound, never a 504 that says retry."""
    program = "last(range(1e12))"
    opts = {"timeout": 1} if door.name in TIMEOUT_KNOB else {}
    stopped = rig.jq_stopped()
    answers: list[Answer] = []

    def ask() -> None:
        answers.append(get(rig, door, rig.origin.url("/json"), extra={"jq": program}, **opts))

    runs = [threading.Thread(target=ask, daemon=True) for _ in range(2)]
    try:
        for run in runs:
            run.start()
        for run in runs:
            run.join(seam_doors.WAIT)
    finally:  # the runaway program's worker is replaced before the next row
        until(lambda: rig.jq_stopped() > stopped, "the jq worker's replacement", seam_doors.WAIT)
    assert len(answers) == 2, answers
    for a in answers:
        assert not a.ok and a.status in (422, None), a
        assert "jq program over its time bound" in a.error and a.hint is None, a
