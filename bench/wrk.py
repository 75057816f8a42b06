"""Throughput with `wrk` (C, epoll: not the bottleneck) where it is installed.

A POST with a JSON body needs a Lua script; it is written to the run's temp dir.
"""

from __future__ import annotations

import json
import re
import shutil
import subprocess
from pathlib import Path
from typing import Any

_RPS = re.compile(r"Requests/sec:\s+([\d.]+)")
_NON2XX = re.compile(r"Non-2xx or 3xx responses:\s+(\d+)")
_ERRORS = re.compile(r"Socket errors: connect (\d+), read (\d+), write (\d+), timeout (\d+)")


def available() -> bool:
    return shutil.which("wrk") is not None


def _lua(body: Any, token: str | None) -> str:
    lines = [
        'wrk.method = "POST"',
        f"wrk.body = {json.dumps(json.dumps(body))}",
        'wrk.headers["Content-Type"] = "application/json"',
    ]
    if token:
        lines.append(f'wrk.headers["Authorization"] = "Bearer {token}"')
    return "\n".join(lines) + "\n"


def post_rps(
    port: int,
    path: str,
    body: Any,
    token: str | None,
    *,
    concurrency: int,
    seconds: float,
    threads: int,
    workdir: Path,
) -> dict[str, float]:
    """Requests/s of POSTing `body` to `path`; raises when any answer is not 2xx."""
    script = workdir / "wrk-post.lua"
    script.write_text(_lua(body, token))
    out = subprocess.run(
        [
            "wrk",
            f"-t{threads}",
            f"-c{concurrency}",
            f"-d{seconds:g}s",
            "-s",
            str(script),
            f"http://127.0.0.1:{port}{path}",
        ],
        capture_output=True,
        text=True,
        timeout=seconds + 60,
        check=True,
    )
    m = _RPS.search(out.stdout)
    if m is None:
        raise RuntimeError(f"wrk said:\n{out.stdout}\n{out.stderr}")
    bad = _NON2XX.search(out.stdout)
    errors = _ERRORS.search(out.stdout)
    if bad or (errors and any(int(x) for x in errors.groups())):
        raise RuntimeError(f"wrk saw errors:\n{out.stdout}")
    return {"rps": float(m.group(1))}
