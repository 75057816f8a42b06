"""Safe fetching through a real FetchActor against the loopback origin.

Every connection here goes to 127.0.0.0/8. Names are answered by injected resolvers and are
`.localhost` names, which even curl's own resolver keeps on loopback, so no DNS query can
leave. What needs other addresses runs in a network namespace (tests/support/netns.py).
"""

from __future__ import annotations

import asyncio
import gzip
import socket
import threading
import time
from collections.abc import Callable, Iterator
from typing import Any

import pytest

from sift.actors.base import Ping
from sift.actors.bridge import ThreadReply
from sift.actors.fetch import FetchActor, FetchRequest, FetchResult, FetchStats
from sift.core.config import FetchConfig
from sift.core.errors import (
    Blocked,
    SiftError,
    TooLarge,
    Unavailable,
    UpstreamError,
    UpstreamTimeout,
)
from sift.fetch.fetcher import Fetcher
from sift.fetch.guard import Guard, Target
from sift.fetch.transfer import Transfer
from tests.support import netns
from tests.support.origin import Origin, OriginHandler

LOOPBACK = ["127.0.0.0/8"]


class FetchClient:
    """A started FetchActor and blocking helpers to talk to it from the test thread."""

    def __init__(self, cfg: FetchConfig, guard: Guard) -> None:
        self.ref = FetchActor.start(cfg, guard)

    def send(self, url: str, **kw: Any) -> ThreadReply[FetchResult]:
        reply: ThreadReply[FetchResult] = ThreadReply()
        self.ref.tell(FetchRequest(url, reply, **kw))
        return reply

    def get(self, url: str, wait: float = 30, **kw: Any) -> FetchResult:
        return self.send(url, **kw).wait(wait)

    def error(self, url: str, wait: float = 30, **kw: Any) -> SiftError:
        with pytest.raises(SiftError) as err:
            self.get(url, wait, **kw)
        return err.value

    def ask(self, build: Callable[[ThreadReply[Any]], Any], wait: float = 5) -> Any:
        reply: ThreadReply[Any] = ThreadReply()
        self.ref.tell(build(reply))
        return reply.wait(wait)

    def stop(self) -> None:
        if self.ref.is_alive():
            self.ref.stop()


@pytest.fixture
def start_fetch() -> Iterator[Callable[..., FetchClient]]:
    """start_fetch(guard=None, **fetch_config) → a FetchClient, stopped after the test."""
    clients: list[FetchClient] = []

    def start(guard: Guard | None = None, **cfg: Any) -> FetchClient:
        client = FetchClient(FetchConfig(**cfg), guard or Guard(LOOPBACK))
        clients.append(client)
        return client

    yield start
    for client in clients:
        client.stop()


@pytest.fixture
def fetch(start_fetch: Callable[..., FetchClient]) -> FetchClient:
    """A FetchActor with the default limits, allowed onto loopback."""
    return start_fetch()


def drive(fetcher: Fetcher, reply: ThreadReply[Any], limit: float = 30) -> None:
    """Pump a bare Fetcher on the test thread until the reply is answered."""
    end = time.monotonic() + limit
    while fetcher.busy and time.monotonic() < end:
        fetcher.step(0.05)


# -- plain fetching -------------------------------------------------------------------------


def test_fetches_a_page_with_the_right_request_headers(fetch: FetchClient, origin: Origin):
    url = origin.url("/article")
    res = fetch.get(url)
    assert (res.status, res.reason) == (200, "OK")
    assert res.url == url and res.final_url == url
    assert res.content_type == "text/html; charset=utf-8"
    assert res.body == origin.article_body.encode()
    assert not res.is_pdf and res.redirects == 0 and res.elapsed >= 0
    sent = origin.last_headers("/article")
    assert sent["User-Agent"] == FetchConfig().user_agent
    assert sent["Accept"].startswith("text/markdown,text/html;q=0.9,application/xhtml+xml")
    assert "gzip" in sent["Accept-Encoding"]
    assert "If-None-Match" not in sent and "If-Modified-Since" not in sent


