"""The render engine: browser slots, and one browser child per render under a deadline and a
memory limit, with its own guarded proxy.

A render takes a slot (one per caller: 429; all taken: 503 with Retry-After, as the PDF pool
answers), starts a `GuardedProxy` on a loopback port and the child (`sift.browser.child`)
in a new session, and watches the child's whole process tree: its resident size summed, and
every process it ever had (Playwright starts Chromium in a session of its own, so a process
group kill would miss it). At the deadline or over `[render] max_rss` every one of them is
killed; no browser process outlives its render.

Where sift runs as root, Chromium is started through a launcher that drops to `[render] user`
(with Chromium's own sandbox on: it needs user namespaces, not root). It never runs as root.
"""

from __future__ import annotations

import asyncio
import contextlib
import os
import pwd
import shlex
import shutil
import signal
import sys
import tempfile
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path

import msgspec
import psutil

from sift.browser.proxy import AddressFor, GuardedProxy
from sift.browser.wire import RenderRequest, RenderResult
from sift.core.config import RenderConfig
from sift.core.errors import Blocked, Busy, NoBrowser, Unavailable, Unprocessable, UpstreamError
from sift.core.request import Action

INSTALL = "apt-get install chromium"
GRACE = 8.0  # past the render's budget, how long the child has to answer before it is killed
WATCH_EVERY = 0.25


@dataclass
class Rendered:
    """A render's outcome: the DOM as HTML and what the proxy refused."""

    html: str
    final_url: str
    status: int
    blocked: list[str] = field(default_factory=list)
    timed_out: bool = False
    capped: bool = False
    screenshot: str | None = None
    shots: list[str] = field(default_factory=list)  # the `screenshot` actions' PNGs

    @property
    def warning(self) -> str | None:
        notes = []
        if self.blocked:
            shown = ", ".join(self.blocked[:10])
            more = f" and {len(self.blocked) - 10} more" if len(self.blocked) > 10 else ""
            notes.append(f"the browser was refused {len(self.blocked)} request(s): {shown}{more}")
        if self.timed_out:
            notes.append("the page was still loading at the deadline; this is what it showed")
        if self.capped:
            notes.append("the page received more than the render's byte cap; loading was cut")
        return "; ".join(notes) or None


