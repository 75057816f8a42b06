"""Clean worker processes: the child's loop, and `CleanWorker`, the parent's handle on one.

HTML cleaning can take seconds, loop on a pathological page or a jq program, or run out of
memory, and trafilatura corrupted memory when run in several threads at once (DESIGN §3). So
it runs in a long-lived child process, one task at a time, behind a deadline: a task past it
kills the child's whole process group and a fresh child takes its place.

The pipe carries length-prefixed msgpack frames (`sift.clean.protocol`). The child keeps its
real stdout for frames only (stray prints go to stderr), refuses to open sockets, and runs
with RLIMIT_AS so a runaway task fails with MemoryError rather than taking the machine.
"""

from __future__ import annotations

import contextlib
import logging
import os
import selectors
import signal
import subprocess
import sys
import time
from collections.abc import Callable, Mapping
from pathlib import Path
from typing import BinaryIO

import msgspec

from sift.clean.protocol import (
    HEADER,
    MAX_FRAME,
    CleanResult,
    CleanTask,
    decode_result,
    decode_task,
    frame,
)
from sift.errors import SiftError, Unprocessable

log = logging.getLogger("sift.clean")

MEMORY_LIMIT = 2 * 1024**3
TEST_HOOKS = "SIFT_TEST_HOOKS"  # "1" in the child's environment enables the "__sleep__" task
_PROXY_VARS = {"http_proxy", "https_proxy", "all_proxy", "no_proxy", "ftp_proxy"}
_KILL_WAIT = 1.0  # seconds between SIGTERM and SIGKILL
STARTUP_DEADLINE = 30.0  # seconds for a fresh worker to import its libraries


# ---- child ------------------------------------------------------------------------------------


def _read_exact(stream: BinaryIO, n: int) -> bytes | None:
    data = stream.read(n)
    return data if data is not None and len(data) == n else None


def _forbid_network() -> None:
    """Cleaning never needs the network; make sure no library reaches it from here."""
    import socket

    class _NoSocket(socket.socket):
        def __init__(self, *args: object, **kwargs: object) -> None:
            raise OSError("network access is disabled in the clean worker")

    socket.socket = _NoSocket  # type: ignore[misc]


def _handle(task: CleanTask) -> CleanResult:
    from sift.clean.dispatch import clean

    if task.kind == "__sleep__" and os.environ.get(TEST_HOOKS) == "1":
        time.sleep(float(task.body or b"60"))
        return CleanResult(title="", text="slept")
    if task.kind == "__exit__" and os.environ.get(TEST_HOOKS) == "1":
        os._exit(3)
    try:
        return clean(task)
    except Exception as exc:  # a bug: answer it as one and keep serving
        import traceback

        traceback.print_exc(file=sys.stderr)
        return CleanResult(title="", text="", error=f"error: {type(exc).__name__}")


def _warm_up() -> None:
    """Import the cleaners and clean one small page, so the first task pays for neither."""
    from sift.clean.dispatch import clean

    page = b"<html><body><article><h1>Warm</h1><p>up</p><table><tr><td>a</td></tr></table>"
    clean(CleanTask(kind="html", body=page, content_type="text/html", url="https://warm.up/"))


def main() -> int:
    """The worker loop: read a task frame from stdin, write a result frame to stdout, repeat.

    Ends cleanly when stdin closes (the parent went away or closed the worker).
    """
    out = os.fdopen(os.dup(1), "wb")
    os.dup2(2, 1)  # a stray print must not corrupt the frames
    sys.stdout = sys.stderr
    try:
        import resource

        resource.setrlimit(resource.RLIMIT_AS, (MEMORY_LIMIT, MEMORY_LIMIT))
    except (ImportError, ValueError, OSError):
        pass
    _forbid_network()
    _warm_up()
    out.write(HEADER.pack(0))  # ready: an empty frame
    out.flush()
    stdin = sys.stdin.buffer
    while True:
        header = _read_exact(stdin, HEADER.size)
        if header is None:
            return 0
        (size,) = HEADER.unpack(header)
        payload = _read_exact(stdin, size) if size <= MAX_FRAME else None
        if payload is None:
            return 1
        result = _handle(decode_task(payload))
        out.write(frame(result))
        out.flush()


# ---- parent -----------------------------------------------------------------------------------


class _Timeout(Exception):
    pass


class _Died(Exception):
    pass


def child_env(extra: Mapping[str, str] | None = None) -> dict[str, str]:
    """The parent's environment without proxy variables or test hooks, plus `extra`.

    PYTHONPATH gets the directory sift is imported from, so the child finds the same code.
    """
    env = {k: v for k, v in os.environ.items() if k.lower() not in _PROXY_VARS and k != TEST_HOOKS}
    root = str(Path(__file__).resolve().parents[2])
    env["PYTHONPATH"] = os.pathsep.join(p for p in (root, env.get("PYTHONPATH")) if p)
    env.update(extra or {})
    return env


