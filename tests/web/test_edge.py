"""The HTTP edge, through raw sockets: stalled clients are dropped, and every refusal — a head
over the limit, a malformed request, a body past its cap, JSON nested too deeply — is answered
in the one JSON error shape."""

from __future__ import annotations

import json
import logging
import os
import signal
import socket
import threading
import time
from pathlib import Path
from typing import Any
from urllib.parse import quote

import pytest

from tests.support.sift_server import FLEET_TOKEN

AUTH = f"Authorization: Bearer {FLEET_TOKEN}\r\n"
POST = "POST /v1/fetch HTTP/1.1\r\nHost: 127.0.0.1\r\n"  # an allowed Host (web/hosts.py)
CHUNKED = f"{POST}{AUTH}Transfer-Encoding: chunked\r\n\r\n".encode()


def _connect(port: int) -> socket.socket:
    s = socket.create_connection(("127.0.0.1", port), timeout=15)
    return s


def _read_answer(s: socket.socket) -> tuple[int, dict[str, object]]:
    """Status and JSON body of the one answer on `s` (read until the server closes)."""
    data = b""
    while True:
        try:
            piece = s.recv(65536)
        except ConnectionResetError:
            break
        if not piece:
            break
        data += piece
        head, sep, body = data.partition(b"\r\n\r\n")
        if sep:
            length = [
                int(line.split(b":", 1)[1])
                for line in head.split(b"\r\n")
                if line.lower().startswith(b"content-length:")
            ]
            if length and len(body) >= length[0]:
                break
    head, _, body = data.partition(b"\r\n\r\n")
    assert head, "the server closed the connection without an answer"
    return int(head.split(b" ", 2)[1]), json.loads(body)


def _closed_within(s: socket.socket, secs: float) -> bool:
    s.settimeout(secs)
    try:
        return s.recv(1) == b""
    except ConnectionResetError:
        return True
    except TimeoutError:
        return False


def _none_in_flight(sift) -> bool:
    for _ in range(100):
        if sift.svc.inflight == 0:
            return True
        time.sleep(0.05)
    return False


def test_a_client_that_stalls_in_its_head_is_dropped(make_sift):
    sift = make_sift({"http": {"idle_timeout": "1s"}})
    with _connect(sift.port) as s:
        s.sendall(b"POST /v1/fetch HTTP/1.1\r\nHost: 127.0.0.1\r\nAuthor")
        assert _closed_within(s, 10)
    with _connect(sift.port) as s:  # an idle keep-alive connection too
        assert _closed_within(s, 10)


def test_a_client_that_stalls_in_its_body_is_dropped(make_sift):
    sift = make_sift({"http": {"body_timeout": "1s"}})
    with _connect(sift.port) as s:
        s.sendall(f"{POST}{AUTH}Content-Length: 100\r\n\r\n{{".encode())
        assert _closed_within(s, 10)
    assert _none_in_flight(sift)


def test_a_chunked_body_past_the_cap_is_413_in_json(sift):
    with _connect(sift.port) as s:
        s.sendall(CHUNKED + b"%x\r\n" % (50 * 1024 * 1024) + b"a" * 80_000)
        status, body = _read_answer(s)
    assert status == 413 and body["success"] is False and "64 KiB" in str(body["error"])
    # small chunks past the cap too
    with _connect(sift.port) as s:
        s.sendall(CHUNKED + b"1000\r\n" + b"a" * 0x1000 + b"\r\n")
        for _ in range(20):
            s.sendall(b"1000\r\n" + b"a" * 0x1000 + b"\r\n")
        status, body = _read_answer(s)
    assert status == 413 and "64 KiB" in str(body["error"])
    assert sift.fetch("http://127.0.0.1:1/").status in (502, 403)  # still serving


def test_an_aborted_body_does_not_stay_in_flight(sift):
    with _connect(sift.port) as s:
        s.sendall(f"{POST}{AUTH}Content-Length: 1000\r\n\r\n{{".encode())
        time.sleep(0.3)
    assert _none_in_flight(sift)


