"""The `mcp` SDK's own client in front of a sift: `stdio_client` spawns `python -m sift mcp`
as the CLI would be run, `run` drives one scenario through it, `text` reads a tool's answer."""

from __future__ import annotations

import sys
from collections.abc import Awaitable, Callable
from contextlib import AbstractAsyncContextManager
from pathlib import Path
from typing import Any

import anyio
from mcp import Client
from mcp.client.stdio import StdioServerParameters
from mcp.client.stdio import stdio_client as stdio_transport

from tests.support.sift_server import FLEET_TOKEN

REPO = Path(__file__).resolve().parents[2]
Scenario = Callable[[Client], Awaitable[None]]


def client_env(**extra: str) -> dict[str, str]:
    """No config, and a state directory with no token file: only what the test gives counts."""
    empty = REPO / "tests" / "no-such-state-home"
    return {
        "SIFT_CONFIG": "",
        "SIFT_TOKEN": "",
        "SIFT_URL": "",
        "XDG_STATE_HOME": str(empty),
        **extra,
    }


def stdio_client(
    server_url: str,
    token: str = FLEET_TOKEN,
    state_home: Path | None = None,
    errlog: Any = None,
) -> Client:
    """The SDK's client, spawning `python -m sift mcp` as the CLI would be run (its stderr
    to `errlog`, a file, when given)."""
    extra = {"XDG_STATE_HOME": str(state_home)} if state_home else {}
    params = StdioServerParameters(
        command=sys.executable,
        args=["-m", "sift", "mcp"],
        env=client_env(SIFT_URL=server_url, SIFT_TOKEN=token, **extra),
        cwd=str(REPO),
    )
    return Client(params if errlog is None else stdio_transport(params, errlog=errlog))


def run(client: AbstractAsyncContextManager[Client], scenario: Scenario) -> None:
    async def main() -> None:
        async with client as entered:
            await scenario(entered)

    anyio.run(main)


def text(result: Any) -> str:
    return "".join(c.text for c in result.content if c.type == "text")
