"""The tool surface fits the client (issue 36, item 4), through the SDK's real client: the tools
a client sees and may call (`sift mcp --tools` / `--exclude-tools`, `[mcp] tools` /
`exclude_tools`, `?tools=` / `?exclude_tools=` on `--listen`'s URL), and the default
`max_tokens` chosen from the client's `clientInfo.name` (`[mcp] client_caps` over sift's
table), on both transports and both eras of the protocol."""

from __future__ import annotations

import functools
import os
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

import anyio
import httpx2
import pytest
from mcp import Client
from mcp.types import Implementation

from sift.documents.tokens import count
from tests.support.mcp_client import REPO, client_env, http_client, mcp_listen, run, stdio_client
from tests.support.mcp_client import text as text_of
from tests.support.sift_server import FLEET_TOKEN, SiftServer

ALL = {"fetch", "read", "verify", "batch_fetch", "batch_status", "batch_result", "map", "crawl"}
ALL |= {"crawl_status"}
WORDS = ["harbour", "lantern", "orchard", "quarry", "ribbon", "saddle", "thimble", "velvet"]


def long_page(paragraphs: int = 400) -> str:
    """An article of about 70,000 characters: over every client's default budget."""
    body = "".join(
        f"<p>Paragraph {i}: "
        + " ".join(WORDS[(i + j) % len(WORDS)] + str(j) for j in range(24))
        + ".</p>\n"
        for i in range(paragraphs)
    )
    head = "<html><head><title>Long</title></head><body><article><h1>Long</h1>"
    return f"{head}{body}</article></body></html>"


def named(name: str) -> Implementation:
    return Implementation(name=name, version="1.0")


async def listed(client: Client) -> set[str]:
    return {t.name for t in (await client.list_tools()).tools}


async def unknown_alike(client: Client, hidden: str) -> None:
    """A hidden tool answers exactly as a tool sift does not have."""
    r = await client.call_tool(hidden, {"url": "https://example.com/"})
    ghost = await client.call_tool("no_such_tool", {"url": "https://example.com/"})
    assert r.is_error and ghost.is_error
    assert text_of(r) == text_of(ghost).replace("no_such_tool", hidden)


def test_tools_and_exclude_tools_choose_what_a_stdio_client_sees(sift):
    async def only(client: Client) -> None:
        assert await listed(client) == {"fetch", "read"}
        await unknown_alike(client, "map")
        await unknown_alike(client, "crawl")

    async def but(client: Client) -> None:
        assert await listed(client) == ALL - {"crawl", "crawl_status", "batch_fetch"}
        await unknown_alike(client, "batch_fetch")

    async def coding(client: Client) -> None:
        assert await listed(client) == {"fetch", "read"}  # `search`: only where sift searches

    run(stdio_client(sift.url, args=["--tools", "fetch, read"]), only)
    run(stdio_client(sift.url, args=["--exclude-tools", "crawl,crawl_status,batch_fetch"]), but)
    run(stdio_client(sift.url, args=["--tools", "coding"]), coding)


def test_the_coding_preset_with_search_and_a_config_that_excludes(make_sift, searx, tmp_path):
    sift = make_sift({"search": {"searxng_url": searx.url}})
    cfg = tmp_path / "mcp.toml"
    cfg.write_text('[mcp]\ntools = ["coding", "verify"]\nexclude_tools = ["read"]\n')

    async def scenario(client: Client) -> None:
        assert await listed(client) == {"fetch", "search", "verify"}
        await unknown_alike(client, "read")

    run(stdio_client(sift.url, args=["--config", str(cfg)]), scenario)
    # a flag replaces its config key: `--tools` here, and the config's exclusion still holds
    run(stdio_client(sift.url, args=["--config", str(cfg), "--tools", "read,map"]), _only_map)


async def _only_map(client: Client) -> None:
    assert await listed(client) == {"map"}


