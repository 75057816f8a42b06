"""Real `sift serve` processes: a free port, waiting for health, the process tree in /proc,
and `Served` (a config with one caller, start / kill -9 / stop / the `sift batch` CLI)."""

from __future__ import annotations

import os
import signal
import socket
import subprocess
import sys
import threading
import time
import urllib.request
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from sift.core.callers import sha256_hex
from tests.support.until import until


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def children(pid: int) -> set[int]:
    """Every descendant of `pid`, read from /proc."""
    parents: dict[int, int] = {}
    for entry in Path("/proc").iterdir():
        if entry.name.isdigit():
            try:
                fields = (entry / "stat").read_text().rsplit(")", 1)[1].split()
                parents[int(entry.name)] = int(fields[1])
            except (OSError, IndexError):
                continue
    found: set[int] = set()
    frontier = {pid}
    while frontier:
        frontier = {p for p, pp in parents.items() if pp in frontier} - found
        found |= frontier
    return found


def alive(pid: int) -> bool:
    try:
        stat_line = Path(f"/proc/{pid}/stat").read_text()
    except OSError:
        return False
    return stat_line.rsplit(")", 1)[1].split()[0] != "Z"


def wait_healthy(base: str, proc: subprocess.Popen[Any]) -> None:
    """Until /healthz answers 200; fail at once if the process exits first."""
    opener = urllib.request.build_opener(urllib.request.ProxyHandler({}))

    def healthy() -> bool:
        if proc.poll() is not None:
            raise AssertionError(f"sift serve exited: {proc.stderr.read() if proc.stderr else ''}")
        try:
            with opener.open(base + "/healthz", timeout=2) as r:
                return bool(r.status == 200)
        except OSError:
            return False

    until(healthy, "sift serve to become healthy", every=0.1)


@pytest.fixture
def served(tmp_path: Path) -> Iterator[tuple[subprocess.Popen[str], str, Path, Path]]:
    """A `sift serve` process with no caller configured: (process, base URL, config, state)."""
    port = free_port()
    cfg = tmp_path / "sift.toml"
    cfg.write_text(
        f'listen = "127.0.0.1:{port}"\nstate_dir = "{tmp_path / "state"}"\n'
        '[guard]\nallow_prefixes = ["127.0.0.0/8"]\n'
    )
    env = {k: v for k, v in os.environ.items() if not k.startswith("SIFT_")}
    proc = subprocess.Popen(
        [sys.executable, "-m", "sift", "--config", str(cfg), "serve"],
        stderr=subprocess.PIPE,
        text=True,
        env=env,
    )
    base = f"http://127.0.0.1:{port}"
    try:
        wait_healthy(base, proc)
        yield proc, base, cfg, tmp_path / "state"
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait(10)
        if proc.stderr:
            proc.stderr.close()


TOKEN = "batch-serve-token"


class Served:
    """`sift serve` on a free loopback port with a config file in `tmp`: after `listen` and
    `state_dir`, `settings` (by default the loopback guard and one caller, `agent`, whose
    token TOKEN the CLI's environment holds)."""

    def __init__(self, tmp: Path, settings: str | None = None) -> None:
        self.port = free_port()
        self.state = tmp / "state"
        self.config = tmp / "sift.toml"
        if settings is None:
            settings = (
                '[guard]\nallow_prefixes = ["127.0.0.0/8"]\n'
                f'[[caller]]\nname = "agent"\ntoken_sha256 = "{sha256_hex(TOKEN)}"\n'
            )
        self.config.write_text(
            f'listen = "127.0.0.1:{self.port}"\nstate_dir = "{self.state}"\n' + settings
        )
        self.env = {k: v for k, v in os.environ.items() if not k.startswith("SIFT_")}
        self.env |= {"SIFT_URL": self.url, "SIFT_TOKEN": TOKEN}
        self.proc: subprocess.Popen[str] | None = None

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.port}"

    def start(self) -> Served:
        """Start (again); each run's log is appended to `serve.log` beside the config."""
        with open(self.config.with_name("serve.log"), "a") as log:
            self.proc = subprocess.Popen(
                [sys.executable, "-m", "sift", "--config", str(self.config), "serve"],
                stderr=log,
                text=True,
                env=self.env,
            )
        wait_healthy(self.url, self.proc)
        return self

    def cli(self, *args: str, stdin: str | None = None) -> subprocess.CompletedProcess[str]:
        return subprocess.run(
            [sys.executable, "-m", "sift", "--config", str(self.config), "batch", *args],
            input=stdin,
            capture_output=True,
            text=True,
            env=self.env,
            timeout=60,
        )

    def kill(self) -> None:
        """SIGKILL: no drain, no stop. Its clean workers see stdin close and exit."""
        assert self.proc is not None
        kids = children(self.proc.pid)
        self.proc.kill()
        self.proc.wait(20)
        for pid in kids:
            reap(pid)

    def stop(self) -> None:
        if self.proc is not None and self.proc.poll() is None:
            self.proc.send_signal(signal.SIGTERM)
            self.proc.wait(60)

    def log(self) -> str:
        """The end of what its runs wrote to stderr."""
        return self.config.with_name("serve.log").read_text()[-3000:]


def reap(pid: int) -> None:
    """Wait (bounded) for an orphaned worker of ours to leave; kill it if it does not."""
    deadline = time.monotonic() + 20
    while alive(pid) and time.monotonic() < deadline:
        threading.Event().wait(0.05)
    if alive(pid):
        os.kill(pid, signal.SIGKILL)
