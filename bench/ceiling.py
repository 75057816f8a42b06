"""The ceiling for this stack: a bare Tornado handler that answers every request with the
same bytes sift answered a cached fetch with. Runs in its own process, like sift.

    python -m bench.ceiling BODY_FILE     # prints the port it listens on, then serves
"""

from __future__ import annotations

import asyncio
import sys

import tornado.httpserver
import tornado.netutil
import tornado.web


class Same(tornado.web.RequestHandler):
    def initialize(self, body: bytes) -> None:
        self.body = body

    def compute_etag(self) -> None:
        return None

    def _answer(self) -> None:
        self.set_header("Content-Type", "application/json; charset=utf-8")
        self.finish(self.body)

    def get(self) -> None:
        self._answer()

    def post(self) -> None:
        self._answer()


async def main(path: str) -> None:
    with open(path, "rb") as f:
        body = f.read()
    app = tornado.web.Application([(r"/.*", Same, {"body": body})], log_function=lambda _h: None)
    server = tornado.httpserver.HTTPServer(app)
    sockets = tornado.netutil.bind_sockets(0, "127.0.0.1")
    server.add_sockets(sockets)
    print(sockets[0].getsockname()[1], flush=True)
    await asyncio.Event().wait()


if __name__ == "__main__":
    asyncio.run(main(sys.argv[1]))


class Ceiling:
    """The ceiling server as a child process of the harness; `with Ceiling(file) as port:`."""

    def __init__(self, body_file: str) -> None:
        self.body_file = body_file
        self.proc: object = None

    def __enter__(self) -> int:
        import subprocess

        self.proc = subprocess.Popen(
            [sys.executable, "-m", "bench.ceiling", self.body_file],
            stdout=subprocess.PIPE,
            stdin=subprocess.DEVNULL,
            text=True,
        )
        assert self.proc.stdout is not None
        line = self.proc.stdout.readline()
        if not line.strip().isdigit():
            self.__exit__()
            raise RuntimeError("the ceiling server did not start")
        return int(line)

    def __exit__(self, *_exc: object) -> None:
        import subprocess

        proc = self.proc
        assert isinstance(proc, subprocess.Popen)
        proc.terminate()
        try:
            proc.wait(10)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait(10)
