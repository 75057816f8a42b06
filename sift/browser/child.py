"""The browser child (`python -m sift.browser.child`): one warm Chromium, many renders.

It reads a `Launch` on stdin and starts the system Chromium through Playwright, then serves
`RenderRequest`s as they come, side by side: each in a fresh browser context of its own (its
own storage, cookies, pages and guarded proxy, closed when the render ends), answered with one
`RenderResult`. The page as it is at the budget is the answer: a page that never stops loading
still gives what it rendered. A `Cancel` closes a render's context. The browser's own traffic
goes to a parked port nobody listens on. sift's parent enforces the deadlines and the memory
limit from outside (sift.browser.host); this child only ends when its stdin closes or its
browser is gone.
"""

from __future__ import annotations

import asyncio
import contextlib
import sys
from typing import TYPE_CHECKING

import msgspec

from sift.browser.page import blank, render
from sift.browser.wire import (
    Cancel,
    FromChild,
    Launch,
    Prepare,
    Ready,
    RenderRequest,
    RenderResult,
    ToChild,
    frame,
    length,
)

if TYPE_CHECKING:
    from playwright.async_api import Browser, BrowserContext, Page

# Playwright's own `--disable-features` list is replaced by ours (the last switch wins), so
# ours repeats it, and adds what makes Chromium talk to Google on its own: autofill
# lookups, optimization hints, translation, certificate-transparency and media-router updates.
DISABLED_FEATURES = [
    *["AvoidUnnecessaryBeforeUnloadCheckSync", "DestroyProfileOnBrowserClose", "HttpsUpgrades"],
    *["HttpsFirstBalancedModeAutoEnable", "LensOverlay", "MediaRouter", "PaintHolding"],
    *["ThirdPartyStoragePartitioning", "AvoidCorsURLLoaderRestartOnRedirect"],
    *["OptimizationHints", "NetworkTimeServiceQuerying", "AimEnabled", "PreconnectToSearch"],
    *["NetworkPrediction", "PrefetchPrivacyChanges", "DnsOverHttps"],
    "InterestFeedContentSuggestions",
    *["AutofillServerCommunication", "OptimizationGuideModelDownloading"],
    *["OptimizationHintsFetching", "OptimizationTargetPrediction"],
    *["CertificateTransparencyComponentUpdater", "Translate", "DialMediaRouteProvider"],
]

# Chromium resolves nothing itself (every name goes to the proxy: with a proxy, it sends the
# host name), sends even loopback through the proxy, and leaves WebRTC, prefetch, background
# traffic and the GPU alone. Playwright adds its own defaults (no background networking, no
# component updates, no sync, no first-run).
ARGS = [
    "--host-resolver-rules=MAP * ~NOTFOUND, EXCLUDE 127.0.0.1",
    "--proxy-bypass-list=<-loopback>",
    "--force-webrtc-ip-handling-policy=disable_non_proxied_udp",
    "--webrtc-ip-handling-policy=disable_non_proxied_udp",
    "--dns-prefetch-disable",
    f"--disable-features={','.join(DISABLED_FEATURES)}",
    "--disable-component-update",
    "--disable-domain-reliability",
    "--disable-client-side-phishing-detection",
    "--safebrowsing-disable-auto-update",
    "--no-pings",
    "--disable-gpu",
    "--disable-dev-shm-usage",
]


