"""A real `sift serve` process with a generated TOML config in a temp dir.

Each scenario starts its own, so caches, gates and peak memory are the scenario's alone. It
listens on 127.0.0.1:0 and the port is read from its start-up banner (no port race); its
log goes to a file (a pipe nobody drains would stall it under load).
"""

from __future__ import annotations

import hashlib
import os
import re
import secrets
import signal
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

from bench.client import Client
from bench.procmem import peak_rss_mb

_BANNER = re.compile(r"sift is listening on http://127\.0\.0\.1:(\d+)")
START_TIMEOUT = 60.0


def toml(data: dict[str, Any]) -> str:
    """The few TOML shapes a sift config needs: scalars, lists, tables, arrays of tables."""

    def value(v: Any) -> str:
        if isinstance(v, bool):
            return "true" if v else "false"
        if isinstance(v, int | float):
            return repr(v)
        if isinstance(v, str):
            return '"' + v.replace("\\", "\\\\").replace('"', '\\"') + '"'
        if isinstance(v, list):
            return "[" + ", ".join(value(x) for x in v) + "]"
        raise TypeError(f"no TOML for {type(v).__name__}")

    top = [
        f"{k} = {value(v)}"
        for k, v in data.items()
        if not isinstance(v, dict | list)
        or (isinstance(v, list) and not (v and isinstance(v[0], dict)))
    ]
    out = ["\n".join(top)]
    for k, v in data.items():
        if isinstance(v, dict):
            out.append(f"[{k}]\n" + "\n".join(f"{kk} = {value(vv)}" for kk, vv in v.items()))
        elif isinstance(v, list) and v and isinstance(v[0], dict):
            for item in v:
                pairs = "\n".join(f"{kk} = {value(vv)}" for kk, vv in item.items())
                out.append(f"[[{k}]]\n{pairs}")
    return "\n\n".join(out) + "\n"


def merge(base: dict[str, Any], extra: dict[str, Any]) -> dict[str, Any]:
    out = dict(base)
    for k, v in extra.items():
        out[k] = {**out[k], **v} if isinstance(v, dict) and isinstance(out.get(k), dict) else v
    return out


class SiftProcess:
    """`sift serve` in its own process; `start()`, `client()`, `stop()` (or `with`)."""

    def __init__(
        self, workdir: Path, overrides: dict[str, Any] | None = None, callers: int = 1
    ) -> None:
        self.dir = workdir
        self.dir.mkdir(parents=True, exist_ok=True)
        self.tokens = [f"bench{i}-" + secrets.token_urlsafe(16) for i in range(callers)]
        self.token = self.tokens[0]
        cfg: dict[str, Any] = {
            "listen": "127.0.0.1:0",
            "state_dir": str(self.dir / "state"),
            "guard": {"allow_prefixes": ["127.0.0.0/8"]},
            "render": {"enabled": False},  # static figures; the render scenario turns it on
            "caller": [
                {
                    "name": f"bench{i}",
                    "class": "fleet",
                    "token_sha256": hashlib.sha256(t.encode()).hexdigest(),
                }
                for i, t in enumerate(self.tokens)
            ],
        }
        self.config = merge(cfg, overrides or {})
        self.config_path = self.dir / "sift.toml"
        self.config_path.write_text(toml(self.config))
        self.log_path = self.dir / "sift.log"
        self.proc: subprocess.Popen[bytes] | None = None
        self.port = 0
        self.peak_rss_mb = 0.0

    @property
    def pid(self) -> int:
        assert self.proc is not None
        return self.proc.pid

    def start(self) -> SiftProcess:
        env = {k: v for k, v in os.environ.items() if not k.startswith("SIFT_")}
        env = {k: v for k, v in env.items() if "proxy" not in k.lower()}
        with open(self.log_path, "wb") as log:
            self.proc = subprocess.Popen(
                [sys.executable, "-m", "sift", "--config", str(self.config_path), "serve"],
                stdin=subprocess.DEVNULL,
                stdout=log,
                stderr=log,
                env=env,
            )
        deadline = time.monotonic() + START_TIMEOUT
        while time.monotonic() < deadline:
            if self.proc.poll() is not None:
                raise RuntimeError(f"sift serve exited {self.proc.returncode}:\n{self.log_tail()}")
            m = _BANNER.search(self.log_path.read_text(errors="replace"))
            if m:
                self.port = int(m.group(1))
                if self._healthy():
                    return self
            time.sleep(0.05)
        self.stop()
        raise RuntimeError(f"sift serve not healthy in {START_TIMEOUT:.0f} s:\n{self.log_tail()}")

    def _healthy(self) -> bool:
        c = Client(self.port, timeout=2)
        try:
            return c.get("/healthz").status == 200
        except OSError:
            return False
        finally:
            c.close()

    def client(self, timeout: float = 180) -> Client:
        return Client(self.port, self.token, timeout)

    def url(self, path: str = "/") -> str:
        return f"http://127.0.0.1:{self.port}{path}"

    def log_tail(self, lines: int = 20) -> str:
        try:
            return "\n".join(self.log_path.read_text(errors="replace").splitlines()[-lines:])
        except OSError:
            return ""

    def errors_logged(self) -> list[str]:
        """Log lines at ERROR level: a bench run that triggers one found a bug."""
        try:
            text = self.log_path.read_text(errors="replace")
        except OSError:
            return []
        return [line for line in text.splitlines() if '"level": "error"' in line]

    def stop(self) -> None:
        """SIGTERM (sift drains and stops its children), then SIGKILL after 30 s."""
        if self.proc is None:
            return
        if self.proc.poll() is None:
            self.peak_rss_mb = peak_rss_mb(self.proc.pid)
            self.proc.send_signal(signal.SIGTERM)
            try:
                self.proc.wait(30)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait(10)

    def __enter__(self) -> SiftProcess:
        return self.start()

    def __exit__(self, *_exc: object) -> None:
        self.stop()
