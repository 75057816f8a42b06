"""A throwaway PostgreSQL cluster for tests: `initdb` in a temporary directory, a free port on
127.0.0.1, run as an unprivileged user (the server refuses to run as root). Skips, with the
reason, only where PostgreSQL is not installed (`.ci/run` installs it)."""

from __future__ import annotations

import glob
import os
import pwd
import shutil
import signal
import socket
import subprocess
import tempfile
import time
from collections.abc import Generator
from pathlib import Path
from typing import Any

import pytest

USER = "sift"  # the database role the tests connect as (trust auth on 127.0.0.1 only)


def _bindir() -> Path | None:
    found = sorted(glob.glob("/usr/lib/postgresql/*/bin/initdb"))
    if found:
        return Path(found[-1]).parent
    initdb = shutil.which("initdb")
    return Path(initdb).resolve().parent if initdb else None


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def _as_user() -> str | None:
    """The unprivileged user to run the server as when we are root (None: ourselves)."""
    if os.getuid() != 0:
        return None
    for name in ("postgres", "nobody"):
        try:
            pwd.getpwnam(name)
        except KeyError:
            continue
        return name
    pytest.skip("PostgreSQL: running as root and no unprivileged user to run it as")


def _ids(user: str | None) -> dict[str, Any]:
    """Popen's `user`/`group`: the server itself gets our signals (no runuser in between)."""
    if user is None:
        return {}
    entry = pwd.getpwnam(user)
    return {"user": entry.pw_uid, "group": entry.pw_gid, "extra_groups": []}


class Cluster:
    """One running cluster; `url(db)` names a database on it, `create(db)` makes one."""

    def __init__(self, root: Path, port: int, proc: subprocess.Popen[bytes], bindir: Path):
        self.root, self.port, self.proc, self.bindir = root, port, proc, bindir
        self._n = 0

    def url(self, db: str = "postgres") -> str:
        return f"postgresql://{USER}@127.0.0.1:{self.port}/{db}"

    def create(self) -> str:
        """A fresh empty database; its URL."""
        import psycopg

        self._n += 1
        name = f"t{os.getpid()}_{self._n}"
        with psycopg.connect(self.url(), autocommit=True) as conn:
            conn.execute(f'CREATE DATABASE "{name}"')
        return self.url(name)

    def stop(self) -> None:
        """Fast shutdown (SIGINT): open sessions are ended, not waited for."""
        self.proc.send_signal(signal.SIGINT)
        try:
            self.proc.wait(20)
        except subprocess.TimeoutExpired:
            self.proc.kill()
            self.proc.wait()

    def start(self) -> None:
        """Start it again after `stop` (the same data, the same port)."""
        self.proc = _postgres(_as_user(), self.bindir, self.root / "data", self.port)


def _postgres(user: str | None, bindir: Path, data: Path, port: int) -> subprocess.Popen[bytes]:
    with (data.parent / "postgres.log").open("ab") as log:
        proc = subprocess.Popen(
            [
                str(bindir / "postgres"),
                "-D",
                str(data),
                "-p",
                str(port),
                "-c",
                "listen_addresses=127.0.0.1",
                "-c",
                f"unix_socket_directories={data.parent}",
                "-c",
                "fsync=off",
                "-c",
                "max_connections=80",
            ],
            stdout=subprocess.DEVNULL,
            stderr=log,
            **_ids(user),
        )
    deadline = time.monotonic() + 30
    while time.monotonic() < deadline:
        if proc.poll() is not None:
            tail = (data.parent / "postgres.log").read_text(errors="replace")[-2000:]
            raise RuntimeError(f"postgres exited with {proc.returncode}: {tail}")
        with socket.socket() as s:
            if s.connect_ex(("127.0.0.1", port)) == 0:
                time.sleep(0.2)
                return proc
        time.sleep(0.1)
    proc.kill()
    raise RuntimeError("postgres did not start listening")


def start_cluster() -> Generator[Cluster, None, None]:
    bindir = _bindir()
    if bindir is None:
        pytest.skip("PostgreSQL is not installed here (.ci/run installs Debian's postgresql)")
    try:
        import psycopg  # noqa: F401
    except ImportError:
        pytest.skip("psycopg is not installed")
    user = _as_user()
    root = Path(tempfile.mkdtemp(prefix="sift-pg-"))
    if user:
        shutil.chown(root, user)
    subprocess.run(
        [
            str(bindir / "initdb"),
            "-D",
            str(root / "data"),
            "-U",
            USER,
            "--auth=trust",
            "-E",
            "UTF8",
            "--no-sync",
        ],
        check=True,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
        cwd=root,
        **_ids(user),
    )
    port = _free_port()
    cluster = Cluster(root, port, _postgres(user, bindir, root / "data", port), bindir)
    try:
        yield cluster
    finally:
        cluster.stop()
        shutil.rmtree(root, ignore_errors=True)
