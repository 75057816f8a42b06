"""The `mcp` SDK's own client in front of a sift: `stdio_client` spawns `python -m sift mcp`
as the CLI would be run, `mcp_listen` runs `sift mcp --listen` and `http_client` talks to it,
`run` drives one scenario through a client, `text` reads a tool's answer. The fixtures
`sift_small` and `mcp_http` (a small-capped sift, `sift mcp --listen` in front of it) are
registered in tests/conftest.py."""

from __future__ import annotations

import os
import socket
import subprocess
import sys
from collections.abc import AsyncIterator, Awaitable, Callable, Iterator, Sequence
from contextlib import AbstractAsyncContextManager, asynccontextmanager, contextmanager
from pathlib import Path
from typing import Any

import anyio
import httpx2
import pytest
from mcp import Client
from mcp.client.stdio import StdioServerParameters
from mcp.client.stdio import stdio_client as stdio_transport
from mcp.client.streamable_http import streamable_http_client

from tests.support.sift_server import FLEET_TOKEN, SiftServer
from tests.support.until import until

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
    args: Sequence[str] = (),
    **options: Any,
) -> Client:
    """The SDK's client, spawning `python -m sift mcp` as the CLI would be run (with `args`
    after it; its stderr to `errlog`, a file, when given); `options` for the `Client`."""
    extra = {"XDG_STATE_HOME": str(state_home)} if state_home else {}
    params = StdioServerParameters(
        command=sys.executable,
        args=["-m", "sift", "mcp", *args],
        env=client_env(SIFT_URL=server_url, SIFT_TOKEN=token, **extra),
        cwd=str(REPO),
    )
    return Client(params if errlog is None else stdio_transport(params, errlog=errlog), **options)


def run(client: AbstractAsyncContextManager[Client], scenario: Scenario) -> None:
    async def main() -> None:
        async with client as entered:
            await scenario(entered)

    anyio.run(main)


def text(result: Any) -> str:
    return "".join(c.text for c in result.content if c.type == "text")


@contextmanager
def mcp_listen(
    server_url: str,
    log_path: Path,
    host: str = "127.0.0.1",
    config: Path | None = None,
    args: Sequence[str] = (),
) -> Iterator[str]:
    """`sift mcp --listen HOST:PORT` in front of `server_url` (with `--config` when given, and
    `args`); yields its /mcp URL."""
    with socket.socket() as s:
        s.bind((host, 0))
        port = s.getsockname()[1]
    options = ["--config", str(config)] if config is not None else []
    log = log_path.open("w")
    proc = subprocess.Popen(
        [
            sys.executable,
            "-m",
            "sift",
            *options,
            "mcp",
            "--listen",
            f"{host}:{port}",
            "--server",
            server_url,
            *args,
        ],
        env={**os.environ, **client_env(SIFT_TOKEN=FLEET_TOKEN)},  # never used over HTTP
        stdout=log,
        stderr=subprocess.STDOUT,
    )

    def listening() -> bool:
        try:
            socket.create_connection((host, port), timeout=1).close()
            return True
        except OSError:
            assert proc.poll() is None, log_path.read_text()
            return False

    try:
        until(listening, "sift mcp --listen to start", timeout=30, every=0.1)
        yield f"http://{host}:{port}/mcp"
    finally:
        proc.terminate()
        proc.wait(10)
        log.close()


@asynccontextmanager
async def http_client(url: str, token: str | None, **options: Any) -> AsyncIterator[Client]:
    """The SDK's client over streamable HTTP, sending `token` as its Bearer token."""
    headers = {"Authorization": f"Bearer {token}"} if token else {}
    async with (
        httpx2.AsyncClient(headers=headers, trust_env=False, timeout=120) as http,
        Client(streamable_http_client(url, http_client=http), **options) as client,
    ):
        yield client


@pytest.fixture
def sift_small(make_sift: Callable[..., SiftServer]) -> SiftServer:
    """sift with a 20k answer cap, so a 120-page PDF answers its map."""
    return make_sift({"out_cap": 20_000})


@pytest.fixture
def mcp_http(sift_small: SiftServer, tmp_path: Path) -> Iterator[str]:
    """`sift mcp --listen 127.0.0.1:PORT` in front of `sift_small`; yields its /mcp URL."""
    with mcp_listen(sift_small.url, tmp_path / "mcp-http.log") as url:
        yield url