class Engine:
    """Renders pages; `available` says whether a browser is installed and rendering is on.

    `address_for` is sift's guard for one `host:port` (the service passes `Guard.address_for`):
    the proxy asks it for every connection the browser makes."""

    def __init__(self, cfg: RenderConfig, address_for: AddressFor) -> None:
        self.cfg = cfg
        self.address_for = address_for
        self.installed = os.access(cfg.browser, os.X_OK)
        self.available = cfg.enabled and self.installed
        self._callers: set[str] = set()

    def check(self) -> None:
        """Raise the error that says why this server cannot render."""
        if not self.cfg.enabled:
            raise NoBrowser("rendering is off on this server ([render] enabled = false)")
        if not self.installed:
            raise NoBrowser(f"render engine not installed: {INSTALL} ({self.cfg.browser})")

    @contextlib.contextmanager
    def slot(self, caller: str) -> Iterator[None]:
        if caller in self._callers:
            raise Busy("busy: a render of yours is in flight; retry shortly", retry_after=2)
        if len(self._callers) >= self.cfg.slots:
            raise Unavailable("browser slots busy; retry shortly", hint="retry", retry_after=10)
        self._callers.add(caller)
        try:
            yield
        finally:
            self._callers.discard(caller)

    async def render(
        self,
        url: str,
        caller: str,
        *,
        budget: float | None = None,
        wait_for: int = 0,
        actions: list[Action] | None = None,
        screenshot: bool = False,
        mobile: bool = False,
        languages: tuple[str, ...] = (),
    ) -> Rendered:
        """Render `url` (already pre-checked by the guard) in a fresh browser; the page as
        it is at the deadline is the answer.

        Raises:
            NoBrowser: no browser, or rendering off.
            Busy / Unavailable: the caller's render in flight / every slot taken.
            Blocked: the proxy refused the main document (or a redirect of it).
            Unprocessable: the browser was killed over its memory limit or deadline.
            UpstreamError: the page could not be loaded.
        """
        self.check()
        budget = min(budget or self.cfg.deadline, self.cfg.deadline)
        with self.slot(caller):
            proxy = GuardedProxy(self.address_for, self.cfg.max_bytes)
            port = await proxy.start()
            try:
                req = RenderRequest(
                    url=url,
                    proxy_port=port,
                    browser=self.cfg.browser,
                    budget=budget,
                    wait_for=wait_for,
                    actions=actions or [],
                    screenshot=screenshot,
                    mobile=mobile,
                    languages=list(languages),
                )
                result = await self._run(req, budget + GRACE)
            finally:
                await proxy.close()
        if result.failed:
            raise Unavailable(f"the browser failed: {result.failed}", hint="retry", retry_after=5)
        if result.blocked or (result.error and proxy.blocked):
            why = proxy.blocked[-1] if proxy.blocked else "the main document"
            raise Blocked(f"the browser was refused {why}")
        if result.error:
            raise UpstreamError(f"the browser could not load the page: {result.error}")
        return Rendered(
            html=result.html,
            final_url=result.final_url or url,
            status=result.status or 200,
            blocked=proxy.blocked,
            timed_out=result.timed_out,
            capped=proxy.capped,
            screenshot=result.screenshot,
            shots=result.shots,
        )

    def _launcher(self, tmp: str) -> str:
        """The browser, or as root a launcher (in the render's directory) that drops to
        `[render] user` before it starts Chromium, and gives that user its profile."""
        if os.geteuid() != 0:
            return self.cfg.browser
        user = pwd.getpwnam(self.cfg.user)  # checked at start-up: exists, not root
        ids = f"{user.pw_uid}:{user.pw_gid}"
        path = Path(tmp) / "chromium"
        path.write_text(
            "#!/bin/sh\n# sift: the browser never runs as root (sift.browser.engine)\n"
            f'chown {ids} "$HOME"\n'
            'for a in "$@"; do case "$a" in --user-data-dir=*) '
            f'chown -R {ids} "${{a#--user-data-dir=}}";; esac; done\n'
            f"exec setpriv --reuid={user.pw_uid} --regid={user.pw_gid} --clear-groups "
            f'{shlex.quote(self.cfg.browser)} "$@"\n'
        )
        path.chmod(0o700)
        return str(path)

    async def _run(self, req: RenderRequest, deadline: float) -> RenderResult:
        """The child's answer; killed with its whole tree at `deadline` or over max_rss.
        Its files (profiles included) live in one temporary directory, removed after it."""
        loop = asyncio.get_running_loop()
        tmp = await loop.run_in_executor(None, tempfile.mkdtemp, "", "sift-render-")
        os.chmod(tmp, 0o711)  # the browser's user passes through to its own profile
        try:
            req.browser = await loop.run_in_executor(None, self._launcher, tmp)
            return await self._child(req, deadline, tmp)
        finally:
            await loop.run_in_executor(None, lambda: shutil.rmtree(tmp, ignore_errors=True))

    async def _child(self, req: RenderRequest, deadline: float, tmp: str) -> RenderResult:
        env = {"PATH": "/usr/bin:/bin", "PYTHONPATH": os.pathsep.join(sys.path), "TMPDIR": tmp}
        proc = await asyncio.create_subprocess_exec(
            sys.executable,
            "-m",
            "sift.browser.child",
            stdin=asyncio.subprocess.PIPE,
            stdout=asyncio.subprocess.PIPE,
            stderr=asyncio.subprocess.DEVNULL,
            start_new_session=True,
            env=env,
        )
        tree = Tree(proc.pid)
        answer = asyncio.ensure_future(proc.communicate(msgspec.json.encode(req)))
        over = asyncio.ensure_future(tree.watch(self.cfg.max_rss))
        try:
            done, _ = await asyncio.wait(
                [answer, over], timeout=deadline, return_when=asyncio.FIRST_COMPLETED
            )
        finally:
            over.cancel()
            if not answer.done():
                await asyncio.get_running_loop().run_in_executor(None, tree.kill)
                answer.cancel()
            with contextlib.suppress(ProcessLookupError):
                proc.kill()
            await proc.wait()
            await asyncio.get_running_loop().run_in_executor(None, tree.kill)
        if answer not in done or answer.cancelled():
            if over in done and not over.cancelled() and over.result():
                mb = self.cfg.max_rss // 1024**2
                raise Unprocessable(f"render killed: the page used more than {mb} MiB")
            raise Unprocessable(f"render killed: the browser did not answer in {deadline:.0f} s")
        stdout, _ = answer.result()
        try:
            return msgspec.json.decode(stdout.splitlines()[-1], type=RenderResult)
        except (IndexError, msgspec.DecodeError, msgspec.ValidationError):
            raise Unavailable("the browser crashed", hint="retry", retry_after=2) from None


class Tree:
    """Every process the child ever had, so that all of them can be killed."""

    def __init__(self, pid: int) -> None:
        self.pid = pid
        self.seen: dict[int, float] = {}  # pid -> create time (a reused pid is not ours)

    def scan(self) -> int:
        """Note the tree's processes; their resident size summed."""
        rss = 0
        with contextlib.suppress(psutil.Error):
            root = psutil.Process(self.pid)
            for p in [root, *root.children(recursive=True)]:
                with contextlib.suppress(psutil.Error):
                    self.seen.setdefault(p.pid, p.create_time())
                    rss += p.memory_info().rss
        for pid, created in list(self.seen.items()):  # orphans: Chromium runs in its own session
            with contextlib.suppress(psutil.Error):
                p = psutil.Process(pid)
                if p.create_time() == created and p.pid != self.pid:
                    for c in p.children(recursive=True):
                        self.seen.setdefault(c.pid, c.create_time())
        return rss

    async def watch(self, max_rss: int) -> bool:
        """Return True once the tree is over `max_rss` (runs until cancelled otherwise)."""
        loop = asyncio.get_running_loop()
        while True:
            if await loop.run_in_executor(None, self.scan) > max_rss:
                return True
            await asyncio.sleep(WATCH_EVERY)

    def kill(self) -> None:
        """Stop every process of the tree, then kill them (stopped first, none can fork)."""
        self.scan()
        procs = []
        for pid, created in self.seen.items():
            with contextlib.suppress(psutil.Error):
                p = psutil.Process(pid)
                if p.create_time() == created:
                    procs.append(p)
        for sig in (signal.SIGSTOP, signal.SIGKILL):
            for p in procs:
                with contextlib.suppress(psutil.Error):
                    p.send_signal(sig)
        with contextlib.suppress(ProcessLookupError, PermissionError):
            os.killpg(self.pid, signal.SIGKILL)
        psutil.wait_procs(procs, timeout=1)