# Firecrawl's `mobile`: a phone's screen, touch and user agent (a current Android Chrome's).
class Child:
    """The pipe's two ends, the renders in flight, and the context readied for the next render
    (by the proxy port it goes out through: only the render given that proxy takes it)."""

    def __init__(self, reader: asyncio.StreamReader) -> None:
        self.reader = reader
        self.renders: dict[int, asyncio.Task[None]] = {}
        self.spare: tuple[int, asyncio.Task[tuple[BrowserContext, Page]]] | None = None
        self.discarding: set[asyncio.Task[None]] = set()

    async def read(self) -> ToChild | None:
        try:
            body = await self.reader.readexactly(length(await self.reader.readexactly(4)))
        except (asyncio.IncompleteReadError, ValueError):
            return None
        return msgspec.json.decode(body, type=ToChild)

    @staticmethod
    def write(msg: FromChild) -> None:
        sys.stdout.buffer.write(frame(msg))
        sys.stdout.flush()

    async def serve(self, browser: Browser) -> None:
        while (msg := await self.read()) is not None and browser.is_connected():
            if isinstance(msg, RenderRequest):
                spare = None
                if self.spare is not None and self.spare[0] == msg.proxy_port:
                    spare, self.spare = self.spare[1], None
                task = asyncio.ensure_future(self._render(browser, msg, spare))
                self.renders[msg.id] = task
            elif isinstance(msg, Prepare):
                if self.spare is not None:  # not taken: its proxy is gone
                    task = asyncio.ensure_future(_discard(self.spare[1]))
                    self.discarding.add(task)
                    task.add_done_callback(self.discarding.discard)
                self.spare = (
                    msg.proxy_port,
                    asyncio.ensure_future(blank(browser, msg.proxy_port)),
                )
            elif isinstance(msg, Cancel) and msg.id in self.renders:
                self.renders[msg.id].cancel()

    async def _render(
        self,
        browser: Browser,
        req: RenderRequest,
        spare: asyncio.Task[tuple[BrowserContext, Page]] | None,
    ) -> None:
        try:
            result = await render(browser, req, spare)
        except asyncio.CancelledError:
            result = RenderResult(id=req.id, failed="cancelled")
        except Exception as exc:  # the browser broke: said in one line
            why = f"{type(exc).__name__}: {str(exc).splitlines()[0][:300]}"
            result = RenderResult(id=req.id, failed=why)
        finally:
            self.renders.pop(req.id, None)
        if not browser.is_connected():  # the browser died under it
            result = RenderResult(id=req.id, crashed=True)
        self.write(result)


async def _discard(spare: asyncio.Task[tuple[BrowserContext, Page]]) -> None:
    with contextlib.suppress(Exception):
        context, _ = await spare
        await context.close()


async def main() -> None:
    from playwright.async_api import async_playwright

    loop = asyncio.get_running_loop()
    reader = asyncio.StreamReader(limit=2**16)
    await loop.connect_read_pipe(lambda: asyncio.StreamReaderProtocol(reader), sys.stdin)
    child = Child(reader)
    launch = await child.read()
    if not isinstance(launch, Launch):
        return
    async with async_playwright() as pw:
        try:
            browser = await pw.chromium.launch(
                executable_path=launch.browser,
                chromium_sandbox=True,
                args=[*ARGS, f"--proxy-server=http://127.0.0.1:{launch.parked_port}"],
                env={"HOME": _home(), "PATH": "/usr/bin:/bin"},
                timeout=launch.timeout * 1000,
            )
        except Exception as exc:  # the browser did not start: said in one line
            child.write(Ready(failed=f"{type(exc).__name__}: {str(exc).splitlines()[0][:300]}"))
            return
        gone = asyncio.Event()

        def disconnected(_browser: Browser) -> None:
            child.write(Ready(failed="the browser closed"))  # sift sends no more renders
            gone.set()

        browser.on("disconnected", disconnected)
        child.write(Ready())
        serving = asyncio.ensure_future(child.serve(browser))
        await asyncio.wait(
            [serving, asyncio.ensure_future(gone.wait())], return_when="FIRST_COMPLETED"
        )
        for task in list(child.renders.values()):
            task.cancel()
        if child.renders:
            await asyncio.wait(list(child.renders.values()), timeout=5)
        with contextlib.suppress(Exception):
            await asyncio.wait_for(browser.close(), 10)


def _home() -> str:
    import os

    return os.environ.get("TMPDIR", "/tmp")


if __name__ == "__main__":
    asyncio.run(main())
