"""Clean worker processes: the child's loop, and `CleanWorker`, the parent's handle on one.

HTML cleaning can take seconds, loop on a pathological page or a jq program, or run out of
memory, and trafilatura was seen to corrupt memory when run in several threads at once. So
it runs in a long-lived child process, one task at a time, behind a deadline: a task past it
kills the child's whole process group and a fresh child takes its place.

The pipe carries msgpack frames (`sift.clean.protocol` over `sift.core.childproc`, which also
spawns, times and reaps the child). The child keeps its real stdout for those frames only
(stray prints go to stderr), refuses to open sockets, and runs with RLIMIT_AS so a runaway
task fails with MemoryError rather than taking the machine. It starts with an empty
environment (only PYTHONPATH, to find this sift) and clears even that once it is ready, so
nothing it runs — a jq program's `$ENV` included — can read the server's tokens or keys.

A child that dies in the middle of a task (the kernel's OOM killer, a crash in a C library)
gets the task again on a fresh child, once; a second death is `503 extraction crashed`. A jq
task is not retried: libjq aborts when a program exhausts the memory limit, which is the
program's bound (422). After a task that leaves it over `max_rss`, or after `max_tasks` tasks,
a child is replaced, so that memory a page made it take is given back.
"""

from __future__ import annotations

import contextlib
import fcntl
import logging
import os
import subprocess
import sys
import time
from collections.abc import Callable, Mapping

import msgspec

from sift.clean.data import jq_over_time
from sift.clean.protocol import (
    CleanResult,
    CleanTask,
    result_decoder,
    task_decoder,
    text_digest,
)
from sift.core import childio, childproc
from sift.core.childproc import Broken, Died, Timeout
from sift.core.errors import SiftError, Unavailable, Unprocessable

log = logging.getLogger("sift.clean")

MEMORY_LIMIT = 2 * 1024**3
TEST_HOOKS = "SIFT_TEST_HOOKS"  # "1" in the child's environment enables the "__sleep__" task
# The buffer of both pipes (Linux; 64 KB by default): a page of a few hundred KB, and its
# cleaned text, are written in one go instead of in turns with the reader, each turn a
# wake-up of both processes (a 90 KB result blocked the child mid-write until the parent read).
PIPE_SIZE = 512 * 1024
STARTUP_DEADLINE = 30.0  # seconds for a fresh worker to import its libraries


# ---- child ------------------------------------------------------------------------------------


def _forbid_network() -> None:
    """Cleaning never needs the network; make sure no library reaches it from here."""
    import socket

    class _NoSocket(socket.socket):
        def __init__(self, *args: object, **kwargs: object) -> None:
            raise OSError("network access is disabled in the clean worker")

    socket.socket = _NoSocket  # type: ignore[misc]


def _handle(task: CleanTask, hooks: bool) -> CleanResult:
    from sift.clean.dispatch import clean

    if task.kind == "__sleep__" and hooks:
        time.sleep(float(task.body or b"60"))
        return CleanResult(title="", text="slept")
    if task.kind == "__exit__" and hooks:
        os._exit(3)
    try:
        result = clean(task)
        if result.error is not None:
            return result
        return msgspec.structs.replace(result, content_hash=text_digest(result.text))
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
    out = childproc.claim_stdout()
    try:
        import resource

        resource.setrlimit(resource.RLIMIT_AS, (MEMORY_LIMIT, MEMORY_LIMIT))
    except (ImportError, ValueError, OSError):
        pass
    _forbid_network()
    _warm_up()
    hooks = os.environ.get(TEST_HOOKS) == "1"
    os.environ.clear()  # libjq reads the C environment at each `$ENV`: leave it nothing
    out.write(childproc.HEADER.pack(0))  # ready: an empty frame
    out.flush()
    stdin = childio.Reader(0)
    while True:
        try:
            payload = stdin.read_frame()
            if payload is None:
                return 0
            task = task_decoder.decode(payload)
        except (Broken, Died):
            return 1
        childproc.send_frame(out, _handle(task, hooks))


# ---- parent -----------------------------------------------------------------------------------


def rss(pid: int) -> int | None:
    """The resident set size of process `pid` in bytes, where /proc tells it."""
    try:
        with open(f"/proc/{pid}/statm", "rb") as f:
            return int(f.read().split()[1]) * os.sysconf("SC_PAGE_SIZE")
    except (OSError, ValueError, IndexError):
        return None


