"""The browser's guarded proxy on its own (no browser needed): every request of a client
connection is checked, and refusals are counted by host and reason."""

from __future__ import annotations

import asyncio
import contextlib

from sift.browser.proxy import GuardedProxy
from sift.fetch.guard import Guard
from tests.support.browser import Sentinel


async def _exchange(port: int, *requests: bytes) -> bytes:
    """Send each request on one connection once the answer to the one before it came (as a
    browser reuses a kept-alive connection); what comes back until the proxy closes it."""
    reader, writer = await asyncio.open_connection("127.0.0.1", port)
    got = b""
    try:
        for i, request in enumerate(requests):
            if i:
                got += await asyncio.wait_for(reader.readuntil(b"first page"), 5)
            writer.write(request)
            await writer.drain()
        with contextlib.suppress(TimeoutError):
            while chunk := await asyncio.wait_for(reader.read(65536), 5):
                got += chunk
            return got
        return got + b"<still open>"
    except (ConnectionError, asyncio.IncompleteReadError):
        return got
    finally:
        writer.close()


async def _keep_alive_server(seen: list[str]) -> asyncio.Server:
    """An upstream that ignores `Connection: close`: it answers every request it reads on a
    connection (as a hostile or careless server may)."""

    async def serve(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        with contextlib.suppress(OSError, asyncio.IncompleteReadError):
            while True:
                head = await reader.readuntil(b"\r\n\r\n")
                seen.append(head.split(b"\r\n", 1)[0].decode())
                writer.write(b"HTTP/1.1 200 OK\r\nContent-Length: 10\r\n\r\nfirst page")
                await writer.drain()
        writer.close()

    return await asyncio.start_server(serve, "127.0.0.1", 0)


def test_a_kept_alive_connection_never_carries_a_second_request_unchecked():
    """Two requests on one client connection, the second naming a refused host: it never
    reaches the first host's server (nor the refused one), and alone it is refused."""
    sentinel = Sentinel()
    guard = Guard(["127.0.0.1/32"], [])
    second = f"http://{sentinel.netloc}/second"
    seen: list[str] = []

    async def main() -> tuple[bytes, bytes, list[str]]:
        upstream = await _keep_alive_server(seen)
        first = f"127.0.0.1:{upstream.sockets[0].getsockname()[1]}"
        proxy = GuardedProxy(guard.address_for, 10_000_000)
        port = await proxy.start()
        try:
            kept = await _exchange(
                port,
                f"GET http://{first}/first HTTP/1.1\r\nHost: {first}\r\n\r\n".encode(),
                f"GET {second} HTTP/1.1\r\nHost: {sentinel.netloc}\r\n\r\n".encode(),
            )
            alone = await _exchange(port, f"GET {second} HTTP/1.1\r\nHost: x\r\n\r\n".encode())
            return kept, alone, proxy.blocked
        finally:
            await proxy.close()
            upstream.close()

    try:
        kept, alone, blocked = asyncio.run(main())
    finally:
        sentinel.close()
    assert b"first page" in kept and not kept.endswith(b"<still open>")
    assert seen == ["GET /first HTTP/1.1"] and sentinel.connections == 0
    assert alone.startswith(b"HTTP/1.1 403") and b"X-Sift-Blocked: 1" in alone
    assert blocked == [f"{sentinel.netloc} (loopback address 127.0.0.2)"]