class CleanWorker:
    """One worker process and the blocking, deadline-bound calls into it.

    Not thread-safe: it belongs to one CleanActor and is used from that actor's thread only.
    """

    def __init__(
        self,
        on_restart: Callable[[], None] | None = None,
        env: Mapping[str, str] | None = None,
        stderr: int | None = None,
    ) -> None:
        """
        Args:
            on_restart: called each time a fresh process replaces a killed or dead one.
            env: extra environment for the child (tests pass SIFT_TEST_HOOKS=1 here).
            stderr: where the child's stderr goes; None inherits the parent's.
        """
        self.on_restart = on_restart
        self.env = child_env(env)
        self.stderr = stderr
        self.proc: subprocess.Popen[bytes] | None = None
        self.restarts = 0
        self.ready = False

    @property
    def pid(self) -> int | None:
        return self.proc.pid if self.proc is not None else None

    def start(self) -> None:
        self.proc = subprocess.Popen(
            [sys.executable, "-m", "sift.clean.worker"],
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=self.stderr,
            env=self.env,
            start_new_session=True,
            bufsize=0,
        )
        assert self.proc.stdin is not None and self.proc.stdout is not None
        os.set_blocking(self.proc.stdin.fileno(), False)
        os.set_blocking(self.proc.stdout.fileno(), False)
        self.ready = False

    def run(self, task: CleanTask, deadline_s: float) -> CleanResult:
        """Clean `task` in the worker, waiting at most `deadline_s` seconds.

        Raises:
            Unprocessable: the task ran past its deadline (the worker was replaced).
            SiftError: the worker died or broke the protocol (it was replaced).
        """
        if self.proc is None or self.proc.poll() is not None:
            self._restart()
        if not self.ready:
            self._await_ready()
        until = time.monotonic() + deadline_s
        try:
            self._send(frame(task), until)
            return decode_result(self._receive(until))
        except _Timeout:
            log.warning("clean worker over its %.0f s deadline; replacing it", deadline_s)
            self._restart()
            raise Unprocessable(f"cleaning timed out after {deadline_s:g} s") from None
        except (_Died, msgspec.DecodeError) as exc:
            code = None
            if self.proc is not None:
                with contextlib.suppress(subprocess.TimeoutExpired):
                    code = self.proc.wait(0.5)
            log.warning("clean worker failed (%s, exit %s); replacing it", exc, code)
            self._restart()
            raise SiftError("internal error: the clean worker failed") from None

    def _await_ready(self) -> None:
        """Wait for the child's ready frame, so a task's deadline never pays for start-up."""
        try:
            if self._receive(time.monotonic() + STARTUP_DEADLINE) != b"":
                raise _Died("no ready frame")
        except (_Timeout, _Died) as exc:
            log.warning("clean worker did not start (%s); replacing it", type(exc).__name__)
            self._restart()
            raise SiftError("internal error: the clean worker did not start") from None
        self.ready = True

    def _send(self, data: bytes, until: float) -> None:
        assert self.proc is not None and self.proc.stdin is not None
        fd = self.proc.stdin.fileno()
        view = memoryview(data)
        with selectors.DefaultSelector() as sel:
            sel.register(fd, selectors.EVENT_WRITE)
            while view:
                if not sel.select(self._left(until)):
                    continue
                try:
                    view = view[os.write(fd, view) :]
                except BlockingIOError:
                    continue
                except (BrokenPipeError, ConnectionResetError):
                    raise _Died("pipe closed") from None

    def _receive(self, until: float) -> bytes:
        assert self.proc is not None and self.proc.stdout is not None
        fd = self.proc.stdout.fileno()
        buf = bytearray()
        need: int | None = None  # the frame's full length, once its header is in
        with selectors.DefaultSelector() as sel:
            sel.register(fd, selectors.EVENT_READ)
            while True:
                if need is None and len(buf) >= HEADER.size:
                    (size,) = HEADER.unpack(buf[: HEADER.size])
                    if size > MAX_FRAME:
                        raise _Died(f"frame of {size} bytes")
                    need = HEADER.size + size
                if need is not None and len(buf) >= need:
                    return bytes(buf[HEADER.size : need])
                if not sel.select(self._left(until)):
                    continue
                try:
                    chunk = os.read(fd, max((need or 0) - len(buf), 65536))
                except BlockingIOError:
                    continue
                if not chunk:
                    raise _Died("end of output")
                buf += chunk

    @staticmethod
    def _left(until: float) -> float:
        left = until - time.monotonic()
        if left <= 0:
            raise _Timeout
        return left

    def _restart(self) -> None:
        had_one = self.proc is not None
        self.close()
        self.start()
        if had_one:
            self.restarts += 1
            if self.on_restart is not None:
                self.on_restart()

    def close(self) -> None:
        """Kill the worker's process group and reap it. Safe to call twice."""
        proc, self.proc = self.proc, None
        if proc is None:
            return
        for stream in (proc.stdin, proc.stdout):
            if stream is not None:
                stream.close()
        # Signal the group while its leader is unreaped: its id cannot have been reused yet.
        _signal_group(proc.pid, signal.SIGTERM)
        try:
            proc.wait(_KILL_WAIT)
        except subprocess.TimeoutExpired:
            _signal_group(proc.pid, signal.SIGKILL)
            proc.wait()


def _signal_group(pid: int, sig: int) -> None:
    with contextlib.suppress(ProcessLookupError, PermissionError):
        os.killpg(pid, sig)


if __name__ == "__main__":
    raise SystemExit(main())