def test_json_text_and_binary_bodies(fetch: FetchClient, origin: Origin):
    assert fetch.get(origin.url("/json")).content_type == "application/json"
    assert fetch.get(origin.url("/text")).body.decode() == origin.text_body
    png = fetch.get(origin.url("/image.png"))
    assert png.content_type == "image/png" and png.body.startswith(b"\x89PNG\r\n\x1a\n")


def test_upstream_error_statuses_are_results(fetch: FetchClient, origin: Origin):
    for code, reason in ((404, "Not Found"), (500, "Internal Server Error"), (503, None)):
        res = fetch.get(origin.url(f"/status/{code}"))
        assert res.status == code
        assert reason is None or res.reason == reason


def test_gzip_bodies_are_decompressed(fetch: FetchClient, origin: Origin):
    origin.set(
        "/gz",
        gzip.compress(b"hello, decompressed"),
        "text/plain",
        headers={"Content-Encoding": "gzip"},
    )
    assert fetch.get(origin.url("/gz")).body == b"hello, decompressed"


def test_defaults_are_the_documented_limits():
    cfg = FetchConfig()
    assert (cfg.max_body, cfg.timeout) == (5_000_000, 20)
    assert (cfg.pdf_max_body, cfg.pdf_timeout) == (100_000_000, 120)
    assert cfg.max_redirects == 5


# -- limits ---------------------------------------------------------------------------------


def test_body_over_the_cap_is_413(fetch: FetchClient, origin: Origin):
    err = fetch.error(origin.url("/big?mb=6"))
    assert isinstance(err, TooLarge) and err.status == 413
    assert err.message == "too large (>5 MB decompressed)"


def test_gzip_bomb_is_413_well_before_it_could_inflate(fetch: FetchClient, origin: Origin):
    started = time.monotonic()
    err = fetch.error(origin.url("/gzipbomb"))
    assert isinstance(err, TooLarge) and err.message == "too large (>5 MB decompressed)"
    assert time.monotonic() - started < 15  # inflating 1 GiB would take far longer on one core


@pytest.mark.parametrize("path", ["/big?mb=6", "/gzipbomb"])
def test_nothing_is_read_past_the_cap(origin: Origin, path: str):
    """The write callback aborts the transfer: curl hands over at most one more chunk."""
    cfg = FetchConfig()
    fetcher = Fetcher(cfg, Guard(LOOPBACK))
    try:
        reply: ThreadReply[FetchResult] = ThreadReply()
        transfer = fetcher.submit(origin.url(path), reply)
        assert isinstance(transfer, Transfer)
        drive(fetcher, reply)
        with pytest.raises(TooLarge):
            reply.wait(0)
        assert transfer.received <= cfg.max_body
        assert transfer.offered <= cfg.max_body + 64 * 1024  # curl hands over ≤ 16 KiB a call
    finally:
        fetcher.close(Unavailable("test over"))


def test_slow_upstream_is_504_at_the_deadline(start_fetch, origin: Origin):
    fetch = start_fetch(timeout=1)
    started = time.monotonic()
    err = fetch.error(origin.url("/slow?secs=25"))
    assert isinstance(err, UpstreamTimeout) and err.status == 504
    assert err.message == "upstream timed out after 1 s"
    assert time.monotonic() - started < 15  # well before the 25 s the origin would take


def test_a_request_timeout_only_lowers_the_deadline(start_fetch, origin: Origin):
    fetch = start_fetch(timeout=2)
    err = fetch.error(origin.url("/slow?secs=25"), timeout=0.5)
    assert err.message == "upstream timed out after 0.5 s"
    assert fetch.get(origin.url("/text"), timeout=60).status == 200
    err = fetch.error(origin.url("/slow?secs=25"), timeout=60)
    assert err.message == "upstream timed out after 2 s"


def test_a_queued_request_keeps_its_deadline(start_fetch, origin: Origin):
    fetch = start_fetch(handles=1, timeout=10)
    origin.set("/queued", "never fetched")
    first = fetch.send(origin.url("/hold/queue-first"))
    assert origin.wait_arrived("queue-first")
    err = fetch.error(origin.url("/queued"), timeout=0.5)  # waits for the only handle
    assert isinstance(err, UpstreamTimeout) and err.message == "upstream timed out after 0.5 s"
    assert origin.count("/queued") == 0
    assert fetch.ask(FetchStats) == {"active": 1, "queued": 0, "resolving": 0}
    origin.release("queue-first")
    assert first.wait(10).status == 200


