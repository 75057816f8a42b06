"""One warm browser: the long-lived child (`sift.browser.child`) that owns a Chromium, seen
from sift. Renders go to it over its stdin and come back on its stdout, matched by id.

Why a child and not Playwright in sift: whatever can hang (the driver, the browser) stays out
of the server's process; sift only writes frames and reads them on the loop. It watches the
child's whole process tree: over `[render] max_rss` it kills the largest renderer (a page's own
process: the render it served answers that it was killed), and if that is not enough, the
whole tree. A render past its deadline is cancelled (its context closed); if the child does not
close it in `CLOSE_GRACE`, the whole tree is killed. The renders in flight on a browser that
dies answer 503 (or 422, when it was killed over memory).
"""

from __future__ import annotations

import asyncio
import contextlib
import itertools
import os
import shutil
import socket
import sys
import tempfile
from collections.abc import Callable, Coroutine
from dataclasses import dataclass
from typing import Any

import msgspec

from sift.browser import wire
from sift.browser.tree import Tree, launcher
from sift.browser.wire import RenderRequest, RenderResult
from sift.core.config import RenderConfig
from sift.core.errors import SiftError, Unavailable, Unprocessable

CLOSE_GRACE = 5.0  # a cancelled render's context closes within this, or the browser is killed
WATCH_BUSY = 0.25  # how often the tree is measured while renders run
WATCH_IDLE = 2.0
STRIKE_GRACE = 2.0  # seconds a killed renderer has to give its memory back before the tree goes
CRASHED = "the browser crashed; retry"
_ids = itertools.count(1)


@dataclass
class Pending:
    """A render in flight: its answer, and whether a memory kill happened meanwhile."""

    answer: asyncio.Future[RenderResult]
    memory: bool = False


