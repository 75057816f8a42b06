"""Run a Python snippet inside a fresh network namespace, where nothing can leave the machine.

A test that makes sift connect to an address outside 127.0.0.0/8 and ::1 runs its snippet
here: `unshare --net` (as root) gives it a namespace with only `lo`, which is brought up and
given the addresses the test asks for; `hosts` (name → address) replaces /etc/hosts inside a
private mount namespace, so curl's own resolver answers without DNS. There is no route out,
so a mistake can only fail, never send a packet off the machine.

The snippet prints one JSON line last; `run_json` returns it decoded.
"""

from __future__ import annotations

import functools
import json
import os
import shlex
import shutil
import subprocess
import sys
import tempfile
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

import pytest

REPO = Path(__file__).resolve().parents[2]


@functools.cache
def unavailable() -> str | None:
    """Why network namespaces cannot be used here, or None when they can."""
    if not hasattr(os, "geteuid") or os.geteuid() != 0:
        return "network namespaces need root"
    for tool in ("unshare", "ip", "mount"):
        if shutil.which(tool) is None:
            return f"`{tool}` is not installed"
    probe = subprocess.run(
        ["unshare", "--net", "--mount", "--", "ip", "link", "set", "lo", "up"],
        capture_output=True,
        text=True,
        timeout=30,
    )
    if probe.returncode != 0:
        return f"unshare --net failed: {probe.stderr.strip()[:200]}"
    return None


def require_netns() -> None:
    """Skip the calling test, with the reason, where namespaces are unavailable."""
    reason = unavailable()
    if reason is not None:
        pytest.skip(reason)


def run(
    code: str,
    *,
    addresses: Sequence[str] = (),
    hosts: Mapping[str, str] | None = None,
    timeout: float = 60,
) -> subprocess.CompletedProcess[str]:
    """Run `code` with this interpreter in a new network (and mount) namespace.

    Args:
        code: the Python source to run; the repository is on its path.
        addresses: IPv4/IPv6 addresses to add to `lo` (as /32 or /128).
        hosts: name → address lines for the namespace's /etc/hosts.
        timeout: seconds before the child is killed.
    """
    with tempfile.TemporaryDirectory(prefix="sift-netns-") as tmp:
        script = Path(tmp) / "snippet.py"
        script.write_text(code)
        setup = ["ip link set lo up"]
        for addr in addresses:
            plen = 128 if ":" in addr else 32
            nodad = " nodad" if ":" in addr else ""
            setup.append(f"ip addr add {shlex.quote(addr)}/{plen} dev lo{nodad}")
        if hosts is not None:
            hosts_file = Path(tmp) / "hosts"
            lines = ["127.0.0.1 localhost", "::1 localhost"]
            lines += [f"{ip} {name}" for name, ip in hosts.items()]
            hosts_file.write_text("\n".join(lines) + "\n")
            setup.append(f"mount --bind {shlex.quote(str(hosts_file))} /etc/hosts")
        setup.append(f"exec {shlex.quote(sys.executable)} {shlex.quote(str(script))}")
        env = {**os.environ, "PYTHONPATH": str(REPO)}
        for proxy in ("http_proxy", "https_proxy", "all_proxy", "no_proxy"):
            env.pop(proxy, None)
            env.pop(proxy.upper(), None)
        return subprocess.run(
            ["unshare", "--net", "--mount", "--", "sh", "-ec", "\n".join(setup)],
            capture_output=True,
            text=True,
            timeout=timeout,
            cwd=REPO,
            env=env,
        )


def run_json(code: str, **kwargs: Any) -> Any:
    """Run `code` (see `run`) and decode the JSON line it printed last."""
    proc = run(code, **kwargs)
    lines = proc.stdout.strip().splitlines()
    if proc.returncode != 0 or not lines:
        raise AssertionError(
            f"netns snippet failed (exit {proc.returncode}):\n{proc.stdout}\n{proc.stderr}"
        )
    return json.loads(lines[-1])
