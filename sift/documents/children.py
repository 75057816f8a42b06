"""Child processes under one deadline: feed stdin, drain stdout and stderr, kill, reap.

Like `subprocess.communicate`, but for several children in one selector loop, with a cap on
what they may write (stdout in all, stderr each) and a deadline after which every child's
process group is killed. Live children are registered so that shutdown can kill them.
Spawning, killing and reaping are `sift.core.childproc`'s, the protocol every child speaks.
"""

from __future__ import annotations

import contextlib
import os
import selectors
import subprocess
import threading
import time
from collections.abc import Sequence
from pathlib import Path
from types import TracebackType
from typing import IO

from sift.core import childproc

_CHUNK = 65536
_live: set[subprocess.Popen[bytes]] = set()
_waiting: set[subprocess.Popen[bytes]] = set()  # idle spares (`Spares`)
_live_lock = threading.Lock()


def kill_all() -> None:
    """Kill every child still running and every spare (service shutdown); safe from any
    thread."""
    with _live_lock:
        procs, spares = list(_live), list(_waiting)
        _waiting.clear()
    for proc in procs:
        kill(proc)
    for proc in spares:
        _end(proc)


def _end(proc: subprocess.Popen[bytes]) -> None:
    """Kill and reap a spare nobody will use, and close its pipes."""
    kill(proc)
    childproc.wait(proc, childproc.KILL_WAIT)
    for pipe in (proc.stdin, proc.stdout, proc.stderr):
        if pipe is not None:
            with contextlib.suppress(OSError):
                pipe.close()


kill = childproc.kill


class Child:
    """One child: its process, what is left to write to it, what it wrote."""

    def __init__(
        self, proc: subprocess.Popen[bytes], data: bytes, source: IO[bytes] | None = None
    ) -> None:
        self.proc = proc
        self._data = memoryview(data)
        self._sent = 0
        self._source = source  # a file whose bytes follow `data`, read a chunk at a time
        self.out = bytearray()
        self.err = bytearray()
        self.returncode: int | None = None

    def close_source(self) -> None:
        """Stop feeding from the file (all sent, or the child stopped reading)."""
        if self._source is not None:
            self._source.close()
            self._source = None

    def first_line(self) -> bytes | None:
        """The first complete line written to stdout, once there is one."""
        return childproc.first_line(self.out)

    def lines(self) -> list[bytes]:
        """The complete lines written to stdout (a line cut by a kill is left out)."""
        return childproc.complete_lines(self.out)