class Host:
    """One browser child. `start` launches it; `render` sends one render; `close` and `kill`
    end it. `on_exit` is called once when the child is gone, whatever the reason."""

    def __init__(self, cfg: RenderConfig, on_exit: Callable[[Host], None]) -> None:
        self.cfg = cfg
        self.on_exit = on_exit
        self.renders = 0  # renders sent to this browser
        self.retired = False  # no new renders; closed once the last one answers
        self.pending: dict[int, Pending] = {}
        self.alive = False
        self.pid: int | None = None
        self._proc: asyncio.subprocess.Process | None = None
        self._tree: Tree | None = None
        self._tmp = ""
        self._parked: socket.socket | None = None
        self._tasks: list[asyncio.Task[None]] = []  # reading the answers, watching memory
        self._background: set[asyncio.Task[None]] = set()
        self._killed: SiftError | None = None  # why the tree was killed, for the renders
        self._calm = asyncio.Event()  # clear while a memory strike is being given back
        self._calm.set()

    async def start(self, timeout: float) -> None:
        """Launch the child and its browser; `Unavailable` if it did not start."""
        loop = asyncio.get_running_loop()
        self._tmp = await loop.run_in_executor(None, tempfile.mkdtemp, "", "sift-render-")
        os.chmod(self._tmp, 0o711)  # the browser's user passes through to its own profile
        browser = await loop.run_in_executor(
            None, launcher, self.cfg.browser, self.cfg.user, self._tmp
        )
        # The browser's own traffic (none is expected) goes to a port held and never listened on.
        self._parked = socket.socket()
        self._parked.bind(("127.0.0.1", 0))
        parked = self._parked.getsockname()[1]
        env = {
            "PATH": "/usr/bin:/bin",
            "PYTHONPATH": os.pathsep.join(sys.path),
            "TMPDIR": self._tmp,
        }
        self._proc = proc = await asyncio.create_subprocess_exec(
            sys.executable,
            "-m",
            "sift.browser.child",
            stdin=asyncio.subprocess.PIPE,
            stdout=asyncio.subprocess.PIPE,
            stderr=asyncio.subprocess.DEVNULL,
            start_new_session=True,
            env=env,
        )
        self.pid = proc.pid
        self._tree = Tree(proc.pid)
        try:
            await self._send(wire.Launch(browser=browser, parked_port=parked, timeout=timeout))
            ready = await asyncio.wait_for(self._read(), timeout + 5)
        except (OSError, TimeoutError, asyncio.IncompleteReadError, ValueError) as exc:
            await self._end()
            raise Unavailable(
                f"the browser did not start: {exc or 'timed out'}", hint="retry", retry_after=5
            ) from None
        if not isinstance(ready, wire.Ready) or ready.failed:
            await self._end()
            why = ready.failed if isinstance(ready, wire.Ready) else "no answer"
            raise Unavailable(f"the browser failed: {why}", hint="retry", retry_after=5)
        self.alive = True
        watch = asyncio.ensure_future(self._watch())
        watch.add_done_callback(lambda _: self._calm.set())  # none waits on an unwatched tree
        self._tasks = [asyncio.ensure_future(self._answers()), watch]

    async def render(self, req: RenderRequest, deadline: float) -> RenderResult:
        """This browser's answer to `req` within `deadline` seconds.

        Raises:
            Unprocessable: past the deadline, or its page was killed over `max_rss`.
            Unavailable: the browser crashed or was killed under it.
        """
        req.id = next(_ids)
        pending = Pending(asyncio.get_running_loop().create_future())
        self.pending[req.id] = pending
        self.renders += 1
        try:
            await self._send(req)
            result = await asyncio.wait_for(asyncio.shield(pending.answer), deadline)
        except TimeoutError:
            self._cancel(req.id, pending)
            raise Unprocessable(
                f"render killed: the browser did not answer in {deadline:.0f} s"
            ) from None
        except (OSError, RuntimeError):
            raise self._killed or Unavailable(CRASHED, hint="retry", retry_after=2) from None
        finally:
            if pending.answer.done() or req.id not in self.pending:
                self.pending.pop(req.id, None)
            self._close_if_done()
        if result.crashed and pending.memory:
            raise self._over_memory()
        if result.crashed:
            raise Unavailable(CRASHED, hint="retry", retry_after=2)
        return result

    async def calm(self) -> None:
        """Return once no memory strike is in progress: a render sent during one could be
        killed with the struck page, when the tree is still over `max_rss` at the grace's end.
        Returns at once if there is none; otherwise when memory is under the limit again, or
        the tree is gone (then the browser is no longer `alive`)."""
        await self._calm.wait()

    async def prepare(self, port: int) -> None:
        """Have the browser ready a fresh context and page going out through `port`."""
        await self._send(wire.Prepare(proxy_port=port))

    def _cancel(self, rid: int, pending: Pending) -> None:
        """Close a render's context; if its answer does not come, kill the browser."""

        async def closed() -> None:
            with contextlib.suppress(OSError, RuntimeError):
                await self._send(wire.Cancel(rid))
            try:
                await asyncio.wait_for(asyncio.shield(pending.answer), CLOSE_GRACE)
            except (TimeoutError, SiftError):
                await self.kill_now(Unavailable(CRASHED, hint="retry", retry_after=2))
            self.pending.pop(rid, None)
            self._close_if_done()

        self._later(closed())

    def _later(self, work: Coroutine[Any, Any, None]) -> None:
        """Run `work` in the background, kept until done (and cancelled if the child ends)."""
        task = asyncio.ensure_future(work)
        self._background.add(task)
        task.add_done_callback(self._background.discard)

    def retire(self) -> None:
        """Take no more renders; end once those in flight answered."""
        self.retired = True
        self._close_if_done()

    def _close_if_done(self) -> None:
        if self.retired and not self.pending and self.alive:
            self.alive = False
            self._later(self.close())

    async def close(self) -> None:
        """End the child: its stdin closed, it closes the browser; killed if it does not."""
        self.alive = False
        proc = self._proc
        if proc is not None and proc.stdin is not None:
            with contextlib.suppress(OSError, RuntimeError):
                proc.stdin.close()
        await self._ended(10)

    async def kill_now(self, why: SiftError) -> None:
        """Kill the whole tree; the renders in flight answer `why`."""
        self._killed = self._killed or why
        self.alive = False
        self._calm.set()
        if self._tree is not None:
            await asyncio.get_running_loop().run_in_executor(None, self._tree.kill)
        await self._ended(5)

    async def _ended(self, wait: float) -> None:
        """Wait for the child's end (`_answers` sees its stdout close), killing it if need be."""
        answers = self._tasks[0] if self._tasks else None
        if answers is None or answers is asyncio.current_task():
            return
        done, _ = await asyncio.wait([answers], timeout=wait)
        if not done and self._tree is not None:
            await asyncio.get_running_loop().run_in_executor(None, self._tree.kill)
        await asyncio.wait([answers], timeout=5)

    def kill(self) -> None:
        """At once, without a loop (sift stopping): every process of the tree, and its files."""
        self.alive = False
        if self._tree is not None:
            self._tree.kill()
        if self._parked is not None:
            self._parked.close()
        shutil.rmtree(self._tmp, ignore_errors=True)

    async def _end(self) -> None:
        """The child is gone or going: its renders answered, its processes and files gone."""
        self.alive = False
        why = self._killed or Unavailable(CRASHED, hint="retry", retry_after=2)
        for pending in self.pending.values():
            if not pending.answer.done():
                pending.answer.set_exception(why)
                pending.answer.exception()  # retrieved: a cancelled render may not read it
        loop = asyncio.get_running_loop()
        await loop.run_in_executor(None, self.kill)
        if self._proc is not None:
            with contextlib.suppress(ProcessLookupError):
                self._proc.kill()
            await self._proc.wait()
        mine = asyncio.current_task()
        others = [t for t in [*self._tasks[1:], *self._background] if t is not mine]
        for task in others:
            task.cancel()
        await asyncio.gather(*others, return_exceptions=True)
        if self._proc is not None:
            self._proc = None
            self.on_exit(self)

    async def _send(self, msg: wire.ToChild) -> None:
        assert self._proc is not None and self._proc.stdin is not None
        self._proc.stdin.write(wire.frame(msg))
        await self._proc.stdin.drain()

    async def _read(self) -> wire.FromChild:
        assert self._proc is not None and self._proc.stdout is not None
        out = self._proc.stdout
        body = await out.readexactly(wire.length(await out.readexactly(4)))
        return msgspec.json.decode(body, type=wire.FromChild)

    async def _answers(self) -> None:
        """Each answer to its render, until the child is gone."""
        try:
            while True:
                msg = await self._read()
                if isinstance(msg, wire.Ready):  # the browser is gone: the child ends soon
                    self.alive = False
                pending = self.pending.get(msg.id) if isinstance(msg, RenderResult) else None
                if pending is not None and not pending.answer.done():
                    pending.answer.set_result(msg)  # type: ignore[arg-type]
        except (OSError, asyncio.IncompleteReadError, ValueError, msgspec.DecodeError):
            pass
        await self._end()

    async def _watch(self) -> None:
        """Over `max_rss`: the largest renderer killed, then (still over) the whole tree."""
        loop = asyncio.get_running_loop()
        assert self._tree is not None
        tree = self._tree
        struck: float | None = None  # when the largest renderer was killed
        while self.alive:
            rss = await loop.run_in_executor(None, tree.scan, self.cfg.max_rss)
            if rss <= self.cfg.max_rss:
                struck = None
                self._calm.set()
            elif struck is None and await loop.run_in_executor(None, tree.kill_largest_renderer):
                struck = loop.time()
                self._calm.clear()
                for pending in self.pending.values():
                    pending.memory = True
            elif struck is not None and loop.time() - struck < STRIKE_GRACE:
                pass  # a killed renderer's memory is given back in a moment, not at once
            else:
                await self.kill_now(self._over_memory())
                return
            await asyncio.sleep(WATCH_BUSY if self.pending or struck is not None else WATCH_IDLE)

    def _over_memory(self) -> Unprocessable:
        mb = self.cfg.max_rss // 1024**2
        return Unprocessable(f"render killed: the page used more than {mb} MiB")