def test_json_nested_too_deeply_is_400_on_every_route(sift):
    deep = "[" * 20_000 + "]" * 20_000  # within every route's body cap
    bodies = {
        "/v2/scrape": '{"url": "http://127.0.0.1/", "formats": ' + deep + "}",
        "/v1/batch": '{"targets": [{"url": "http://127.0.0.1/", "jq": ' + deep + "}]}",
    }
    for path, body in bodies.items():
        r = sift.post(path, raw=body.encode())
        assert r.status == 400, (path, r.status, r.body[:200])
        assert r.json["success"] is False and "nested too deeply" in r.json["error"], path


def test_a_response_nested_too_deeply_for_jq_says_so(sift, origin):
    origin.set("/deep.json", "[" * 100_000 + "]" * 100_000, content_type="application/json")
    r = sift.fetch(origin.url("/deep.json"), jq=".")
    assert r.status == 422 and "nested too deeply" in r.json["error"], r.body[:300]


@pytest.mark.parametrize(
    ("head", "words"),
    [
        (b"GET /" + b"a" * 70_000 + b" HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n", "KiB"),
        (b"GET / HTTP/1.1\r\nHost: 127.0.0.1\r\nX-Big: " + b"a" * 70_000 + b"\r\n\r\n", "KiB"),
        (
            b"GET / HTTP/1.1\r\nHost: 127.0.0.1\r\n"
            + b"".join(b"X-%d: y\r\n" % i for i in range(3000))
            + b"\r\n",
            "header lines",
        ),
    ],
)
def test_a_head_over_the_limit_is_431_in_json(sift, head, words):
    with _connect(sift.port) as s:
        s.sendall(head)
        status, body = _read_answer(s)
    assert status == 431 and body["success"] is False and words in str(body["error"])


@pytest.mark.parametrize(
    "head",
    [
        POST.encode() + b"X-Big: " + b"a" * 70_000 + b"\r\n\r\n",  # 431: over 64 KiB
        POST.encode() + b"".join(b"X-%d: y\r\n" % i for i in range(150)) + b"\r\n",  # 431
        b"POST /v1/fetch HTTP/1.1\r\nHost: evil.example\r\n\r\n",  # 421: a foreign Host
        b"NOT A REQUEST LINE\r\nHost: 127.0.0.1\r\n\r\n",  # 400: malformed
    ],
)
def test_an_answer_at_the_edge_says_no_store(sift, head):
    """Every answer carries `Cache-Control: no-store`, those written before any handler
    runs too: a proxy between an agent and sift must keep none of them."""
    with _connect(sift.port) as s:
        s.sendall(head)
        data = b""
        while b"\r\n\r\n" not in data and (piece := s.recv(65536)):
            data += piece
    lines = data.partition(b"\r\n\r\n")[0].lower().split(b"\r\n")
    assert int(lines[0].split()[1]) >= 400, lines[0]
    assert b"cache-control: no-store" in lines, lines


def test_a_nul_in_authorization_is_answered_in_json(sift):
    with _connect(sift.port) as s:
        s.sendall(
            b"POST /v1/fetch HTTP/1.1\r\nHost: 127.0.0.1\r\nAuthorization: Bearer a\x00b\r\n"
            b"Content-Length: 2\r\n\r\n{}"
        )
        status, body = _read_answer(s)
    assert status in (400, 401) and body["success"] is False and body["error"]


def test_an_upstream_header_too_large_says_so(sift, origin):
    r = sift.fetch(origin.url("/bigheader?kb=200"))
    assert r.status == 502, r.body[:300]
    assert r.json["error"].startswith("upstream") and "too large" in r.json["error"], r.json


