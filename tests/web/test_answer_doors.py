"""The site's own markdown, `if_none_match` and usage signals on the other doors: MCP `fetch`
and `map` through the `mcp` SDK's client on both transports (stdio: `python -m sift mcp`;
streamable HTTP: `sift mcp --listen`), and `sift fetch` as a real process."""

from __future__ import annotations

import json
import os
import socket
import subprocess
import sys

import anyio
import httpx2
from mcp import Client
from mcp.client.streamable_http import streamable_http_client

from tests.support.agent_site import AgentSite
from tests.support.mcp_client import client_env, run, stdio_client, text
from tests.support.processes import free_port
from tests.support.sift_server import FLEET_TOKEN
from tests.support.until import until


async def _tour(client: Client, site: AgentSite) -> None:
    tools = {t.name: t for t in (await client.list_tools()).tools}
    assert "if_none_match" in tools["fetch"].input_schema["properties"]

    r = await client.call_tool("fetch", {"url": site.url("/negotiated")})
    assert not r.is_error, text(r)
    said = text(r)
    assert "**Site markdown** of the guide." in said and "source: site-markdown" in said
    assert '"ai-train":"no"' in said  # the usage signals
    digest = said.rsplit("content_hash: ", 1)[1].split(";")[0]

    r = await client.call_tool("fetch", {"url": site.url("/negotiated"), "if_none_match": digest})
    assert not r.is_error and text(r).startswith("[unchanged")

    first = await client.call_tool("fetch", {"url": site.url("/changing")})
    digest = text(first).rsplit("content_hash: ", 1)[1].split(";")[0].rstrip("]")
    site.change()
    r = await client.call_tool("fetch", {"url": site.url("/changing"), "if_none_match": digest})
    assert f"[changes since {digest}:]" in text(r)
    assert "+Update 2: the orchid bloomed again." in text(r)

    r = await client.call_tool("map", {"url": site.url("/alternate")})
    assert not r.is_error and site.url("/llms.txt") in text(r)


def test_mcp_over_stdio(sift, site):
    run(stdio_client(sift.url), lambda client: _tour(client, site))


def test_mcp_over_streamable_http(sift, site, tmp_path):
    port = free_port()
    log = (tmp_path / "mcp.log").open("w")
    args = ["mcp", "--listen", f"127.0.0.1:{port}", "--server", sift.url]
    env = {**os.environ, **client_env()}  # no token of its own: each client sends one
    proc = subprocess.Popen([sys.executable, "-m", "sift", *args], stdout=log, stderr=log, env=env)

    async def main() -> None:
        headers = {"Authorization": f"Bearer {FLEET_TOKEN}"}
        async with httpx2.AsyncClient(headers=headers, trust_env=False, timeout=120) as http:
            url = f"http://127.0.0.1:{port}/mcp"
            async with Client(streamable_http_client(url, http_client=http)) as client:
                await _tour(client, site)

    try:
        until(lambda: _listening(port), "sift mcp --listen to start", timeout=30)
        anyio.run(main)
    finally:
        proc.terminate()
        proc.wait(10)
        log.close()


def _listening(port: int) -> bool:
    try:
        socket.create_connection(("127.0.0.1", port), timeout=1).close()
        return True
    except OSError:
        return False


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
