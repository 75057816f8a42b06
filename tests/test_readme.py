"""The README cannot rot: every fenced block that talks to sift is run against a real `sift
serve` on loopback, as a user would run it from the checkout on a fresh machine.

`sh` blocks run in `sh` (PATH without the venv, HOME holding sift's state, so the token file is
where the README says); `python` blocks run with the SDK and `$SIFT_TOKEN` set, as the README
tells the user to. Its addresses are replaced by the test server's (127.0.0.1:8731) and the
session origin's (https://example.com/); a block left with any other URL fails the test, so no
traffic leaves the machine. `toml` blocks must load as sift's config, `json` blocks must parse,
`dotenv` blocks must name sift's address. Blocks that build or start things (`make …`) or need
another program (`claude mcp add`) are listed in SKIP with the reason.
"""

from __future__ import annotations

import json
import re
import subprocess
import sys
from pathlib import Path

import pytest

from sift.core.config import loads
from tests.support.processes import free_port, wait_healthy

ROOT = Path(__file__).resolve().parent.parent
BLOCK = re.compile(r"^```(\w*)\n(.*?)^```", re.MULTILINE | re.DOTALL)
SKIP = {
    "make serve": "starts the service: the test's own `sift serve` stands in",
    "make test": "runs this suite",
    "make bench": "the benchmarks (minutes)",
    "claude mcp add": "needs Claude Code; the MCP tests run the `mcp` SDK's client",
}
README_SIFT = "127.0.0.1:8731"
README_PAGE = "https://example.com/"


def blocks() -> list[tuple[str, str]]:
    return [(m.group(1), m.group(2)) for m in BLOCK.finditer((ROOT / "README.md").read_text())]


def test_the_readme_has_the_blocks_this_test_runs():
    kinds = [k for k, _ in blocks()]
    assert kinds.count("python") >= 1 and kinds.count("sh") >= 3 and "toml" in kinds
    sdk = next(code for k, code in blocks() if k == "python")
    assert "api_url=" in sdk and "FIRECRAWL_API_URL" not in sdk  # built with api_url, and why
    assert "Hermes" in (ROOT / "README.md").read_text()


@pytest.fixture
def readme_sift(tmp_path, searx):
    """`sift serve` with the default state directory under a fresh HOME, search configured."""
    port = free_port()
    home = tmp_path / "home"
    home.mkdir()
    cfg = tmp_path / "sift.toml"
    cfg.write_text(
        f'listen = "127.0.0.1:{port}"\n[guard]\nallow_prefixes = ["127.0.0.0/8"]\n'
        f'[search]\nsearxng_url = "{searx.url}"\n'
    )
    env = {"PATH": "/usr/bin:/bin", "HOME": str(home), "SIFT_CONFIG": str(cfg)}
    proc = subprocess.Popen(
        [sys.executable, "-m", "sift", "serve"], env=env, stderr=subprocess.DEVNULL
    )
    try:
        wait_healthy(f"http://127.0.0.1:{port}", proc)
        yield port, env, (home / ".local/state/sift/token").read_text().strip()
    finally:
        proc.terminate()
        proc.wait(30)


def _localise(code: str, port: int, origin) -> str:
    code = code.replace(README_SIFT, f"127.0.0.1:{port}").replace(
        README_PAGE, origin.url("/article")
    )
    for url in re.findall(r"https?://[^\s\"')]+", code):
        assert url.startswith("http://127.0.0.1:"), f"a README block would reach {url}"
    return code


def test_every_readme_block_works(readme_sift, origin):
    port, env, token = readme_sift
    ran = 0
    for kind, code in blocks():
        if any(key in code for key in SKIP):
            continue
        if kind == "toml":
            loads(code)  # a bad key or value raises ConfigError naming it
            continue
        if kind == "json":
            json.loads(code)
            continue
        if kind == "nginx":  # no nginx here: its upstream must name sift's replicas
            assert "upstream" in code and "proxy_pass" in code and ":8731" in code
            continue
        if kind == "dotenv":
            assert f"FIRECRAWL_API_URL=http://{README_SIFT}" in code
            continue
        assert kind in ("sh", "python"), f"a README block of unknown kind {kind!r}"
        local = _localise(code, port, origin)
        if kind == "sh":
            run = ["sh", "-ec", local]
            extra = {}
        else:
            run = [sys.executable, "-c", local]
            extra = {"SIFT_TOKEN": token}
        out = subprocess.run(
            run, cwd=ROOT, capture_output=True, text=True, timeout=120, env={**env, **extra}
        )
        assert out.returncode == 0, f"README block failed:\n{code}\n--- stderr:\n{out.stderr}"
        assert out.stdout.strip(), f"README block printed nothing:\n{code}"
        ran += 1
    assert ran >= 3
