"""`sift serve`: start the actors, then the HTTP server; on SIGTERM drain and stop in reverse."""

from __future__ import annotations

import asyncio
import logging
import shutil
import signal
import sys
from pathlib import Path

import tornado.netutil

from sift.core.callers import callers_for, token_path
from sift.core.config import Config, listen_address
from sift.core.errors import JobsCorrupt, SchemaTooNew
from sift.service.services import Services
from sift.web import logs, looplag, pauses
from sift.web.app import make_app
from sift.web.edge import make_server

log = logging.getLogger("sift.server")

DRAIN_SECONDS = 30.0


def banner(cfg: Config, port: int, host: str, token: str | None, can: list[str]) -> str:
    """Where sift listens, what it can do (as /healthz says it), how to try it."""
    base = f"http://{host if ':' not in host else '[' + host + ']'}:{port}"
    lines = [f"sift is listening on {base}", *(f"  {line}" for line in can)]
    if token:
        lines += [
            f"local token: {token_path(cfg)} (mode 0600)",
            "try:",
            f'  curl -s {base}/v1/fetch -H "Authorization: Bearer $(cat {token_path(cfg)})" \\',
            '       -d \'{"url": "https://example.com/"}\'',
            f"  SIFT_URL={base} {command()} fetch https://example.com/",
        ]
    return "\n".join(lines)


def command() -> str:
    """How to run this sift from any shell: `sift` when that is this one on PATH, else the
    script beside this Python (a venv's bin/), else `python -m sift`."""
    script = Path(sys.executable).parent / "sift"
    if not script.exists():
        return f"{sys.executable} -m sift"
    found = shutil.which("sift")
    return "sift" if found and Path(found).resolve() == script.resolve() else str(script)


async def serve(cfg: Config) -> int:
    loop = asyncio.get_running_loop()
    exit_code = 0
    stop = asyncio.Event()

    def fatal(role: str) -> None:
        nonlocal exit_code
        exit_code = 1
        loop.call_soon_threadsafe(stop.set)

    host, port = listen_address(cfg.listen)
    try:  # before anything starts: a port in use or an unknown host name fails at once
        sockets = tornado.netutil.bind_sockets(port, address=host)
    except OSError as exc:
        print(f"sift: cannot listen on {cfg.listen}: {exc.strerror}", file=sys.stderr)
        return 1
    callers, token = callers_for(cfg)
    try:
        svc = Services(cfg, on_fatal=fatal)
    except BaseException:  # a config it could not use (`identity.key_file`): nothing is left open
        for sock in sockets:
            sock.close()
        raise
    svc.loop = loop  # batch workers run targets on this loop
    try:
        svc.start()
    except (JobsCorrupt, SchemaTooNew) as exc:
        print(exc, file=sys.stderr)
        return 2
    probe = looplag.start()
    app = make_app(svc, callers)
    server = make_server(app, cfg)
    server.add_sockets(sockets)
    pauses.settle()
    port = sockets[0].getsockname()[1]
    for sig in (signal.SIGTERM, signal.SIGINT):
        loop.add_signal_handler(sig, stop.set)
    await svc.capabilities.settled()  # Tesseract's languages read
    print(banner(cfg, port, host, token, svc.capabilities.lines()), file=sys.stderr, flush=True)
    await stop.wait()
    log.info("stopping: draining %d requests in flight", svc.inflight)
    server.stop()
    app.settings["draining"] = True
    deadline = loop.time() + DRAIN_SECONDS
    while svc.inflight > 0 and loop.time() < deadline:
        await asyncio.sleep(0.05)
    if svc.inflight == 0:
        await server.close_all_connections()
    await svc.settle()
    await looplag.stop(probe)
    svc.stop()
    log.info("stopped")
    return exit_code


def run(cfg: Config) -> int:
    writer = logs.setup()
    try:
        return asyncio.run(serve(cfg))
    finally:
        writer.stop()  # the lines still queued are written
