"""Batch across a crash, through real processes: `sift serve` killed with SIGKILL mid-job, then
started again — the job goes on where it was (the target in flight tried once more), what was
stored is intact, the database is sound. Driven with the `sift batch` CLI, as an agent would."""

from __future__ import annotations

import json
import os
import signal
import sqlite3
import subprocess
import sys
import threading
import time
import urllib.request
import uuid
from collections.abc import Callable
from pathlib import Path

from sift.core.callers import sha256_hex
from tests.test_serve import _alive, _children, _free_port, _wait_healthy

TOKEN = "batch-serve-token"


class Served:
    """`sift serve` on a free loopback port with a config file in `tmp`."""

    def __init__(self, tmp: Path) -> None:
        self.port = _free_port()
        self.state = tmp / "state"
        self.config = tmp / "sift.toml"
        self.config.write_text(
            f'listen = "127.0.0.1:{self.port}"\nstate_dir = "{self.state}"\n'
            '[guard]\nallow_prefixes = ["127.0.0.0/8"]\n'
            f'[[caller]]\nname = "agent"\ntoken_sha256 = "{sha256_hex(TOKEN)}"\n'
        )
        self.env = {k: v for k, v in os.environ.items() if not k.startswith("SIFT_")}
        self.env |= {"SIFT_URL": self.base, "SIFT_TOKEN": TOKEN}
        self.proc: subprocess.Popen[str] | None = None

    @property
    def base(self) -> str:
        return f"http://127.0.0.1:{self.port}"

    def start(self) -> Served:
        """Start (again); each run's log is appended to `serve.log` beside the config."""
        with open(self.config.with_name("serve.log"), "a") as log:
            self.proc = subprocess.Popen(
                [sys.executable, "-m", "sift", "--config", str(self.config), "serve"],
                stderr=log, text=True, env=self.env,
            )  # fmt: skip
        _wait_healthy(self.base, self.proc)
        return self

    def cli(self, *args: str, stdin: str | None = None) -> subprocess.CompletedProcess[str]:
        return subprocess.run(
            [sys.executable, "-m", "sift", "--config", str(self.config), "batch", *args],
            input=stdin, capture_output=True, text=True, env=self.env, timeout=60,
        )  # fmt: skip

    def kill(self) -> None:
        """SIGKILL: no drain, no stop. Its clean workers see stdin close and exit."""
        assert self.proc is not None
        kids = _children(self.proc.pid)
        self.proc.kill()
        self.proc.wait(20)
        for pid in kids:
            _reap(pid)

    def stop(self) -> None:
        if self.proc is not None and self.proc.poll() is None:
            self.proc.send_signal(signal.SIGTERM)
            self.proc.wait(60)


def _reap(pid: int) -> None:
    """Wait (bounded) for an orphaned worker of ours to leave; kill it if it does not."""
    deadline = time.monotonic() + 20
    while _alive(pid) and time.monotonic() < deadline:
        threading.Event().wait(0.05)
    if _alive(pid):
        os.kill(pid, signal.SIGKILL)


def _until(check: Callable[[], bool], what: str, timeout: float = 90.0) -> None:
    deadline = time.monotonic() + timeout
    while not check():
        assert time.monotonic() < deadline, f"timed out waiting for {what}"
        time.sleep(0.05)


def test_a_job_cut_by_kills_goes_on_and_a_target_in_flight_twice_fails(tmp_path, origin):
    """Killed once mid-target: the job goes on after the restart and the target is tried
    again. Killed again while a target is in flight the second time: that target fails with
    `restart`, and the job still goes on (a poison pill cannot crash-loop sift)."""
    served = Served(tmp_path).start()
    once, twice = f"once-{uuid.uuid4().hex[:8]}", f"twice-{uuid.uuid4().hex[:8]}"
    urls = [origin.url("/text?k0"), origin.url("/json?k1"), origin.url(f"/hold/{once}"),
            origin.url(f"/hold/{twice}"), origin.url("/text?k4")]  # fmt: skip

    def arrived(name: str, n: int) -> Callable[[], bool]:
        return lambda: origin.count(f"/hold/{name}") >= n

    try:
        sub = served.cli("submit", "-", stdin="\n".join(urls) + "\n")
        assert sub.returncode == 0, sub.stderr
        job_id = sub.stdout.strip()  # the id alone on stdout
        assert job_id and " " not in job_id and "job queued" in sub.stderr
        # One job drains serially: the third target is held, so the first two are stored.
        _until(arrived(once, 1), "target 2")
        served.kill()
        origin.release(once)  # its next try is answered
        served.start()
        _until(arrived(once, 2), "target 2 tried again after the restart")
        _until(arrived(twice, 1), "target 3")
        served.kill()
        served.start()
        _until(arrived(twice, 2), "target 3 tried again after the restart")
        served.kill()  # in flight at a second crash: it fails, and the job goes on
        served.start()
        waited = served.cli("wait", "--interval", "0.2", job_id)
        assert f"job {job_id}: partial" in waited.stdout, waited.stdout + waited.stderr
        job = json.loads(served.cli("status", "--json", job_id).stdout)
        assert [t["status"] for t in job["targets"]] == [
            "done", "done", "done", "failed", "done",
        ]  # fmt: skip
        three = json.loads(served.cli("get", "--json", job_id, "3").stdout)
        assert "restart" in json.dumps(three), three
        assert origin.count(f"/hold/{twice}") == 2  # never a third try
        got = served.cli("get", job_id, "0")
        assert got.returncode == 0 and origin.text_body.strip() in got.stdout
        one = json.loads(served.cli("get", "--json", job_id, "1").stdout)
        assert one["result"]["kind"] == "json" and one["result"]["success"] is True

        # The restarts were counted, and the service takes new work.
        opener = urllib.request.build_opener(urllib.request.ProxyHandler({}))
        with opener.open(served.base + "/metrics", timeout=10) as r:
            text = r.read().decode()
        assert 'sift_batch_jobs_total{outcome="restart"} 1.0' in text
        assert 'sift_batch_targets_total{outcome="restart"} 1.0' in text
        fresh = served.cli("submit", "-", stdin=origin.url("/text?fresh") + "\n")
        new_id = fresh.stdout.split()[0]
        waited = served.cli("wait", "--interval", "0.2", new_id)
        assert waited.returncode == 0, waited.stderr
        assert f"job {new_id}: done" in waited.stdout
        assert "1/1 targets done" in waited.stderr  # plain progress lines off a terminal
    finally:
        served.stop()
        origin.release(once)
        origin.release(twice)
    db = sqlite3.connect(served.state / "jobs.db")
    try:
        assert db.execute("PRAGMA integrity_check").fetchone()[0] == "ok"
    finally:
        db.close()
