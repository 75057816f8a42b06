"""A browser child's whole process tree: its memory, its largest renderer, and a kill
that reaches every process it ever had (Playwright starts Chromium in a session of its own, so
a process group kill would miss it)."""

from __future__ import annotations

import contextlib
import os
import pwd
import shlex
import signal
from pathlib import Path

import psutil


class Tree:
    """Every process the child ever had, so that all of them can be killed."""

    def __init__(self, pid: int) -> None:
        self.pid = pid
        self.seen: dict[int, float] = {}  # pid -> create time (a reused pid is not ours)

    def _live(self) -> list[psutil.Process]:
        """The tree's processes now; noted, and the dead forgotten."""
        found: dict[int, psutil.Process] = {}
        with contextlib.suppress(psutil.Error):
            root = psutil.Process(self.pid)
            for p in [root, *root.children(recursive=True)]:
                found[p.pid] = p
        for pid, created in list(self.seen.items()):  # orphans: Chromium runs in its own session
            try:
                p = psutil.Process(pid)
                if p.create_time() != created:
                    raise psutil.NoSuchProcess(pid)
                found.setdefault(pid, p)
                for c in p.children(recursive=True):
                    found.setdefault(c.pid, c)
            except psutil.Error:
                del self.seen[pid]
        for pid, p in list(found.items()):
            with contextlib.suppress(psutil.Error):
                self.seen.setdefault(pid, p.create_time())
        return list(found.values())

    def scan(self, limit: int) -> int:
        """The tree's memory: its resident sizes summed while that is within `limit` (a cheap
        read), else its proportional sizes summed (PSS: a page shared by n processes counts
        1/n in each), which is what the tree really holds. Chromium's processes share most of
        their pages, so summed RSS counts an idle browser 2-3 times over; PSS is dearer to
        read (about 4 ms a process), and never more than RSS."""
        sizes: dict[psutil.Process, int] = {}
        for p in self._live():
            with contextlib.suppress(psutil.Error):
                sizes[p] = p.memory_info().rss
        if (total := sum(sizes.values())) <= limit:
            return total
        for p in sizes:
            with contextlib.suppress(psutil.Error):  # gone, or not ours to read: its RSS
                sizes[p] = p.memory_full_info().pss
        return sum(sizes.values())

    def kill_largest_renderer(self) -> bool:
        """Kill the renderer process with the most resident memory (a page's; contexts
        never share one): its render answers that its page crashed. False if there is none."""
        renderers = []
        for p in self._live():
            with contextlib.suppress(psutil.Error):
                if "--type=renderer" in p.cmdline():
                    renderers.append((p.memory_info().rss, p))
        if not renderers:
            return False
        with contextlib.suppress(psutil.Error):
            max(renderers, key=lambda r: r[0])[1].kill()
        return True

    def kill(self) -> None:
        """Stop every process of the tree, then kill them (stopped first, none can fork)."""
        procs = self._live()
        for sig in (signal.SIGSTOP, signal.SIGKILL):
            for p in procs:
                with contextlib.suppress(psutil.Error):
                    p.send_signal(sig)
        with contextlib.suppress(ProcessLookupError, PermissionError):
            os.killpg(self.pid, signal.SIGKILL)
        psutil.wait_procs(procs, timeout=1)


def launcher(browser: str, user_name: str, tmp: str) -> str:
    """The browser, or as root a launcher (in the browser's directory) that drops to
    `[render] user` before it starts Chromium, and gives that user its profile."""
    if os.geteuid() != 0:
        return browser
    user = pwd.getpwnam(user_name)  # checked at start-up: exists, not root
    ids = f"{user.pw_uid}:{user.pw_gid}"
    path = Path(tmp) / "chromium"
    path.write_text(
        "#!/bin/sh\n# sift: the browser never runs as root (sift.browser.tree)\n"
        f'chown {ids} "$HOME"\n'
        'for a in "$@"; do case "$a" in --user-data-dir=*) '
        f'chown -R {ids} "${{a#--user-data-dir=}}";; esac; done\n'
        f"exec setpriv --reuid={user.pw_uid} --regid={user.pw_gid} --clear-groups "
        f'{shlex.quote(browser)} "$@"\n'
    )
    path.chmod(0o700)
    return str(path)
