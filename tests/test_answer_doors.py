"""The site's own markdown, `if_none_match` and usage signals on the other doors: MCP `fetch`
and `map` through the `mcp` SDK's client (stdio: `python -m sift mcp`), and `sift fetch`
as a real process."""

from __future__ import annotations

import json
import os
import subprocess
import sys

from mcp import Client

from tests.support.agent_site import site_fixture  # noqa: F401
from tests.support.mcp_client import run, stdio_client, text
from tests.support.sift_server import FLEET_TOKEN


def test_mcp_fetch_and_map(sift, site):
    async def scenario(client: Client) -> None:
        tools = {t.name: t for t in (await client.list_tools()).tools}
        assert "if_none_match" in tools["fetch"].input_schema["properties"]

        r = await client.call_tool("fetch", {"url": site.url("/negotiated")})
        assert not r.is_error, text(r)
        said = text(r)
        assert "**Site markdown** of the guide." in said and "source: site-markdown" in said
        assert '"ai-train":"no"' in said  # the usage signals
        digest = said.rsplit("content_hash: ", 1)[1].split(";")[0]

        r = await client.call_tool(
            "fetch", {"url": site.url("/negotiated"), "if_none_match": digest}
        )
        assert not r.is_error and text(r).startswith("[unchanged")

        first = await client.call_tool("fetch", {"url": site.url("/changing")})
        digest = text(first).rsplit("content_hash: ", 1)[1].split(";")[0].rstrip("]")
        site.change()
        r = await client.call_tool("fetch", {"url": site.url("/changing"), "if_none_match": digest})
        assert f"[changes since {digest}:]" in text(r)
        assert "+Update 2: the orchid bloomed again." in text(r)

        r = await client.call_tool("map", {"url": site.url("/alternate")})
        assert not r.is_error and site.url("/llms.txt") in text(r)

    run(stdio_client(sift.url), scenario)


def _sift_fetch(server: str, *args: str) -> subprocess.CompletedProcess[str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith("SIFT_")}
    env |= {"SIFT_TOKEN": FLEET_TOKEN, "SIFT_CONFIG": ""}
    return subprocess.run(
        [sys.executable, "-m", "sift", "fetch", *args, "--server", server],
        capture_output=True,
        text=True,
        timeout=120,
        env=env,
    )


def test_cli_fetch(sift, site):
    out = _sift_fetch(sift.url, site.url("/alternate"), "--no-context")
    assert out.returncode == 0, out.stderr
    assert out.stdout.startswith("# Garden guide\n\n**Site markdown** of the guide.")

    out = _sift_fetch(sift.url, site.url("/changing"), "--json")
    env = json.loads(out.stdout)
    assert env["usage"]["content_signal"]["ai-train"] == "no"
    out = _sift_fetch(sift.url, site.url("/changing"), "--if-none-match", env["content_hash"])
    assert out.returncode == 0 and out.stdout == ""
    assert f"sift: unchanged (content_hash {env['content_hash']})" in out.stderr

    site.change()
    out = _sift_fetch(sift.url, site.url("/changing"), "--if-none-match", env["content_hash"])
    assert out.returncode == 0 and "Update 2: the orchid bloomed again." in out.stdout
    assert "sift: changed since that version:" in out.stderr
    assert "+Update 2: the orchid bloomed again." in out.stderr