class ChildSet:
    """Children that share one deadline and one stdout cap; use as a context manager."""

    def __init__(self, deadline: float, out_cap: int, err_cap: int, cwd: str) -> None:
        self.deadline = deadline
        self.all: list[Child] = []
        self.timed_out = False
        self.overflowed = False
        self._out_cap = out_cap
        self._err_cap = err_cap
        self._cwd = cwd
        self._sel = selectors.DefaultSelector()
        self._out_total = 0

    def start(
        self, args: Sequence[str], data: bytes | Path, spare: subprocess.Popen[bytes] | None = None
    ) -> Child:
        """Start `python <args>` with an empty environment, `data` on its stdin (a file is
        opened as the child's stdin, so its bytes never pass through this process).

        With `spare` (from `Spares.take`), that child runs instead and `args` are its
        arguments after the module, sent as a JSON line before `data` (a file's bytes are
        then fed from here, a chunk at a time, as the child reads them)."""
        source: IO[bytes] | None = None
        if spare is not None:
            head = childproc.encode(list(args))
            if isinstance(data, Path):
                try:
                    source = data.open("rb")
                except OSError:
                    _end(spare)
                    raise
            proc, data = spare, head + data if isinstance(data, bytes) else head
        else:
            with contextlib.ExitStack() as stack:
                stdin: IO[bytes] | int = subprocess.PIPE
                if isinstance(data, Path):
                    stdin = stack.enter_context(data.open("rb"))
                proc = childproc.spawn(args, stdin=stdin, cwd=self._cwd)
        with _live_lock:
            _live.add(proc)
        child = Child(proc, data if isinstance(data, bytes) else b"", source)
        self.all.append(child)
        assert proc.stdout and proc.stderr
        read, write = selectors.EVENT_READ, selectors.EVENT_WRITE
        pipes = [(proc.stdout, read), (proc.stderr, read)]
        if proc.stdin is not None:
            pipes.append((proc.stdin, write))
        for pipe, event in pipes:
            self._sel.register(pipe, event, (child, pipe))
        if proc.stdin is not None and not data:
            self._close(proc.stdin)
        return child

    def pump(self) -> bool:
        """Move some bytes; False once every pipe is closed, or at the deadline or cap."""
        if not self._sel.get_map():
            return False
        left = self.deadline - time.monotonic()
        if left <= 0:
            self.timed_out = True
            return False
        for key, _ in self._sel.select(min(left, 1.0)):
            child, pipe = key.data
            if pipe is child.proc.stdin:
                self._feed(child)
            else:
                self._drain(child, pipe)
        if self._out_total > self._out_cap:
            self.overflowed = True
            return False
        return True

    def _feed(self, child: Child) -> None:
        stdin = child.proc.stdin
        assert stdin is not None
        if child._sent >= len(child._data) and child._source is not None:
            child._data, child._sent = memoryview(child._source.read(_CHUNK)), 0
            if not child._data:
                child.close_source()
        try:
            child._sent += os.write(stdin.fileno(), child._data[child._sent : child._sent + _CHUNK])
        except BlockingIOError:
            return
        except OSError:  # a broken pipe: the child stopped reading, it has its answer
            child._sent = len(child._data)
            child.close_source()
        if child._sent >= len(child._data) and child._source is None:
            self._close(stdin)

    def _drain(self, child: Child, pipe: IO[bytes]) -> None:
        try:
            chunk = os.read(pipe.fileno(), _CHUNK)
        except BlockingIOError:
            return
        except OSError:
            chunk = b""
        if not chunk:
            self._close(pipe)
        elif pipe is child.proc.stdout:
            child.out += chunk
            self._out_total += len(chunk)
        elif len(child.err) < self._err_cap:
            child.err += chunk[: self._err_cap - len(child.err)]

    def _close(self, pipe: IO[bytes]) -> None:
        with contextlib.suppress(KeyError, ValueError):
            self._sel.unregister(pipe)
        with contextlib.suppress(OSError):
            pipe.close()

    def __enter__(self) -> ChildSet:
        return self

    def __exit__(
        self, _t: type[BaseException] | None, _e: BaseException | None, _tb: TracebackType | None
    ) -> None:
        """Reap every child: wait for the rest of the deadline, then kill the group."""
        for key in list(self._sel.get_map().values()):
            self._close(key.data[1])
        self._sel.close()
        for child in self.all:
            child.close_source()
            proc = child.proc
            if self.timed_out or self.overflowed or _t is not None:
                kill(proc)
            if childproc.wait(proc, self.deadline - time.monotonic()):
                self.timed_out = True
            child.returncode = proc.returncode
            with _live_lock:
                _live.discard(proc)


class Spares:
    """Children started ahead of need, so a document does not wait for an interpreter and its
    imports: `python -m <module> --spare` waits for its arguments (a JSON line on stdin) and
    its document after them. Each is used once, for one document, then exits like any child:
    the same empty environment, and the memory limit, deadline and kill of that document.
    `kill_all` kills idle spares too; one whose parent is gone reads the end of its stdin and
    exits."""

    def __init__(self, module: Sequence[str], cwd: str) -> None:
        self._args = [*module, "--spare"]
        self._cwd = cwd
        self._idle: list[subprocess.Popen[bytes]] = []

    def take(self) -> subprocess.Popen[bytes] | None:
        """A waiting spare (it leaves the pool), or None."""
        with _live_lock:
            while self._idle:
                proc = self._idle.pop()
                if proc in _waiting:  # else `kill_all` ended it
                    _waiting.discard(proc)
                    if proc.poll() is None:
                        return proc
                    _end(proc)
        return None

    def fill(self, n: int) -> None:
        """Start spares until `n` wait (the dead ones reaped)."""
        with _live_lock:
            for proc in [p for p in self._idle if p not in _waiting or p.poll() is not None]:
                self._idle.remove(proc)
                if proc in _waiting:
                    _waiting.discard(proc)
                    _end(proc)
            missing = n - len(self._idle)
        for _ in range(missing):
            proc = childproc.spawn(self._args, cwd=self._cwd)
            with _live_lock:
                self._idle.append(proc)
                _waiting.add(proc)
