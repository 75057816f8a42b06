"""The guarded forward proxy: the only way out for the browser.

Chromium is started with this proxy for everything (loopback included) and resolves no name
itself, so every request a page makes — the page, its subresources, redirects, XHR/fetch,
websockets — arrives here as `GET http://host:port/…` or `CONNECT host:port`. The proxy
applies sift's guard to the name and to every address it resolves to, then connects to
exactly the address it checked (so DNS rebinding cannot slip past it), as a fetch does.
A refused request is answered 403 (with `X-Sift-Blocked`) and counted by host and reason, so
the answer can say what the browser was not allowed to reach, however many times it tried.
Every request is checked: a plain-HTTP client connection carries one request (the answer
closes it), so a kept-alive connection never takes a second request to the first one's host.

One proxy serves one render (its own loopback port, given to that render's own browser
context), so what it counts is that render's.
It runs on the event loop: reading heads and copying bytes; names resolve on a thread.
"""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import Callable
from urllib.parse import urlsplit

from sift.core.errors import Blocked, SiftError

HEAD_LIMIT = 64 * 1024
HEAD_TIMEOUT = 10.0
BLOCKED_HEADER = "X-Sift-Blocked"
_HOP = {"proxy-connection", "proxy-authorization", "connection", "keep-alive"}
NAMED = 20  # refused hosts named in the warning; the rest are counted
KEPT = 1000  # refused hosts remembered
KEPT_PORTS = 100  # ports of one refused host remembered; the first few are named

# `host[:port]` → the checked address to connect to; raises Blocked (or another SiftError).
# Blocks (it resolves names). The service passes in sift's guard (`Guard.address_for`).
AddressFor = Callable[[str], tuple[str, int]]
# (scheme, host, port) → the header lines that sign a request there (`[identity]`): the
# service passes in sift's signer (`fetch/identity.py`), so the key stays in this process.
Sign = Callable[[str, str, int], list[str]]
_SIGNATURE = {"signature", "signature-input", "signature-agent"}  # sift's own when it signs