def test_the_url_narrows_what_an_http_client_sees(sift, tmp_path):
    cfg = tmp_path / "mcp.toml"
    cfg.write_text('[mcp]\nexclude_tools = ["crawl"]\n')

    async def main(url: str) -> None:
        async with http_client(url, FLEET_TOKEN) as every:
            assert await listed(every) == ALL - {"crawl"}
            await unknown_alike(every, "crawl")
        async with http_client(f"{url}?tools=fetch,read,crawl", FLEET_TOKEN) as few:
            assert await listed(few) == {"fetch", "read"}  # the URL never widens the server's
            await unknown_alike(few, "map")
        async with http_client(f"{url}?exclude_tools=read,verify", FLEET_TOKEN) as fewer:
            assert await listed(fewer) == ALL - {"crawl", "read", "verify"}
            await unknown_alike(fewer, "verify")
        async with http_client(f"{url}?tools=coding", FLEET_TOKEN, mode="legacy") as legacy:
            assert await listed(legacy) == {"fetch", "read"}
            await unknown_alike(legacy, "map")

    with mcp_listen(sift.url, tmp_path / "mcp.log", config=cfg) as url:
        anyio.run(main, url)


def test_a_url_naming_no_tool_is_refused_in_sifts_error_shape(sift, tmp_path):
    init = {"jsonrpc": "2.0", "id": 1, "method": "tools/list", "params": {}}
    accept = {"Accept": "application/json, text/event-stream"}
    bearer = {"Authorization": f"Bearer {FLEET_TOKEN}", **accept}
    listen = mcp_listen(sift.url, tmp_path / "mcp.log", args=["--tools", "fetch,read"])
    with listen as url, httpx2.Client(trust_env=False, timeout=30) as http:
        r = http.post(f"{url}?tools=fetch,nope", json=init, headers=bearer)
        assert r.status_code == 400
        said = r.json()
        assert said["success"] is False and "'nope'" in said["error"]
        assert "fetch, read, verify" in said["error"] and "hint" in said
        r = http.post(f"{url}?tools=map", json=init, headers=bearer)  # not offered here
        assert r.status_code == 400 and "leave no tool" in r.json()["error"]
        r = http.post(f"{url}?exclude_tools=fetch,read", json=init, headers=bearer)
        assert r.status_code == 400
        r = http.post(f"{url}?tools=nope", json=init, headers=accept)  # no token: 401 first
        assert r.status_code == 401


@pytest.mark.parametrize(
    ("flags", "says"),
    [
        (["--tools", "fetch,nope"], "--tools: no tool is named 'nope'; the tools are search, "),
        (["--exclude-tools", "crawl,nope"], "--exclude-tools: no tool is named 'nope'"),
        (["--tools", ""], "--tools: names no tool"),
        (["--tools", " , "], "--tools: names no tool"),
        (["--tools", "fetch", "--exclude-tools", "fetch"], "leave no tool"),
        (["--tools", "Fetch"], "no tool is named 'Fetch'"),
    ],
)
def test_bad_tool_lists_on_the_command_line_exit_2_naming_the_tools(flags, says):
    done = _sift_mcp(*flags)
    assert done.returncode == 2, done.stderr
    assert done.stderr.startswith("sift: ") and says in done.stderr
    assert done.stderr.count("\n") == 1 and "Traceback" not in done.stderr
    if "no tool is named" in says:
        assert "crawl_status" in done.stderr and "coding" in done.stderr


@pytest.mark.parametrize(
    ("toml", "says"),
    [
        ('[mcp]\ntools = ["fetch", "nope"]\n', "config: `mcp.tools`: no tool is named 'nope'"),
        ('[mcp]\nexclude_tools = ["nope"]\n', "config: `mcp.exclude_tools`: no tool is named"),
        ('[mcp]\nclient_caps = {"claude-code" = -1}\n', "`mcp.client_caps` of 'claude-code'"),
        ('[mcp]\nclient_caps = {"a" = 50}\n', "`mcp.client_caps` of 'a' must be 0 or 100"),
        ('[mcp]\nclient_caps = {"claude-code" = "many"}\n', "mcp.client_caps"),
        ("[mcp]\ntool = []\n", "tool"),
    ],
)
def test_bad_mcp_config_exits_2_naming_the_key(tmp_path, toml, says):
    cfg = tmp_path / "bad.toml"
    cfg.write_text(toml)
    done = _sift_mcp("--config", str(cfg))
    assert done.returncode == 2, done.stderr
    assert says in done.stderr and "Traceback" not in done.stderr