# -- PDFs: larger cap and longer deadline --------------------------------------------------


def _pdf_body(size: int, offset: int = 0) -> bytes:
    head = b" " * offset + b"%PDF-1.7\n"
    return head + b"x" * (size - len(head))


@pytest.mark.parametrize(
    ("content_type", "offset", "is_pdf"),
    [
        ("application/pdf", 0, True),
        ("application/x-pdf", 0, True),
        ("application/octet-stream", 0, True),
        ("binary/octet-stream", 500, True),
        ("", 1000, True),
        ("application/octet-stream", 1100, False),  # %PDF- not within the first 1024 bytes
        ("text/html", 0, False),
    ],
)
def test_pdfs_get_the_larger_cap(
    fetch: FetchClient, origin: Origin, content_type: str, offset: int, is_pdf: bool
):
    path = f"/doc-{content_type.replace('/', '-') or 'none'}-{offset}"
    origin.set(path, _pdf_body(6_000_000, offset), content_type)
    if is_pdf:
        res = fetch.get(origin.url(path))
        assert res.is_pdf and len(res.body) == 6_000_000
        assert res.content_type == content_type
    else:
        assert isinstance(fetch.error(origin.url(path)), TooLarge)


def test_small_sniffed_pdf_is_recognised(fetch: FetchClient, origin: Origin):
    origin.set("/tiny.pdf", b"%PDF-1.4\n%%EOF\n", "")
    assert fetch.get(origin.url("/tiny.pdf")).is_pdf


def test_pdf_over_its_own_cap_is_413(start_fetch, origin: Origin):
    fetch = start_fetch(max_body=1_000_000, pdf_max_body=3_000_000)
    origin.set("/huge.pdf", _pdf_body(4_000_000), "application/pdf")
    err = fetch.error(origin.url("/huge.pdf"))
    assert err.message == "too large (>3 MB decompressed)"


def _late(content_type: str, first: bytes) -> Callable[[OriginHandler], Any]:
    """An origin route that sends headers and `first` at once, the rest 3 s later."""

    async def handler(h: OriginHandler) -> None:
        h.set_header("Content-Type", content_type)
        h.write(first)
        await h.flush()
        await asyncio.sleep(3)  # well past the 1 s page deadline, well inside the PDF one
        h.finish(b"\nthe rest\n%%EOF\n")

    return handler


def test_pdfs_get_the_longer_deadline(start_fetch, origin: Origin):
    fetch = start_fetch(timeout=1, pdf_timeout=60)
    routes = {
        "/late.pdf": _late("application/pdf", b"%PDF-1.7"),
        "/late.bin": _late("application/octet-stream", b"%PDF-1.7"),
        "/late.html": _late("text/html", b"<html><body>"),
        "/late-other.bin": _late("application/octet-stream", b"\0" * 2048),
    }
    for path, handler in routes.items():
        origin.route(path, handler)
    pending = {path: fetch.send(origin.url(path)) for path in routes}  # all at once
    assert pending["/late.pdf"].wait(30).is_pdf
    assert pending["/late.bin"].wait(30).is_pdf
    for path in ("/late.html", "/late-other.bin"):
        with pytest.raises(UpstreamTimeout, match=r"^upstream timed out after 1 s$"):
            pending[path].wait(30)


# -- revalidation ---------------------------------------------------------------------------


def test_validators_are_sent_and_304_is_a_result(fetch: FetchClient, origin: Origin):
    lm = "Wed, 02 Dec 2026 16:00:00 GMT"
    origin.set_etag("/doc-etag", '"v1"', "<p>one</p>", last_modified=lm)
    first = fetch.get(origin.url("/doc-etag"))
    assert (first.status, first.etag, first.last_modified) == (200, '"v1"', lm)
    again = fetch.get(origin.url("/doc-etag"), etag='"v1"', last_modified=lm)
    assert (again.status, again.reason, again.body) == (304, "Not Modified", b"")
    sent = origin.last_headers("/doc-etag")
    assert sent["If-None-Match"] == '"v1"' and sent["If-Modified-Since"] == lm
    origin.set_etag("/doc-etag", '"v2"', "<p>two</p>")
    changed = fetch.get(origin.url("/doc-etag"), etag='"v1"\r\nX-Injected: 1')
    assert (changed.status, changed.etag, changed.body) == (200, '"v2"', b"<p>two</p>")
    assert "X-Injected" not in origin.last_headers("/doc-etag")  # validators stay one line


