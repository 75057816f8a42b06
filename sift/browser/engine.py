"""The render engine: browser slots, one warm browser, and a render's own context and guarded
proxy.

A render takes a slot (one per caller: 429; all taken: 503 with Retry-After, as the PDF pool
answers), starts a `GuardedProxy` on a loopback port, and sends the render to the warm
browser (`sift.browser.host`), which opens a fresh context for it that goes out through that
proxy only. The browser is started by the first render (an idle server holds no Chromium:
its processes are most of an idle sift's memory), kept warm while renders come, started again
when it crashed, was killed, after `[render] recycle_after` renders, or over `[render]
max_rss` (a recycled browser ends once its renders answered), and given back after `[render]
idle_after` without a render; the next render starts another.

Where sift runs as root, Chromium is started through a launcher that drops to `[render] user`
(with Chromium's own sandbox on: it needs user namespaces, not root). It never runs as root.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import os
from collections.abc import Coroutine, Iterator
from dataclasses import dataclass, field
from typing import Any
from urllib.parse import urlsplit

from sift.browser.host import Host
from sift.browser.proxy import AddressFor, GuardedProxy, Sign
from sift.browser.wire import RenderRequest, RenderResult
from sift.core import metrics
from sift.core.config import RenderConfig
from sift.core.errors import Blocked, CallerBusy, NoBrowser, Unavailable, UpstreamError
from sift.core.request import Action

log = logging.getLogger("sift.browser")
INSTALL = "apt-get install chromium"
GRACE = 8.0  # past the render's budget, how long the browser has to answer
LAUNCH = 60.0  # seconds a browser's start may take


@dataclass
class Rendered:
    """A render's outcome: the DOM as HTML and what was refused."""

    html: str
    final_url: str
    status: int
    refused: str | None = None  # the proxy's refusals, counted by host and reason
    local: list[str] = field(default_factory=list)  # what Chromium refused (file:, chrome:…)
    timed_out: bool = False
    capped: bool = False
    screenshot: str | None = None
    shots: list[str] = field(default_factory=list)  # the `screenshot` actions' PNGs

    @property
    def blocked(self) -> bool:
        return bool(self.refused or self.local)

    @property
    def warning(self) -> str | None:
        notes = [self.refused] if self.refused else []
        if self.local:
            notes.append(f"the browser refused to load {', '.join(self.local)} (not the web)")
        if self.timed_out:
            notes.append("the page was still loading at the deadline; this is what it showed")
        if self.capped:
            notes.append("the page received more than the render's byte cap; loading was cut")
        return "; ".join(notes) or None


@dataclass(frozen=True)
class Page:
    """What a caller asks of one render: the page, and how to read it."""

    url: str
    budget: float | None = None  # seconds; at most `[render] deadline`
    wait_for: int = 0  # milliseconds after load (Firecrawl `waitFor`)
    actions: tuple[Action, ...] = ()
    screenshot: bool = False
    headers: dict[str, str] | None = None  # the caller's own; never logged
    mobile: bool = False
    languages: tuple[str, ...] = ()


