"""The official MCP conformance suite (`@modelcontextprotocol/conformance`, npm) against
`sift mcp --listen`, for the scenarios that apply to a server with sift's capabilities (tools,
resources with a template, logging; stateless streamable HTTP).

Not applicable, and why: `tools-call-*`, `resources-read-*`, `resources-templates-read`,
`prompts-get-*` and `json-schema-2020-12` call the suite's own fixture tools, resources and
prompts (`test_simple_text`, `test://static-text`…), which a real server does not have (the two
`tools-call-*` that "pass" only see the unknown-tool error); `completion-complete`,
`resources-subscribe`/`-unsubscribe`, `tools-call-sampling`/`-elicitation` and the elicitation
scenarios use capabilities sift does not declare; `server-sse-polling` and
`server-sse-multiple-streams` need sessions and resumable streams, and sift's HTTP transport is
stateless. Progress, logging during a call and resource reads are tested with sift's own tools
through the SDK's client (`tests/mcp/test_mcp_depth.py`). The suite's client sends no token, so a
loopback proxy adds sift's.
"""

from __future__ import annotations

import shutil
import subprocess
from pathlib import Path

import pytest

from tests.support.bearer_proxy import BearerProxy
from tests.support.mcp_client import mcp_listen
from tests.support.sift_server import FLEET_TOKEN

REPO = Path(__file__).resolve().parents[2]
SUITE = REPO / ".ci" / "mcp-conformance" / "node_modules" / ".bin" / "conformance"
APPLY = [
    "server-initialize",
    "ping",
    "tools-list",
    "logging-set-level",
    "resources-list",
    "prompts-list",
    "dns-rebinding-protection",
]

pytestmark = pytest.mark.skipif(
    not SUITE.exists() or shutil.which("node") is None,
    reason="the MCP conformance suite is not installed: .ci/run installs it "
    "(npm install --prefix .ci/mcp-conformance @modelcontextprotocol/conformance)",
)


def test_the_applicable_conformance_scenarios_pass(make_sift, tmp_path):
    sift = make_sift()
    with (
        mcp_listen(sift.url, tmp_path / "mcp.log") as url,
        BearerProxy(url, FLEET_TOKEN) as proxy,
    ):
        failed = {}
        for scenario in APPLY:
            run = subprocess.run(
                [str(SUITE), "server", "--url", proxy.url, "--scenario", scenario],
                capture_output=True,
                text=True,
                timeout=120,
                cwd=tmp_path,
            )
            if run.returncode != 0 or "0 failed" not in run.stdout:
                failed[scenario] = run.stdout[-2000:] + run.stderr[-1000:]
    assert not failed, failed