# -- errors ---------------------------------------------------------------------------------


def test_refused_connection_is_502(fetch: FetchClient, origin: Origin):
    err = fetch.error(origin.refused_url())
    assert isinstance(err, UpstreamError) and err.status == 502
    assert err.message == "upstream connection refused"


def test_connection_reset_is_502(fetch: FetchClient, origin: Origin):
    err = fetch.error(origin.url("/reset"))
    assert isinstance(err, UpstreamError) and err.status == 502
    assert "upstream" in err.message


def test_unresolvable_name_is_502(start_fetch):
    def resolver(host: str, port: int) -> list[str]:
        raise socket.gaierror(socket.EAI_NONAME, "Name or service not known")

    fetch = start_fetch(Guard(resolver=resolver))
    err = fetch.error("http://no-such-host.example/")
    assert (
        isinstance(err, UpstreamError)
        and err.message == "could not resolve host no-such-host.example"
    )


# -- redirects ------------------------------------------------------------------------------


def test_redirects_are_followed_up_to_the_limit(fetch: FetchClient, origin: Origin):
    res = fetch.get(origin.url("/chain?n=5"))
    assert res.status == 200 and res.redirects == 5
    assert res.url == origin.url("/chain?n=5") and res.final_url == origin.url("/chain?n=0")
    err = fetch.error(origin.url("/chain?n=6"))
    assert isinstance(err, UpstreamError) and err.message == "too many redirects"


@pytest.mark.parametrize("code", [301, 302, 303, 307, 308])
def test_redirect_to_a_refused_address_is_403_without_connecting(
    start_fetch, origin: Origin, code: int
):
    """127.0.0.2 is not in this guard's prefixes: the hop is refused before any connect."""
    listener = socket.create_server(("127.0.0.2", 0))
    listener.setblocking(False)
    try:
        port = listener.getsockname()[1]
        fetch = start_fetch(Guard(["127.0.0.1/32"]))
        err = fetch.error(origin.url(f"/redirect?code={code}&to=http://127.0.0.2:{port}/x"))
        assert isinstance(err, Blocked) and err.status == 403
        assert err.reason == "loopback address 127.0.0.2"
        with pytest.raises(BlockingIOError):
            listener.accept()  # nobody ever connected
        err = fetch.error(origin.url(f"/redirect?code={code}&to=http://10.0.0.1/"))
        assert err.message == "blocked: private address 10.0.0.1"
    finally:
        listener.close()


@pytest.mark.parametrize("location", ["file:///etc/passwd", "gopher://127.0.0.1:70/", "ftp://x/"])
def test_redirect_to_another_scheme_is_403(fetch: FetchClient, origin: Origin, location: str):
    err = fetch.error(origin.url(f"/redirect?to={location}"))
    scheme = location.split(":")[0]
    assert isinstance(err, Blocked) and err.reason == f"scheme {scheme} not allowed"


def test_relative_redirects_resolve_against_the_current_url(fetch: FetchClient, origin: Origin):
    res = fetch.get(origin.url("/redirect?to=../text&code=301"))
    assert res.status == 200 and res.final_url == origin.url("/text") and res.redirects == 1


# -- the guard at connect time --------------------------------------------------------------


class UncheckedResolution(Guard):
    """A guard whose checks before connecting are broken: names pass the pre-check and
    resolution checks nothing. Only the connect-time check is left."""

    def check_name(self, host: str, port: int) -> None:
        return None

    def resolve_and_check(self, target: Target) -> list[str]:
        return self.resolver(target.host, target.port)


def test_connect_time_check_refuses_the_address_curl_connects_to(start_fetch, origin: Origin):
    """`.localhost` names stay on loopback even if curl resolved them itself."""
    origin.set("/rebound", "must not be served")
    guard = UncheckedResolution(allow_ports=[origin.port], resolver=lambda h, p: ["127.0.0.1"])
    fetch = start_fetch(guard)
    err = fetch.error(f"http://rebound.localhost:{origin.port}/rebound")
    assert isinstance(err, Blocked) and err.status == 403
    assert err.reason == "loopback address 127.0.0.1"
    assert origin.count("/rebound") == 0


