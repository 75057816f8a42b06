"""`sift mcp` through the `mcp` SDK's own client: over stdio (the client spawns `python -m sift
mcp`) and over streamable HTTP (`sift mcp --listen` as a child process), both in front of a real
sift on loopback."""

from __future__ import annotations

import os
import re
import subprocess
import sys
import time
from typing import Any

import anyio
import httpx2
import pytest
from mcp import Client
from mcp.shared.exceptions import MCPError

from tests.support.mcp_client import (
    client_env,
    http_client,
    run,
    stdio_client,
    text,
)
from tests.support.pdfs import big_pdf
from tests.support.sift_server import FLEET_TOKEN

PDF = "application/pdf"
LONG_PAGES = 120
TOOLS = {"fetch", "read", "verify", "batch_fetch", "batch_status", "batch_result", "map", "crawl"}
TOOLS |= {"crawl_status"}


@pytest.fixture(scope="module")
def long_pdf() -> bytes:
    return big_pdf(LONG_PAGES)


def _leaves(exc: BaseException) -> list[BaseException]:
    if isinstance(exc, BaseExceptionGroup):
        return [leaf for e in exc.exceptions for leaf in _leaves(e)]
    return [exc]


async def tour(client: Client, origin: Any, long_pdf: bytes) -> None:
    """What every transport must do: list tools, fetch, map → pages, a blocked URL."""
    tools = {t.name: t for t in (await client.list_tools()).tools}
    assert set(tools) == TOOLS
    description = tools["fetch"].description or ""
    assert "pages" in description and "grep" in description
    assert {"url", "pages", "grep", "question", "max_chars", "raw", "jq"} <= set(
        tools["fetch"].input_schema["properties"]
    )

    r = await client.call_tool("fetch", {"url": origin.url("/article")})
    assert not r.is_error, text(r)
    assert len(text(r)) > 200

    origin.set("/mcp-long.pdf", long_pdf, PDF)
    r = await client.call_tool("fetch", {"url": origin.url("/mcp-long.pdf")})
    assert not r.is_error, text(r)
    mapped = text(r)
    assert f"pages {LONG_PAGES}" in mapped and 'pages="a-b"' in mapped
    assert re.search(r"- Chapter 2 \(p\. 51\)", mapped)
    r = await client.call_tool("fetch", {"url": origin.url("/mcp-long.pdf"), "pages": "51-52"})
    assert not r.is_error, text(r)
    assert "--- page 51 ---" in text(r) and "marker-52." in text(r)
    assert "marker-53." not in text(r)
    r = await client.call_tool(
        "fetch", {"url": origin.url("/mcp-long.pdf"), "grep": r"marker-99\b"}
    )
    assert not r.is_error and "p. 99: " in text(r)

    r = await client.call_tool("fetch", {"url": "http://10.0.0.1/"})
    assert r.is_error
    assert "blocked: private address 10.0.0.1" in text(r)  # the SDK prefixes the tool's name
    # a wrongly typed argument is one line naming it, never the validator's dump
    r = await client.call_tool("fetch", {"url": origin.url("/article"), "max_chars": "many"})
    assert r.is_error and "\n" not in text(r), text(r)  # (`pages` as a number is a page)
    assert "`max_chars`: Input should be a valid integer" in text(r)
    assert "pydantic" not in text(r) and "validation error" not in text(r)


def test_stdio_tools_fetch_map_pages_and_errors(sift_small, origin, long_pdf):
    run(stdio_client(sift_small.url), lambda c: tour(c, origin, long_pdf))


def test_http_tools_with_the_clients_own_token(sift_small, mcp_http, origin, long_pdf):
    run(http_client(mcp_http, FLEET_TOKEN), lambda c: tour(c, origin, long_pdf))