def test_a_location_in_utf8_is_followed_to_the_right_path(sift, origin):
    origin.set("/%C3%BC-path", "<html><body><p>umlaut path reached</p></body></html>")
    target = origin.url("/ü-path?q=ä")
    r = sift.fetch(origin.url("/redirect?utf8=1&to=") + quote(target))
    assert r.status == 200, r.body[:300]
    assert "umlaut path reached" in r.json["content"]
    assert r.json["final_url"].endswith("/%C3%BC-path?q=%C3%A4")


def test_a_location_to_an_internationalised_name_goes_to_its_idna_host(make_sift, origin):
    asked: list[str] = []

    def resolver(host: str, port: int) -> list[str]:
        asked.append(host)
        return ["127.0.0.1"]  # never DNS: every name is this machine

    sift = make_sift(resolver=resolver)
    target = f"http://bücher.localhost:{origin.port}/text"
    r = sift.fetch(origin.url("/redirect?utf8=1&to=") + quote(target))
    assert r.status == 200, r.body[:300]
    assert asked == ["xn--bcher-kva.localhost"]
    assert r.json["final_url"] == f"http://xn--bcher-kva.localhost:{origin.port}/text"


def test_a_location_no_url_parser_reads_is_a_bad_redirect_not_a_crashed_fetcher(sift, origin):
    """`Location: http://[::1` (an unclosed IPv6 host) once crashed the fetch actor: that
    request was a 503 and the next ones too while it restarted. It is the upstream's fault: a
    502 naming the bad redirect, and the fetcher goes on serving."""
    for to in ("http://[::1", "http://[::1]x/", "http://[fe80::1%25eth0"):
        r = sift.fetch(origin.url("/redirect?to=") + quote(to, safe=""))
        assert r.status == 502, (to, r.body[:300])
        assert r.json["error"].startswith("upstream sent a bad redirect"), r.json
        assert sift.fetch(origin.url("/text")).status == 200


def test_a_500_on_scrape_is_logged_with_its_reason(sift, origin, caplog):
    caplog.set_level(logging.INFO)
    r = sift.post("/v2/scrape", {"url": origin.refused_url("/x")})
    assert r.status == 500 and r.json == {"success": False, "error": "upstream connection refused"}
    for _ in range(100):  # the line is written just after the answer
        lines = [r.fields for r in caplog.records if r.name == "sift.access"]
        if lines:
            break
        time.sleep(0.05)
    assert any(
        f["status"] == 500 and f.get("error") == "upstream connection refused" for f in lines
    ), lines


def _pdftext_children() -> list[int]:
    """pids of this process's `sift pdftext` children (the test server runs in-process)."""
    me, found = os.getpid(), []
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit():
            continue
        try:
            ppid = int((entry / "stat").read_text().rsplit(")", 1)[1].split()[1])
            cmd = (entry / "cmdline").read_bytes()
        except (OSError, IndexError):
            continue
        if ppid == me and b"pdftext" in cmd:
            found.append(int(entry.name))
    return found


def test_a_pdf_child_killed_by_the_kernel_is_503_crashed(make_sift, origin):
    from tests.support.pdfs import three_page_pdf

    sift = make_sift(extract_args=["--allow-test-hooks", "--test-sleep", "30"])
    origin.set("/killed.pdf", three_page_pdf(), "application/pdf")
    answers: list[Any] = []
    t = threading.Thread(target=lambda: answers.append(sift.fetch(origin.url("/killed.pdf"))))
    t.start()
    for _ in range(200):  # until the child runs
        pids = _pdftext_children()
        if pids:
            break
        time.sleep(0.05)
    assert pids, "no pdftext child started"
    for pid in pids:
        os.kill(pid, signal.SIGKILL)  # as the OOM killer does
    t.join(30)
    r = answers[0]
    assert r.status == 503, r.body
    assert "crashed" in r.json["error"] and "SIGKILL" in r.json["error"]
    assert r.headers.get("Retry-After") and r.json["hint"] == "retry"