class CleanWorker:
    """One worker process and the blocking, deadline-bound calls into it.

    Not thread-safe: it belongs to one CleanActor and is used from that actor's thread only.
    """

    def __init__(
        self,
        on_restart: Callable[[str], None] | None = None,
        env: Mapping[str, str] | None = None,
        stderr: int | None = None,
        *,
        max_rss: int = 0,
        max_tasks: int = 0,
    ) -> None:
        """
        Args:
            on_restart: called with the reason ("deadline", "crashed", "max_rss",
                "max_tasks", "startup") each time a fresh process replaces the last one.
            env: extra environment for the child (tests pass SIFT_TEST_HOOKS=1 here).
            stderr: where the child's stderr goes; None inherits the parent's.
            max_rss: replace the child after a task that leaves it over this many bytes
                resident (0: never).
            max_tasks: replace the child after this many tasks (0: never).
        """
        self.on_restart = on_restart
        self.env = dict(env or {})
        self.stderr = stderr
        self.max_rss = max_rss
        self.max_tasks = max_tasks
        self.proc: subprocess.Popen[bytes] | None = None
        self.pipe: childio.Pipe | None = None
        self.restarts = 0
        self.tasks = 0  # tasks the current child has answered
        self.ready = False

    @property
    def pid(self) -> int | None:
        return self.proc.pid if self.proc is not None else None

    def start(self) -> None:
        self.proc = childproc.spawn(["-m", "sift.clean.worker"], stderr=self.stderr, env=self.env)
        self.pipe = childio.Pipe(self.proc)
        if hasattr(fcntl, "F_SETPIPE_SZ"):
            for end in (self.proc.stdin, self.proc.stdout):
                if end is not None:
                    with contextlib.suppress(OSError):  # over the user's pipe quota: the default
                        fcntl.fcntl(end.fileno(), fcntl.F_SETPIPE_SZ, PIPE_SIZE)
        self.ready = False
        self.tasks = 0

    def run(self, task: CleanTask, deadline_s: float) -> CleanResult:
        """Clean `task` in the worker, waiting at most `deadline_s` seconds per attempt.

        Raises:
            Unprocessable: the task ran past its deadline, or a jq task took its worker down
                (the worker was replaced).
            Unavailable: the worker died on the task twice, on two fresh processes.
            SiftError: the worker broke the protocol or did not start (it was replaced).
        """
        try:
            result = self._attempt(task, deadline_s)
        except Died:
            if task.jq is not None:
                raise Unprocessable(
                    "jq program over its memory bound (it builds too large a value)"
                ) from None
            log.warning("clean worker died mid-task; retrying once on a fresh one")
            try:
                result = self._attempt(task, deadline_s)
            except Died:
                raise Unavailable(
                    "extraction crashed: the clean worker died twice on this document",
                    retry_after=5,
                ) from None
        self._recycle()
        return result

    def _attempt(self, task: CleanTask, deadline_s: float) -> CleanResult:
        """One try on the current (or a fresh) child; raises Died when the child died."""
        if self.proc is None or self.proc.poll() is not None:
            self._restart("crashed")
        if not self.ready:
            self._await_ready()
        until = time.monotonic() + deadline_s
        try:
            assert self.pipe is not None
            self.pipe.write(childproc.frame(task), until)
            result = result_decoder.decode(self.pipe.read_frame(until))
        except Timeout:
            log.warning("clean worker over its %.0f s deadline; replacing it", deadline_s)
            self._restart("deadline")
            if task.jq is not None:
                raise jq_over_time(deadline_s) from None
            raise Unprocessable(f"cleaning timed out after {deadline_s:g} s") from None
        except Broken as exc:
            log.warning("clean worker broke the protocol (%s); replacing it", exc)
            self._restart("crashed")
            raise SiftError("internal error: the clean worker failed") from None
        except Died as exc:
            code = None
            if self.proc is not None:
                with contextlib.suppress(subprocess.TimeoutExpired):
                    code = self.proc.wait(0.5)
            log.warning("clean worker died (%s, exit %s); replacing it", exc, code)
            self._restart("crashed")
            raise
        self.tasks += 1
        return result

    def _recycle(self) -> None:
        """Replace the child if it is over `max_rss` or has answered `max_tasks` tasks."""
        if self.proc is None:
            return
        if self.max_tasks and self.tasks >= self.max_tasks:
            self._restart("max_tasks")
            return
        size = rss(self.proc.pid) if self.max_rss else None
        if size is not None and size > self.max_rss:
            log.info("clean worker at %d MB resident; replacing it", size // 1_000_000)
            self._restart("max_rss")

    def _await_ready(self) -> None:
        """Wait for the child's ready frame, so a task's deadline never pays for start-up."""
        assert self.pipe is not None
        try:
            if self.pipe.read_frame(time.monotonic() + STARTUP_DEADLINE) != b"":
                raise Died("no ready frame")
        except (Timeout, Died, Broken) as exc:
            log.warning("clean worker did not start (%s); replacing it", type(exc).__name__)
            self._restart("startup")
            raise SiftError("internal error: the clean worker did not start") from None
        self.ready = True

    def _restart(self, reason: str) -> None:
        had_one = self.proc is not None
        self.close()
        self.start()
        if had_one:
            self.restarts += 1
            if self.on_restart is not None:
                self.on_restart(reason)

    def close(self) -> None:
        """Kill the worker's process group and reap it. Safe to call twice."""
        proc, self.proc, self.pipe = self.proc, None, None
        if proc is not None:
            childproc.reap(proc)


if __name__ == "__main__":
    raise SystemExit(main())