def test_curl_is_pinned_to_the_checked_answer(start_fetch):
    """The resolver says 127.0.0.2; curl on its own would take `pin.localhost` to 127.0.0.1
    or ::1, where nothing listens on that port. Reaching 127.0.0.2 shows curl used the
    checked answer and did not resolve again (which is what defeats DNS rebinding)."""
    other = Origin("127.0.0.2").start()
    try:
        asked: list[tuple[str, int]] = []

        def resolver(host: str, port: int) -> list[str]:
            asked.append((host, port))
            return ["127.0.0.2"]

        fetch = start_fetch(Guard(LOOPBACK, resolver=resolver))
        res = fetch.get(f"http://pin.localhost:{other.port}/text")
        assert res.status == 200 and res.body.decode() == other.text_body
        assert res.final_url == f"http://pin.localhost:{other.port}/text"
        assert other.count("/text") == 1
        assert asked == [("pin.localhost", other.port)]
    finally:
        other.stop()


def test_names_resolve_off_the_actor_thread(start_fetch, origin: Origin):
    gate = threading.Event()
    threads: list[str] = []

    def resolver(host: str, port: int) -> list[str]:
        threads.append(threading.current_thread().name)
        gate.wait(10)
        return ["127.0.0.1"]

    fetch = start_fetch(Guard(["127.0.0.0/8", "::1/128"], resolver=resolver))
    pending = fetch.send(f"http://localhost:{origin.port}/text")
    assert fetch.ask(Ping) is True  # answered while the resolver is stuck
    assert fetch.ask(FetchStats)["resolving"] == 1
    gate.set()
    assert pending.wait(10).body.decode() == origin.text_body
    assert threads and threads[0].startswith("sift-resolve")


def test_proxy_environment_is_ignored(fetch: FetchClient, origin: Origin, monkeypatch):
    proxy = socket.create_server(("127.0.0.1", 0))
    proxy.setblocking(False)
    try:
        url = f"http://127.0.0.1:{proxy.getsockname()[1]}"
        for name in ("http_proxy", "HTTP_PROXY", "https_proxy", "HTTPS_PROXY", "ALL_PROXY"):
            monkeypatch.setenv(name, url)
        assert fetch.get(origin.url("/text")).status == 200
        with pytest.raises(BlockingIOError):
            proxy.accept()
    finally:
        proxy.close()


# -- the actor ------------------------------------------------------------------------------


def test_ping_is_answered_while_a_fetch_is_in_flight(fetch: FetchClient, origin: Origin):
    pending = fetch.send(origin.url("/hold/ping"))
    assert origin.wait_arrived("ping")
    started = time.monotonic()
    assert fetch.ask(Ping) is True
    assert time.monotonic() - started < 1.0  # the fetch is held indefinitely
    assert fetch.ask(FetchStats) == {"active": 1, "queued": 0, "resolving": 0}
    origin.release("ping")
    assert pending.wait(10).status == 200
    assert fetch.ask(FetchStats) == {"active": 0, "queued": 0, "resolving": 0}


def test_many_fetches_share_the_handles(start_fetch, origin: Origin):
    fetch = start_fetch(handles=2)
    pending = [fetch.send(origin.url(f"/chain?n={i % 3}")) for i in range(12)]
    assert all(p.wait(30).status == 200 for p in pending)


def test_stopping_fails_the_fetches_it_holds(start_fetch, origin: Origin):
    fetch = start_fetch()
    pending = fetch.send(origin.url("/hold/stop"))
    assert origin.wait_arrived("stop")
    fetch.stop()
    with pytest.raises(Unavailable):
        pending.wait(5)
    origin.release("stop")


def test_refused_url_is_answered_without_a_transfer(fetch: FetchClient):
    err = fetch.error("http://u:p@127.0.0.1/")
    assert err.message == "blocked: userinfo not allowed"
    assert fetch.ask(FetchStats) == {"active": 0, "queued": 0, "resolving": 0}


