"""A load generator in its own process: N keep-alive clients on raw asyncio streams.

    python -m bench.loadgen < spec.json > result.json

The spec names the port, the token (or tokens, spread over the clients), the concurrency,
the duration, a hard cap on requests, and a weighted mix of requests; `{n}` in a body's
strings becomes a run-wide counter (a distinct, uncached URL per request). Every client
sends a request, reads the whole answer, and sends the next; a 429/503 makes it wait
`Retry-After` (at most `backoff_cap` s), as an agent would. After the duration no request
is started; those in flight get `grace` s.

It runs apart from the harness so that its own work does not share a GIL with the timing,
and raw streams keep it cheap (no per-request client object).
"""

from __future__ import annotations

import asyncio
import json
import random
import sys
import time
from collections import Counter, defaultdict
from typing import Any


def _fill(value: Any, n: int) -> Any:
    if isinstance(value, str):
        return value.replace("{n}", str(n))
    if isinstance(value, dict):
        return {k: _fill(v, n) for k, v in value.items()}
    if isinstance(value, list):
        return [_fill(v, n) for v in value]
    return value


def percentile(values: list[float], q: float) -> float:
    if not values:
        return 0.0
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(q * len(ordered)))]


class Gen:
    def __init__(self, spec: dict[str, Any]) -> None:
        self.spec = spec
        self.port = int(spec["port"])
        self.tokens = list(spec.get("tokens") or [spec.get("token")])
        self.mix = spec["mix"]
        self.weights = [float(m.get("weight", 1)) for m in self.mix]
        self.counter = 0
        self.sent = 0
        self.max_requests = int(spec.get("max_requests", 1_000_000))
        self.backoff_cap = float(spec.get("backoff_cap", 1.0))
        self.lat: dict[str, list[float]] = defaultdict(list)
        self.in_window: dict[str, int] = Counter()
        self.status: dict[str, Counter[str]] = defaultdict(Counter)
        self.no_retry_after: Counter[str] = Counter()
        self.samples: list[str] = []
        self.conn_errors = 0
        self.rng = random.Random(int(spec.get("seed", 1)))

    def _request(self, item: dict[str, Any], token: str | None) -> bytes:
        self.counter += 1
        body = b""
        if item.get("body") is not None:
            body = json.dumps(_fill(item["body"], self.counter)).encode()
        lines = [
            f"{item.get('method', 'POST')} {_fill(item['path'], self.counter)} HTTP/1.1",
            f"Host: 127.0.0.1:{self.port}",
            "Connection: keep-alive",
        ]
        if token and item.get("auth", True):
            lines.append(f"Authorization: Bearer {token}")
        if body:
            lines += ["Content-Type: application/json", f"Content-Length: {len(body)}"]
        return ("\r\n".join(lines) + "\r\n\r\n").encode() + body

    async def _read(self, reader: asyncio.StreamReader) -> tuple[int, dict[str, str], bytes]:
        head = await reader.readuntil(b"\r\n\r\n")
        lines = head.decode("latin-1").split("\r\n")
        status = int(lines[0].split()[1])
        headers = {}
        for line in lines[1:]:
            if ":" in line:
                k, v = line.split(":", 1)
                headers[k.strip().lower()] = v.strip()
        if "content-length" in headers:
            body = await reader.readexactly(int(headers["content-length"]))
        elif headers.get("transfer-encoding", "").lower() == "chunked":
            parts = []
            while True:
                size = int((await reader.readuntil(b"\r\n")).split(b";")[0], 16)
                parts.append(await reader.readexactly(size + 2))
                if size == 0:
                    break
            body = b"".join(p[:-2] for p in parts)
        else:
            body = await reader.read()
        return status, headers, body

    async def client(self, stop_at: float, token: str | None) -> None:
        reader = writer = None
        while time.monotonic() < stop_at and self.sent < self.max_requests:
            item = self.rng.choices(self.mix, self.weights)[0]
            name = item.get("name", "request")
            self.sent += 1
            started = time.monotonic()
            try:
                if writer is None:
                    reader, writer = await asyncio.open_connection("127.0.0.1", self.port)
                assert reader is not None
                writer.write(self._request(item, token))
                status, headers, body = await self._read(reader)
            except (OSError, asyncio.IncompleteReadError, ValueError):
                self.conn_errors += 1
                self.status[name]["conn"] += 1
                if writer is not None:
                    writer.close()
                reader = writer = None
                continue
            ended = time.monotonic()
            self.lat[name].append(ended - started)
            if ended <= stop_at:
                self.in_window[name] += 1
            self.status[name][str(status)] += 1
            if headers.get("connection", "").lower() == "close":
                writer.close()
                reader = writer = None
            if status in (429, 503):
                retry = headers.get("retry-after", "")
                if not retry.isdigit():
                    self.no_retry_after[name] += 1
                wait = min(float(retry) if retry.isdigit() else 1.0, self.backoff_cap)
                await asyncio.sleep(wait * (0.5 + self.rng.random() / 2))
            elif status != 200 and len(self.samples) < 8:
                self.samples.append(f"{name} {status} {body[:200]!r}")
        if writer is not None:
            writer.close()

    async def run(self) -> dict[str, Any]:
        duration = float(self.spec["duration"])
        started = time.monotonic()
        stop_at = started + duration
        tokens = self.tokens
        tasks = [
            asyncio.create_task(self.client(stop_at, tokens[k % len(tokens)]))
            for k in range(int(self.spec["concurrency"]))
        ]
        grace = float(self.spec.get("grace", 30))
        _done, pending = await asyncio.wait(tasks, timeout=duration + grace)
        for task in pending:
            task.cancel()
        await asyncio.gather(*pending, return_exceptions=True)
        elapsed = min(time.monotonic(), stop_at) - started
        return self.summary(elapsed, len(pending))

    def summary(self, elapsed: float, unfinished: int) -> dict[str, Any]:
        every = [x for v in self.lat.values() for x in v]
        classes = {}
        for name in sorted(set(self.status) | set(self.lat)):
            lat = self.lat.get(name, [])
            classes[name] = {
                "count": len(lat),
                "status": dict(self.status[name]),
                "p50_ms": percentile(lat, 0.5) * 1000,
                "p99_ms": percentile(lat, 0.99) * 1000,
                "max_ms": max(lat, default=0.0) * 1000,
                "no_retry_after": self.no_retry_after[name],
            }
        return {
            "elapsed": elapsed,
            "completed": len(every),
            "rps": sum(self.in_window.values()) / elapsed if elapsed > 0 else 0.0,
            "p50_ms": percentile(every, 0.5) * 1000,
            "p99_ms": percentile(every, 0.99) * 1000,
            "conn_errors": self.conn_errors,
            "unfinished": unfinished,
            "classes": classes,
            "samples": self.samples,
        }


def run_spec(spec: dict[str, Any], timeout: float | None = None) -> dict[str, Any]:
    """Run `spec` in a fresh `python -m bench.loadgen` process; its summary."""
    import subprocess

    limit = timeout or float(spec["duration"]) + float(spec.get("grace", 30)) + 30
    out = subprocess.run(
        [sys.executable, "-m", "bench.loadgen"],
        input=json.dumps(spec),
        capture_output=True,
        text=True,
        timeout=limit,
        check=True,
    )
    return json.loads(out.stdout)


if __name__ == "__main__":
    result = asyncio.run(Gen(json.load(sys.stdin)).run())
    json.dump(result, sys.stdout)
