"""Several `sift serve` replicas on one fresh PostgreSQL database (the `replicas` fixture),
two callers, and `call` to ask one of them over HTTP."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import urllib.error
import urllib.request
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from sift.core.callers import sha256_hex
from tests.support.processes import free_port, wait_healthy

TOKEN = "replica-token-for-tests"
OTHER = "other-replica-token-for-tests"  # a second caller: its own jobs_per_caller


def call(
    base: str, method: str, path: str, body: Any = None, token: str = TOKEN
) -> tuple[int, Any]:
    req = urllib.request.Request(
        base + path,
        method=method,
        data=None if body is None else json.dumps(body).encode(),
        headers={"Authorization": f"Bearer {token}", "Content-Type": "application/json"},
    )
    opener = urllib.request.build_opener(urllib.request.ProxyHandler({}))
    try:
        with opener.open(req, timeout=60) as r:
            return r.status, json.loads(r.read())
    except urllib.error.HTTPError as e:
        return e.code, json.loads(e.read())


class Replicas:
    """`sift serve` processes on one fresh database, each with its own state directory."""

    def __init__(self, tmp_path: Path, url: str) -> None:
        self.tmp_path, self.url = tmp_path, url
        self.procs: list[subprocess.Popen[str]] = []
        self.bases: list[str] = []

    def __call__(self, n: int, batch: str = "") -> list[str]:
        """Start n more (`batch`: more lines of their `[batch]`); their base URLs."""
        for _ in range(n):
            i, port = len(self.bases), free_port()
            self.bases.append(f"http://127.0.0.1:{port}")
            (self.tmp_path / f"sift{i}.toml").write_text(
                f'listen = "127.0.0.1:{port}"\nstate_dir = "{self.tmp_path / f"state{i}"}"\n'
                '[guard]\nallow_prefixes = ["127.0.0.0/8"]\n'
                f'[store]\nurl = "{self.url}"\npool = 2\n'
                "[clean]\nworkers = 1\n"
                f'[batch]\nlease = "2s"\ntargets_per_job = 64\n{batch}'
                f'[[caller]]\nname = "agent"\ntoken_sha256 = "{sha256_hex(TOKEN)}"\n'
                'class = "fleet"\n'
                f'[[caller]]\nname = "other"\ntoken_sha256 = "{sha256_hex(OTHER)}"\n'
                'class = "fleet"\n'
            )
            self.procs.append(self._spawn(i))
        for i in range(len(self.bases) - n, len(self.bases)):
            wait_healthy(self.bases[i], self.procs[i])
        return self.bases[-n:]

    def _spawn(self, i: int) -> subprocess.Popen[str]:
        env = {k: v for k, v in os.environ.items() if not k.startswith("SIFT_")}
        return subprocess.Popen(
            [
                sys.executable,
                "-m",
                "sift",
                "--config",
                str(self.tmp_path / f"sift{i}.toml"),
                "serve",
            ],
            stderr=subprocess.DEVNULL,
            text=True,
            env=env,
        )

    def kill(self, i: int) -> None:
        """kill -9: no drain, no goodbye."""
        self.procs[i].kill()
        self.procs[i].wait(10)

    def restart(self, i: int) -> None:
        self.procs[i] = self._spawn(i)
        wait_healthy(self.bases[i], self.procs[i])

    def stop(self) -> None:
        for proc in self.procs:
            if proc.poll() is None:
                proc.kill()
                proc.wait(10)


@pytest.fixture
def replicas(tmp_path: Path, pg_cluster: Any) -> Iterator[Replicas]:
    r = Replicas(tmp_path, pg_cluster.create())
    yield r
    r.stop()