def _sift_mcp(*flags: str) -> subprocess.CompletedProcess[str]:
    """`sift mcp FLAGS` with no server: a bad list must end it before anything is asked."""
    return subprocess.run(
        [sys.executable, "-m", "sift", "mcp", *flags, "--server", "http://127.0.0.1:9"],
        env={**os.environ, **client_env()},
        cwd=str(REPO),
        capture_output=True,
        text=True,
        timeout=60,
        stdin=subprocess.DEVNULL,
    )


@pytest.fixture
def budgets(make_sift: Callable[..., SiftServer], origin: Any, tmp_path: Path) -> dict[str, Any]:
    """A sift whose answers run to 200,000 characters, a long page, and a config that gives
    the client `test-agent` 300 tokens and takes Claude Code's default away from one name."""
    sift = make_sift({"out_cap": 200_000})
    origin.set("/long-article", long_page())
    cfg = tmp_path / "caps.toml"
    cfg.write_text('[mcp]\nclient_caps = {"Test-Agent" = 300, "codex" = 0}\n')
    return {"sift": sift, "url": origin.url("/long-article"), "config": cfg}


async def fetched(client: Client, url: str, **arguments: Any) -> str:
    r = await client.call_tool("fetch", {"url": url, **arguments})
    assert not r.is_error, text_of(r)
    return text_of(r)


async def budget_tour(client: Client, url: str, name: str) -> None:
    """What a client's name decides: its default budget, never over an explicit one."""
    said = await fetched(client, url)
    if name == "test-agent":
        assert count(said) <= 360 and "[continue: call fetch again with start_index=" in said
        wider = await fetched(client, url, max_tokens=900)  # an explicit budget wins
        assert 600 < count(wider) <= 960
        r = await client.call_tool("read", {"urls": [url]})
        assert not r.is_error and r.structured_content["max_tokens"] == 300
    elif name == "claude-code":
        assert 6_000 < count(said) <= 8_060 and "start_index=" in said
    else:  # an unknown client, or a name whose default the config took away: today's answer
        assert count(said) > 14_000 and "[continue:" not in said
        r = await client.call_tool("read", {"urls": [url]})
        assert not r.is_error and r.structured_content["max_tokens"] == 8_000


@pytest.mark.parametrize("mode", ["legacy", "auto"])
def test_a_stdio_clients_name_chooses_its_default_budget(budgets, mode):
    sift, url, cfg = budgets["sift"], budgets["url"], budgets["config"]
    for name in ("test-agent", "claude-code", "codex", "someone-else"):
        client = stdio_client(
            sift.url, args=["--config", str(cfg)], client_info=named(name), mode=mode
        )
        run(client, functools.partial(budget_tour, url=url, name=name))


@pytest.mark.parametrize("mode", ["legacy", "auto"])
def test_an_http_clients_name_chooses_its_default_budget(budgets, mode, tmp_path):
    """Over stateless HTTP a handshake-era client names itself only in `initialize`: its
    name is remembered for its token."""
    sift, url, cfg = budgets["sift"], budgets["url"], budgets["config"]

    async def main(endpoint: str) -> None:
        for name in ("test-agent", "claude-code", "someone-else"):
            async with http_client(
                endpoint, FLEET_TOKEN, client_info=named(name), mode=mode
            ) as client:
                await budget_tour(client, url, name)

    with mcp_listen(sift.url, tmp_path / "mcp.log", config=cfg) as endpoint:
        anyio.run(main, endpoint)


def test_a_clients_cap_past_a_reads_bounds_is_held_to_them(budgets, tmp_path):
    """`[mcp] client_caps` may give `fetch` up to 10,000,000 tokens; a read of the same
    client, given no `max_tokens`, gets the most a read takes (200,000), not a refusal."""
    sift, url = budgets["sift"], budgets["url"]
    cfg = tmp_path / "wide.toml"
    cfg.write_text('[mcp]\nclient_caps = {"wide-agent" = 300000}\n')

    async def tour(client: Client) -> None:
        r = await client.call_tool("read", {"urls": [url]})
        assert not r.is_error, text_of(r)
        assert r.structured_content["max_tokens"] == 200_000
        said = await fetched(client, url)  # fetch keeps the client's own cap
        assert "[continue:" not in said

    run(stdio_client(sift.url, args=["--config", str(cfg)], client_info=named("wide-agent")), tour)