def test_http_without_a_token_is_refused(mcp_http):
    body = {"jsonrpc": "2.0", "id": 1, "method": "tools/list"}
    accept = {"Accept": "application/json, text/event-stream"}
    r = httpx2.post(mcp_http, json=body, headers=accept, trust_env=False)
    assert r.status_code == 401 and "Bearer" in r.json()["error"]

    async def refused() -> None:
        async with http_client(mcp_http, None):
            pytest.fail("a client without a token got a session")

    # The SDK's client cannot even start a session; its error may come in an exception group.
    with pytest.raises((MCPError, BaseExceptionGroup)) as info:
        anyio.run(refused)
    assert any(isinstance(e, MCPError) for e in _leaves(info.value)), info.value


def test_http_with_an_unknown_token_fails_at_initialize(mcp_http):
    body = {"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {}}
    accept = {"Accept": "application/json, text/event-stream"}
    r = httpx2.post(
        mcp_http,
        json=body,
        trust_env=False,
        headers={**accept, "Authorization": "Bearer not-a-sift-token"},
    )
    assert r.status_code == 401 and r.json() == {"success": False, "error": "unauthorized"}

    async def refused() -> None:
        async with http_client(mcp_http, "not-a-sift-token"):
            pytest.fail("a client with an unknown token got a session")

    with pytest.raises((MCPError, BaseExceptionGroup)) as info:
        anyio.run(refused)
    assert any(isinstance(e, MCPError) for e in _leaves(info.value)), info.value


def test_stdio_batch_fetch_status_result(sift_small, origin, tmp_path):
    """Also: with no $SIFT_TOKEN, the token comes from the state directory, as for the CLI."""
    (tmp_path / "sift").mkdir()
    (tmp_path / "sift" / "token").write_text(FLEET_TOKEN + "\n")

    async def scenario(client: Client) -> None:
        r = await client.call_tool("batch_fetch", {"urls": [origin.url("/article")]})
        assert not r.is_error, text(r)
        job = r.structured_content
        assert job["job_id"]
        deadline = time.monotonic() + 60
        while True:
            r = await client.call_tool("batch_status", {"job_id": job["job_id"]})
            assert not r.is_error, text(r)
            if r.structured_content["status"] not in ("queued", "running"):
                break
            assert time.monotonic() < deadline
            await anyio.sleep(0.2)
        assert r.structured_content["status"] == "done"
        r = await client.call_tool("batch_result", {"job_id": job["job_id"], "idx": 0})
        assert not r.is_error and len(text(r)) > 200
        r = await client.call_tool("batch_status", {"job_id": "no-such-job"})
        assert r.is_error

    run(stdio_client(sift_small.url, token="", state_home=tmp_path), scenario)


def test_stdio_without_a_server_says_so(origin):
    async def scenario(client: Client) -> None:
        r = await client.call_tool("fetch", {"url": origin.url("/article")})
        assert r.is_error
        assert "no sift server answers at " + origin.refused_url("").rstrip("/") in text(r)
        assert "sift serve" in text(r)

    run(stdio_client(origin.refused_url("").rstrip("/")), scenario)


@pytest.mark.parametrize("token", ["", "not-a-sift-token"])
def test_stdio_with_a_token_sift_refuses_fails_at_initialize(sift_small, tmp_path, token):
    """Over stdio the token is the server's own (`$SIFT_TOKEN` or the state directory), not
    the client's: one sift refuses ends `sift mcp` before `initialize` is answered, and its
    stderr (the MCP client's log) says where the token comes from."""
    log = tmp_path / "mcp-stderr.log"

    async def refused() -> None:
        with log.open("w") as errlog:
            async with stdio_client(sift_small.url, token=token, errlog=errlog):
                pytest.fail("a stdio server with a refused token answered initialize")

    with pytest.raises((MCPError, BaseExceptionGroup)) as info:
        anyio.run(refused)
    assert any(isinstance(e, MCPError) for e in _leaves(info.value)), info.value
    said = log.read_text()
    assert "unauthorized" in said and "SIFT_TOKEN" in said, said


def test_listen_that_is_not_an_address_stops_at_once():
    r = subprocess.run(
        [sys.executable, "-m", "sift", "mcp", "--listen", "127.0.0.1:99999"],
        env={**os.environ, **client_env()},
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert r.returncode == 2 and "--listen: port 99999 is out of range" in r.stderr