class Engine:
    """Renders pages; `available` says whether a browser is installed and rendering is on.

    `address_for` is sift's guard for one `host:port` (the service passes `Guard.address_for`):
    each render's proxy asks it for every connection the browser makes."""

    def __init__(
        self, cfg: RenderConfig, address_for: AddressFor, sign: Sign | None = None
    ) -> None:
        self.cfg = cfg
        self.address_for = address_for
        self.sign = sign  # sift's identity, applied by each render's proxy
        self.installed = os.access(cfg.browser, os.X_OK)
        self.available = cfg.enabled and self.installed
        self.launches = 0  # browsers started
        self._callers: set[str] = set()
        self._host: Host | None = None  # the browser new renders go to
        self._hosts: set[Host] = set()  # every browser not yet gone (recycled ones too)
        self._starting: asyncio.Future[Host] | None = None
        self._stopping = False
        # A proxy whose browser has a fresh context readied through it, for the next render.
        self._spare: tuple[Host, GuardedProxy, int] | None = None
        self._tasks: set[asyncio.Task[None]] = set()
        self._rested = 0.0  # loop time the last render ended, or the browser started
        self._idle: asyncio.TimerHandle | None = None  # gives the browser back when it fires

    def _signed(self, url: str) -> dict[str, str]:
        """sift's signature for an https page's own origin, set on that origin's requests by
        the child (they pass the proxy inside TLS it cannot sign; plain HTTP it signs itself).
        Only signatures go to the child, each for that one authority: never the key."""
        parts = urlsplit(url)
        if self.sign is None or parts.scheme != "https" or not parts.hostname:
            return {}
        lines = self.sign("https", parts.hostname, parts.port or 443)
        return dict(line.split(": ", 1) for line in lines)

    def check(self) -> None:
        """Raise the error that says why this server cannot render."""
        if not self.cfg.enabled:
            raise NoBrowser("rendering is off on this server ([render] enabled = false)")
        if not self.installed:
            raise NoBrowser(f"render engine not installed: {INSTALL} ({self.cfg.browser})")

    @contextlib.contextmanager
    def slot(self, caller: str) -> Iterator[None]:
        if caller in self._callers:
            raise CallerBusy("busy: a render of yours is in flight; retry shortly", retry_after=2)
        if len(self._callers) >= self.cfg.slots:
            raise Unavailable("browser slots busy; retry shortly", hint="retry", retry_after=10)
        self._callers.add(caller)
        try:
            yield
        finally:
            self._callers.discard(caller)
            self._rest()

    @property
    def state(self) -> str:
        """The browser now, as `/healthz` says it: `running`, `starting`, or `idle` (no
        Chromium: the next render starts one). Reading it starts nothing."""
        if self._host is not None and self._host.alive and not self._host.retired:
            return "running"
        return "starting" if self._starting is not None else "idle"

    def warm(self) -> None:
        """Start the next browser in the background (on the running loop), so that the next
        render finds it warm; a failed start is tried again by the next render."""
        if self.available and not self._stopping and self._starting is None:
            self._starting = asyncio.ensure_future(self._launch())
            self._starting.add_done_callback(lambda f: f.cancelled() or f.exception())

    def _rest(self) -> None:
        """A render ended or a browser started: the idle time counts from now, and a give-back
        is due once it passed with no render (`[render] idle_after`; 0: never)."""
        loop = asyncio.get_running_loop()
        self._rested = loop.time()
        if self.cfg.idle_after > 0 and self._idle is None and not self._stopping:
            self._idle = loop.call_later(self.cfg.idle_after, self._give_back)

    def _give_back(self) -> None:
        """Past `idle_after` with no render in flight or starting: the browser is retired (it
        ends at once: none of its renders is left) and its readied context with it. A render
        arriving meanwhile starts the next browser and does not wait for this one's end."""
        self._idle = None
        if self._stopping or self._host is None or self._callers or self._starting is not None:
            return  # nothing to give back, or busy: the render's end (or the start) counts again
        loop = asyncio.get_running_loop()
        if (due := self._rested + self.cfg.idle_after - loop.time()) > 0:
            self._idle = loop.call_later(due, self._give_back)
            return
        host, self._host = self._host, None
        self._drop_spare(host)
        host.retire()
        log.info("the browser was idle for %.0f s; given back", self.cfg.idle_after)

    def _prepare(self, host: Host) -> None:
        """Ready the next render's proxy, and a context and page through it in the browser,
        while no render waits (most of a warm render's time is starting them). Only a browser
        that just answered a render, and takes more, gets one (`recycle_after = 1` starts each
        on the render, as before the warm pool)."""
        if self._spare is None and host is self._host and host.alive and not host.retired:
            self._later(self._ready(host))

    def _drop_spare(self, host: Host) -> None:
        """A browser taking no more renders: the proxy readied for it closed."""
        if self._spare is not None and self._spare[0] is host:
            self._later(self._spare[1].close())
            self._spare = None

    def _later(self, work: Coroutine[Any, Any, None]) -> None:
        task = asyncio.ensure_future(work)
        self._tasks.add(task)
        task.add_done_callback(self._tasks.discard)

    async def _ready(self, host: Host) -> None:
        proxy = GuardedProxy(self.address_for, self.cfg.max_bytes, self.sign)
        port = await proxy.start()
        if self._spare is None and host is self._host and host.alive and not host.retired:
            self._spare = (host, proxy, port)
            with contextlib.suppress(OSError, RuntimeError):
                await host.prepare(port)
        else:
            await proxy.close()

    async def _proxy(self, host: Host) -> tuple[GuardedProxy, int]:
        """This render's own proxy: the one readied for `host`, or a new one."""
        spare, self._spare = self._spare, None
        if spare is not None and spare[0] is host:
            return spare[1], spare[2]
        if spare is not None:
            await spare[1].close()
        proxy = GuardedProxy(self.address_for, self.cfg.max_bytes, self.sign)
        return proxy, await proxy.start()

    async def _browser(self, timeout: float) -> Host:
        """The warm browser, started (or waited for) when there is none. A browser giving back
        a memory strike's memory is waited out first: it may yet be killed for it."""
        host = self._host
        if host is not None and host.alive and not host.retired:
            await host.calm()
            if host is self._host and host.alive and not host.retired:
                return host
        if self._starting is None:
            self._starting = asyncio.ensure_future(self._launch())
        try:
            return await asyncio.wait_for(asyncio.shield(self._starting), timeout)
        except TimeoutError:
            why = f"the browser did not start in {timeout:.0f} s"
            raise Unavailable(why, hint="retry", retry_after=10) from None

    async def _launch(self) -> Host:
        try:
            host = Host(self.cfg, self._gone)
            self._hosts.add(host)
            try:
                await host.start(LAUNCH)
            except OSError as exc:  # no child process: nothing of it to wait for
                self._hosts.discard(host)
                host.kill()
                raise Unavailable(f"the browser did not start: {exc}", hint="retry") from None
            self.launches += 1
            metrics.BROWSER_LAUNCHES.inc()
            if self._stopping:
                await host.close()
            self._host = host
            self._rest()
            return host
        finally:
            self._starting = None

    def _gone(self, host: Host) -> None:
        """A browser ended: forgotten, and (unless recycled or stopping) started again."""
        self._hosts.discard(host)
        self._drop_spare(host)
        if self._host is host:
            self._host = None
            if host.renders and not self._stopping:
                log.warning("the browser ended; starting another")
                self.warm()

    def _recycle(self, host: Host) -> None:
        """Past `recycle_after` renders a browser ends once its renders answered, and the next
        starts now; `recycle_after = 1` is a browser per render, started by it (no warm one)."""
        if host.renders >= self.cfg.recycle_after and not host.retired:
            host.retire()
            self._drop_spare(host)
            if self._host is host:
                self._host = None
            if self.cfg.recycle_after > 1:
                self.warm()

    async def close(self) -> None:
        """At shutdown: every browser closed (renders in flight answer 503)."""
        self._stopping = True
        self._rest_no_more()
        if self._starting is not None:
            await asyncio.wait([self._starting], timeout=LAUNCH + 10)
        if self._spare is not None:
            await self._spare[1].close()
        await asyncio.gather(*(h.close() for h in list(self._hosts)), return_exceptions=True)

    def stop(self) -> None:
        """Without a loop: every browser process killed, its files removed."""
        self._stopping = True
        self._rest_no_more()
        for host in list(self._hosts):
            host.kill()

    def _rest_no_more(self) -> None:
        if self._idle is not None:
            self._idle.cancel()
            self._idle = None

    async def render(self, caller: str, page: Page) -> Rendered:
        """Render `page.url` (already pre-checked by the guard) in a fresh context of the warm
        browser; the page as it is at the deadline is the answer. `page.headers` (the
        caller's own) are set on that context alone.

        Raises:
            NoBrowser: no browser, or rendering off.
            CallerBusy / Unavailable: the caller's render in flight / every slot taken; the
                browser did not start, or crashed.
            Blocked: the proxy refused the main document (or a redirect of it, or where the
                page went after load).
            Unprocessable: the render was killed over its memory limit or deadline.
            UpstreamError: the page could not be loaded.
        """
        self.check()
        budget = min(page.budget or self.cfg.deadline, self.cfg.deadline)
        with self.slot(caller):
            host = await self._browser(LAUNCH)
            proxy, port = await self._proxy(host)
            try:
                req = RenderRequest(
                    url=page.url,
                    proxy_port=port,
                    budget=budget,
                    wait_for=page.wait_for,
                    actions=list(page.actions),
                    screenshot=page.screenshot,
                    headers={**(page.headers or {}), **self._signed(page.url)},
                    mobile=page.mobile,
                    languages=list(page.languages),
                )
                try:
                    result = await host.render(req, budget + GRACE)
                finally:
                    self._recycle(host)
            finally:
                await proxy.close()
        self._prepare(host)
        return _rendered(page.url, result, proxy)


def _rendered(url: str, result: RenderResult, proxy: GuardedProxy) -> Rendered:
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
        refused=proxy.summary(),
        local=result.refused,
        timed_out=result.timed_out,
        capped=proxy.capped,
        screenshot=result.screenshot,
        shots=result.shots,
    )