# -- other addresses, inside a network namespace ---------------------------------------------

NETNS_SNIPPET = r"""
import json, socketserver, threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

from sift.actors.bridge import ThreadReply
from sift.actors.fetch import FetchActor, FetchRequest
from sift.core.config import FetchConfig
from sift.core.errors import SiftError
from sift.fetch.guard import Guard

hits = []

class Handler(BaseHTTPRequestHandler):
    def do_GET(self):
        here = self.server.server_address[0]
        hits.append([here, self.path])
        if self.path == "/to-private":
            self.send_response(302)
            self.send_header("Location", "http://10.9.9.9:8080/inside")
            self.send_header("Content-Length", "0")
            self.end_headers()
            return
        body = here.encode()
        self.send_response(200)
        self.send_header("Content-Type", "text/plain")
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    def log_message(self, *args):
        pass

class Server(ThreadingHTTPServer):
    def server_bind(self):  # HTTPServer's own would look up our name (getfqdn)
        socketserver.TCPServer.server_bind(self)
        self.server_name, self.server_port = self.server_address[:2]

class UncheckedResolution(Guard):
    def resolve_and_check(self, target):
        return self.resolver(target.host, target.port)

servers = [Server((ip, 8080), Handler) for ip in ("10.9.9.9", "93.184.216.34", "127.0.0.1")]
for s in servers:
    threading.Thread(target=s.serve_forever, daemon=True).start()

def fetch(guard, url):
    ref = FetchActor.start(FetchConfig(timeout=10), guard)
    before = len(hits)
    try:
        reply = ThreadReply()
        ref.tell(FetchRequest(url, reply))
        res = reply.wait(30)
        out = {"status": res.status, "body": res.body.decode()}
    except SiftError as exc:
        out = {"error": exc.status, "message": exc.message}
    finally:
        ref.stop()
    out["hits"] = hits[before:]
    return out

public = lambda host, port: ["93.184.216.34"]
private = lambda host, port: ["10.9.9.9"]
print(json.dumps({
    "allowed": fetch(Guard(["10.9.9.0/24"]), "http://10.9.9.9:8080/inside"),
    "refused": fetch(Guard([], [8080]), "http://10.9.9.9:8080/inside"),
    "redirect": fetch(Guard(["127.0.0.0/8"]), "http://127.0.0.1:8080/to-private"),
    "rebind": fetch(Guard([], [8080], resolver=public), "http://rebind.test:8080/inside"),
    "name": fetch(Guard([], [8080], resolver=private), "http://rebind.test:8080/inside"),
    "connect": fetch(UncheckedResolution([], [8080], resolver=private),
                     "http://rebind.test:8080/inside"),
}))
for s in servers:
    s.shutdown()
    s.server_close()
"""


def test_private_addresses_inside_a_network_namespace():
    """10.9.9.9 and 93.184.216.34 live on `lo` in a namespace with no route out, and the
    namespace's /etc/hosts says `rebind.test` is 10.9.9.9 — what a rebinding DNS server
    would answer curl after the guard's resolver had said 93.184.216.34."""
    netns.require_netns()
    out = netns.run_json(
        NETNS_SNIPPET,
        addresses=["10.9.9.9", "93.184.216.34"],
        hosts={"rebind.test": "10.9.9.9"},
    )
    inside = [["10.9.9.9", "/inside"]]
    # allow_prefixes let a private address through, on any port ...
    assert out["allowed"] == {"status": 200, "body": "10.9.9.9", "hits": inside}
    # ... and without them it is refused before a connection is made,
    blocked = {"error": 403, "message": "blocked: private address 10.9.9.9", "hits": []}
    assert out["refused"] == blocked
    # also as a redirect hop,
    assert out["redirect"]["error"] == 403
    assert out["redirect"]["hits"] == [["127.0.0.1", "/to-private"]]
    # also when a name resolves to it,
    assert out["name"] == blocked
    # and also when every check before connecting is broken: the connect-time check.
    assert out["connect"] == blocked
    # Rebinding: curl connects to the address that was checked, never to its own answer.
    assert out["rebind"] == {
        "status": 200,
        "body": "93.184.216.34",
        "hits": [["93.184.216.34", "/inside"]],
    }
