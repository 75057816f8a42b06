"""A throwaway PostgreSQL cluster for tests: `initdb` in a temporary directory, a free port on
127.0.0.1, run as an unprivileged user (the server refuses to run as root). Skips, with the
reason, only where PostgreSQL is not installed (`.ci/run` installs it)."""

from __future__ import annotations

import glob
import os
import pwd
import shutil
import socket
import subprocess
import tempfile
import time
from collections.abc import Iterator
from pathlib import Path

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


def _as_user() -> tuple[list[str], str | None]:
    """The command prefix that runs the server unprivileged, and the owner of its files."""
    if os.getuid() != 0:
        return [], None
    for name in ("postgres", "nobody"):
        try:
            pwd.getpwnam(name)
        except KeyError:
            continue
        return ["runuser", "-u", name, "--"], name
    pytest.skip("PostgreSQL: running as root and no unprivileged user to run it as")


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
        self.proc.terminate()
        try:
            self.proc.wait(10)
        except subprocess.TimeoutExpired:
            self.proc.kill()
            self.proc.wait()

    def start(self) -> None:
        """Start it again after `stop` (the same data, the same port)."""
        prefix, _ = _as_user()
        self.proc = _postgres(prefix, self.bindir, self.root / "data", self.port)


def _postgres(prefix: list[str], bindir: Path, data: Path, port: int) -> subprocess.Popen[bytes]:
    proc = subprocess.Popen(
        [*prefix, str(bindir / "postgres"), "-D", str(data), "-p", str(port),
         "-c", "listen_addresses=127.0.0.1", "-c", f"unix_socket_directories={data.parent}",
         "-c", "fsync=off", "-c", "max_connections=60"],
        stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
    )  # fmt: skip
    deadline = time.monotonic() + 30
    while time.monotonic() < deadline:
        if proc.poll() is not None:
            raise RuntimeError(f"postgres exited with {proc.returncode}")
        with socket.socket() as s:
            if s.connect_ex(("127.0.0.1", port)) == 0:
                time.sleep(0.2)
                return proc
        time.sleep(0.1)
    proc.kill()
    raise RuntimeError("postgres did not start listening")


def start_cluster() -> Iterator[Cluster]:
    bindir = _bindir()
    if bindir is None:
        pytest.skip("PostgreSQL is not installed here (.ci/run installs Debian's postgresql)")
    try:
        import psycopg  # noqa: F401
    except ImportError:
        pytest.skip("psycopg is not installed")
    prefix, owner = _as_user()
    root = Path(tempfile.mkdtemp(prefix="sift-pg-"))
    if owner:
        shutil.chown(root, owner)
    subprocess.run(
        [*prefix, str(bindir / "initdb"), "-D", str(root / "data"), "-U", USER,
         "--auth=trust", "-E", "UTF8", "--no-sync"],
        check=True, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
    )  # fmt: skip
    port = _free_port()
    cluster = Cluster(root, port, _postgres(prefix, bindir, root / "data", port), bindir)
    try:
        yield cluster
    finally:
        cluster.stop()
        shutil.rmtree(root, ignore_errors=True)