class GuardedProxy:
    """An HTTP forward proxy (absolute-form requests and CONNECT) on 127.0.0.1.

    Args:
        address_for: the rules of a fetch, applied to one `host:port`.
        max_bytes: bytes the browser may receive in all; past it connections are cut.
        sign: sift's identity: each plain-HTTP request signed for its authority (a CONNECT
            tunnel carries TLS the proxy cannot add to), or None.
    """

    def __init__(self, address_for: AddressFor, max_bytes: int, sign: Sign | None = None) -> None:
        self.address_for = address_for
        self.sign = sign
        self.max_bytes = max_bytes
        self.received = 0
        self.blocked: list[str] = []  # "host:port (reason)", in order, without repeats
        self.refused = 0  # requests refused
        self.refusals: dict[tuple[str, str], Refusal] = {}  # by (host, reason), in order
        self.capped = False
        self._server: asyncio.Server | None = None
        self._tasks: set[asyncio.Task[None]] = set()
        self._writers: set[asyncio.StreamWriter] = set()

    async def start(self) -> int:
        """Listen on a free loopback port; return it."""
        self._server = await asyncio.start_server(self._serve, "127.0.0.1", 0, limit=HEAD_LIMIT)
        port: int = self._server.sockets[0].getsockname()[1]
        return port

    async def close(self) -> None:
        """Stop listening and cut every connection still open."""
        if self._server is not None:
            self._server.close()
        for w in list(self._writers):
            w.transport.abort()
        if self._tasks:
            await asyncio.wait(list(self._tasks), timeout=2)

    def _serve(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        task = asyncio.ensure_future(self._client(reader, writer))
        self._tasks.add(task)
        task.add_done_callback(self._tasks.discard)

    async def _client(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        self._writers.add(writer)
        upstream: asyncio.StreamWriter | None = None
        try:
            head = await asyncio.wait_for(reader.readuntil(b"\r\n\r\n"), HEAD_TIMEOUT)
            line, *headers = head.decode("latin-1").split("\r\n")
            method, target, version = line.split(" ", 2)
            connect = method.upper() == "CONNECT"
            if connect:
                netloc, path = target, ""
            else:
                parts = urlsplit(target)
                if parts.scheme.lower() != "http":
                    return await self._refuse(writer, target[:100], f"scheme {parts.scheme}")
                netloc = parts.netloc
                path = (parts.path or "/") + (f"?{parts.query}" if parts.query else "")
                size = _body_length(headers)
            try:
                ip, port = await self._check(netloc)
            except Blocked as exc:
                return await self._refuse(writer, netloc, exc.reason)
            except SiftError as exc:
                return await _answer(writer, 502, exc.message)
            up_reader, up = await asyncio.wait_for(asyncio.open_connection(ip, port), HEAD_TIMEOUT)
            upstream = up
            self._writers.add(up)
            if connect:
                writer.write(b"HTTP/1.1 200 Connection established\r\n\r\n")
                await asyncio.gather(
                    self._pipe(reader, up, count=False), self._pipe(up_reader, writer, count=True)
                )
                return
            kept = self._headers(headers, netloc)
            out = "\r\n".join([f"{method} {path} {version}", *kept, "Connection: close"])
            up.write(out.encode("latin-1") + b"\r\n\r\n")
            # This request's body only: what follows it on the connection is never sent on.
            await _copy(reader, up, size)
            await self._answer_only(reader, up_reader, writer)
        except LengthRequired:
            await _answer(writer, 411, "a request body needs a Content-Length")
        except (OSError, ValueError, TimeoutError, asyncio.IncompleteReadError):
            pass
        except asyncio.LimitOverrunError:
            await _answer(writer, 431, "request head too large")
        finally:
            for w in (writer, upstream):
                if w is not None:
                    self._writers.discard(w)
                    w.transport.abort()

    async def _answer_only(
        self,
        reader: asyncio.StreamReader,
        up_reader: asyncio.StreamReader,
        writer: asyncio.StreamWriter,
    ) -> None:
        """The upstream's answer to the client, until either closes; a next request on the
        client's connection (the upstream kept it open) closes it: the client asks again on
        a new connection, and that request is checked."""
        answer = asyncio.ensure_future(self._pipe(up_reader, writer, count=True))
        more = asyncio.ensure_future(reader.read(1))
        try:
            await asyncio.wait([answer, more], return_when=asyncio.FIRST_COMPLETED)
            if more.done() and not more.result():  # the client only half-closed: answer it
                await answer
        finally:
            for task in (answer, more):
                task.cancel()

    def _headers(self, headers: list[str], netloc: str) -> list[str]:
        """The request's headers as sent on: hop-by-hop ones dropped, signed when sift has an
        identity (its signature, never the page's)."""
        drop = _HOP | _SIGNATURE if self.sign is not None else _HOP
        kept = [h for h in headers if h and h.split(":", 1)[0].strip().lower() not in drop]
        if self.sign is not None:
            parts = urlsplit(f"http://{netloc}")
            kept += self.sign("http", parts.hostname or "", parts.port or 80)
        return kept

    async def _check(self, netloc: str) -> tuple[str, int]:
        """The address to connect to for `host:port`, checked as a fetch checks it."""
        loop = asyncio.get_running_loop()
        return await loop.run_in_executor(None, self.address_for, netloc)

    async def _refuse(self, writer: asyncio.StreamWriter, what: str, reason: str) -> None:
        entry = f"{what} ({reason})"
        if entry not in self.blocked and len(self.blocked) < 100:
            self.blocked.append(entry)
        self.refused += 1
        host, _, port = (
            what.rpartition(":") if what.rsplit(":", 1)[-1].isdigit() else (what, "", "")
        )
        group = self.refusals.get((host, reason))
        if group is None and len(self.refusals) < KEPT:
            group = self.refusals[(host, reason)] = Refusal()
        if group is not None:
            group.count += 1
            if port and len(group.ports) < KEPT_PORTS:
                group.ports.add(port)
        await _answer(writer, 403, f"blocked: {reason}", blocked=True)

    def summary(self) -> str | None:
        """Every distinct refused host and reason, counted: the first `NAMED` by name."""
        if not self.refused:
            return None
        named = [
            f"{_label(host, g.ports)} ({reason}){f' ×{g.count}' if g.count > 1 else ''}"
            for (host, reason), g in list(self.refusals.items())[:NAMED]
        ]
        hosts = len(self.refusals)
        more = f" and {hosts - NAMED} more host(s)" if hosts > NAMED else ""
        more += " and more not remembered" if hosts >= KEPT else ""
        return f"the browser was refused {self.refused} request(s): {', '.join(named)}{more}"

    async def _pipe(
        self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter, *, count: bool
    ) -> None:
        try:
            while data := await reader.read(65536):
                if count:
                    self.received += len(data)
                    if self.received > self.max_bytes:
                        self.capped = True
                        break
                writer.write(data)
                await writer.drain()
        except OSError:
            pass
        finally:
            with contextlib.suppress(OSError, RuntimeError):
                if writer.can_write_eof():
                    writer.write_eof()
            if count or self.capped:
                writer.transport.abort()


class Refusal:
    """The refused requests to one host for one reason."""

    def __init__(self) -> None:
        self.count = 0
        self.ports: set[str] = set()  # a few, to name them


class LengthRequired(ValueError):
    pass


def _label(host: str, ports: set[str]) -> str:
    """`host:port`, for each of the first few ports (by number), or `host`."""
    if not ports:
        return host
    shown = sorted(ports, key=int)[:5]
    more = f" and {len(ports) - 5} more port(s)" if len(ports) > 5 else ""
    more = more.replace(" more", " or more") if len(ports) >= KEPT_PORTS else more
    return ", ".join(f"{host}:{p}" for p in shown) + more


def _body_length(headers: list[str]) -> int:
    """The request body's length: its Content-Length (none: 0); a chunked body is refused."""
    size = 0
    for h in headers:
        name, _, value = h.partition(":")
        name = name.strip().lower()
        if name == "transfer-encoding":
            raise LengthRequired
        if name == "content-length":
            size = int(value.strip())
    if size < 0:
        raise ValueError("negative Content-Length")
    return size


async def _copy(reader: asyncio.StreamReader, writer: asyncio.StreamWriter, size: int) -> None:
    while size > 0:
        data = await reader.read(min(size, 65536))
        if not data:
            return
        size -= len(data)
        writer.write(data)
        await writer.drain()


async def _answer(
    writer: asyncio.StreamWriter, status: int, text: str, *, blocked: bool = False
) -> None:
    body = text.encode()
    extra = f"{BLOCKED_HEADER}: 1\r\n" if blocked else ""
    writer.write(
        f"HTTP/1.1 {status} sift\r\nContent-Type: text/plain\r\nContent-Length: {len(body)}\r\n"
        f"{extra}Connection: close\r\n\r\n".encode()
        + body
    )
    with contextlib.suppress(OSError):
        await writer.drain()
