"""`sift serve` and `sift fetch` as real processes: first start, the CLI, a clean stop."""

from __future__ import annotations

import json
import os
import signal
import socket
import stat
import subprocess
import sys
import time
import urllib.request

from tests.support.processes import alive, children


def test_first_start_creates_a_local_token_and_the_cli_uses_it(served, origin):
    _proc, base, cfg, state = served
    token_file = state / "token"
    assert stat.S_IMODE(token_file.stat().st_mode) == 0o600
    env = {k: v for k, v in os.environ.items() if not k.startswith("SIFT_")}
    env["SIFT_URL"] = base
    out = subprocess.run(
        [sys.executable, "-m", "sift", "--config", str(cfg), "fetch", origin.url("/article")],
        capture_output=True,
        text=True,
        env=env,
        timeout=60,
    )
    assert out.returncode == 0, out.stderr
    assert out.stdout.startswith("# ")
    origin.set("/clip.mp4", b"\x00\x00\x00\x18ftypmp42", "video/mp4")
    out = subprocess.run(
        [
            sys.executable,
            "-m",
            "sift",
            "--config",
            str(cfg),
            "fetch",
            "--json",
            origin.url("/clip.mp4"),
        ],
        capture_output=True,
        text=True,
        env=env,
        timeout=60,
    )
    assert out.returncode != 0
    assert "unsupported content type video/mp4" in out.stderr
    assert json.loads(out.stdout)["hint"] == "browser"


def test_sigterm_stops_cleanly_and_kills_every_worker(served):
    proc, _base, _cfg, _state = served
    workers = children(proc.pid)
    assert workers, "sift serve should run clean worker processes"
    proc.send_signal(signal.SIGTERM)
    assert proc.wait(30) == 0
    err = proc.stderr.read() if proc.stderr else ""
    assert "listening on" in err and "curl" in err and "sift fetch" in err
    assert not [p for p in workers if alive(p)]


def test_in_process_fetch_without_a_server(tmp_path, origin):
    cfg = tmp_path / "sift.toml"
    cfg.write_text(
        f'state_dir = "{tmp_path / "state"}"\n[guard]\nallow_prefixes = ["127.0.0.0/8"]\n'
    )
    env = {k: v for k, v in os.environ.items() if not k.startswith("SIFT_")}
    out = subprocess.run(
        [
            sys.executable,
            "-m",
            "sift",
            "--config",
            str(cfg),
            "fetch",
            "--jq",
            ".items | length",
            "--no-context",
            origin.url("/json"),
        ],
        capture_output=True,
        text=True,
        env=env,
        timeout=60,
    )
    assert out.returncode == 0, out.stderr
    assert out.stdout.strip().isdigit()
    out = subprocess.run(
        [sys.executable, "-m", "sift", "--config", str(cfg), "fetch", "http://10.0.0.1/"],
        capture_output=True,
        text=True,
        env=env,
        timeout=60,
    )
    assert out.returncode == 1 and "blocked" in out.stderr


def test_extract_a_local_pdf(tmp_path):
    from tests.support.pdfs import PHRASES, three_page_pdf

    pdf = tmp_path / "paper.pdf"
    pdf.write_bytes(three_page_pdf())
    cfg = tmp_path / "sift.toml"
    cfg.write_text(f'state_dir = "{tmp_path / "state"}"\n')
    env = {k: v for k, v in os.environ.items() if not k.startswith("SIFT_")}
    base = [sys.executable, "-m", "sift", "--config", str(cfg), "extract", str(pdf)]
    out = subprocess.run(
        [*base, "--grep", "marmalade"], capture_output=True, text=True, env=env, timeout=60
    )
    assert out.returncode == 0, out.stderr
    assert f"p. 2: The {PHRASES[2]}" in out.stdout
    out = subprocess.run(
        [*base, "--pages", "9"], capture_output=True, text=True, env=env, timeout=60
    )
    assert out.returncode == 1 and "pages out of range (1–3)" in out.stderr
    out = subprocess.run(
        [*base[:-1], str(tmp_path / "missing.pdf")],
        capture_output=True,
        text=True,
        env=env,
        timeout=60,
    )
    assert out.returncode != 0 and "cannot read" in out.stderr


def test_sigterm_drains_a_request_in_flight(served, origin):
    proc, base, _, state = served
    token = (state / "token").read_text().strip()
    import threading

    origin.set_slow("/drain-slow", 2, "<html><body><p>drained in time</p></body></html>")

    answers: list[int] = []

    def slow() -> None:
        req = urllib.request.Request(
            base + "/v1/fetch",
            data=json.dumps({"url": origin.url("/drain-slow")}).encode(),
            headers={"Authorization": f"Bearer {token}"},
        )
        opener = urllib.request.build_opener(urllib.request.ProxyHandler({}))
        with opener.open(req, timeout=30) as r:
            answers.append(r.status)

    t = threading.Thread(target=slow)
    t.start()
    for _ in range(100):  # until the origin holds the request
        if origin.count("/drain-slow") >= 1:
            break
        time.sleep(0.05)
    proc.send_signal(signal.SIGTERM)
    t.join(30)
    assert answers == [200]  # answered, not cut off
    assert proc.wait(30) == 0


def test_sigterm_after_an_aborted_body_does_not_wait_the_drain(served):
    """A client gone mid-body leaves nothing in flight: SIGTERM stops at once, not after the
    30 s drain."""
    proc, base, _, state = served
    token = (state / "token").read_text().strip()
    port = int(base.rsplit(":", 1)[1])
    with socket.create_connection(("127.0.0.1", port), timeout=10) as s:
        s.sendall(
            f"POST /v1/fetch HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer {token}\r\n"
            "Content-Length: 1000\r\n\r\n{".encode()
        )
        time.sleep(0.5)  # the handler has started and counts the request in flight
    time.sleep(0.5)
    started = time.monotonic()
    proc.send_signal(signal.SIGTERM)
    assert proc.wait(30) == 0
    assert time.monotonic() - started < 10  # generous; the drain would take 30 s
