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
import base64
import contextlib
import re
import sys
import time
from typing import TYPE_CHECKING, Any

import msgspec

from sift.browser.proxy import BLOCKED_HEADER
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
from sift.core.request import Action

if TYPE_CHECKING:
    from playwright.async_api import Browser, BrowserContext, ConsoleMessage, Page, Response

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
MOBILE: dict[str, Any] = {
    "viewport": {"width": 390, "height": 844},
    "is_mobile": True,
    "has_touch": True,
    "user_agent": (
        "Mozilla/5.0 (Linux; Android 14; Pixel 8) AppleWebKit/537.36 (KHTML, like Gecko) "
        "Chrome/130.0.0.0 Mobile Safari/537.36"
    ),
}
LOCAL = "Not allowed to load local resource: "  # how Chromium says it refused file:, chrome:…
MAX_REFUSED = 20


async def _act(page: Page, action: Action, until: float) -> str | None:
    """Run one action; a `screenshot` action's PNG (base64) is returned."""
    left = max(0.0, until - time.monotonic()) * 1000
    if action.type == "screenshot":
        png = await page.screenshot(type="png", timeout=max(1000.0, min(left, 5000.0)))
        return base64.b64encode(png).decode()
    if action.type == "wait":
        if action.selector:
            await page.wait_for_selector(action.selector, timeout=left)
        else:
            await page.wait_for_timeout(min(left, action.milliseconds or 1000))
    elif action.type == "click" and action.selector:
        await page.click(action.selector, timeout=left)
    elif action.type == "scroll":
        dy = -1 if action.direction == "up" else 1
        if action.selector:
            await page.locator(action.selector).first.scroll_into_view_if_needed(timeout=left)
        else:
            await page.mouse.wheel(0, dy * 2000)
    elif action.type == "write" and action.text is not None:
        await page.keyboard.type(action.text)
    elif action.type == "press" and action.key:
        await page.keyboard.press(action.key)
    return None


class Watch:
    """What a render's page does on its own: where its main frame landed, whether its
    renderer died, and what Chromium refused to load for it."""

    def __init__(self, page: Page, out: RenderResult) -> None:
        self.page = page
        self.out = out
        page.on("response", self._response)
        page.on("console", self._console)
        page.on("crash", self._crash)

    def _response(self, response: Response) -> None:
        request = response.request
        if request.frame == self.page.main_frame and request.is_navigation_request():
            refused = response.headers.get(BLOCKED_HEADER.lower()) == "1"
            self.out.blocked = response.url[:300] if refused else None

    def _console(self, msg: ConsoleMessage) -> None:
        refused = self.out.refused
        if not msg.args and msg.text.startswith(LOCAL) and len(refused) < MAX_REFUSED:
            url = msg.text.removeprefix(LOCAL)[:100]
            if url not in refused:
                refused.append(url)

    def _crash(self, _page: Page) -> None:
        self.out.crashed = True


async def _blank(
    browser: Browser, port: int, req: RenderRequest | None = None
) -> tuple[BrowserContext, Page]:
    """A fresh context going out through the proxy on `port` alone, and its first page."""
    options: dict[str, Any] = {
        "proxy": {"server": f"http://127.0.0.1:{port}"},
        "service_workers": "block",
        "accept_downloads": False,
        "viewport": {"width": 1280, "height": 900},
    }
    if req is not None and req.mobile:  # Firecrawl's `mobile`: a phone's screen and touch
        options.update(MOBILE)
    if req is not None and req.languages:  # `location.languages`: locale and Accept-Language
        options["locale"] = req.languages[0]
        options["extra_http_headers"] = {"Accept-Language": ", ".join(req.languages)}
    context = await browser.new_context(**options)
    try:
        # file:, chrome:, data: and anything else that is not the web never loads.
        await context.route(re.compile(r"^(?!https?:)"), lambda route: route.abort())
        return context, await context.new_page()
    except BaseException:
        with contextlib.suppress(Exception):
            await context.close()
        raise


async def _ready(
    browser: Browser, req: RenderRequest, spare: asyncio.Task[tuple[BrowserContext, Page]] | None
) -> tuple[BrowserContext, Page]:
    """The context readied for this render's proxy while no render ran (starting a context and
    its page's renderer is most of a warm render's time), when the render needs no other
    options; else a new one."""
    if spare is not None:
        with contextlib.suppress(Exception):
            context, page = await spare
            if not req.mobile and not req.languages and not page.is_closed():
                return context, page
            await context.close()
    return await _blank(browser, req.proxy_port, req)


async def _own(context: BrowserContext, req: RenderRequest) -> None:
    """The caller's headers on this render's context alone: `Cookie` as its cookies
    (host-only, for the page's host), the others on requests to the page's own origin
    (scheme, host and port), never elsewhere."""
    headers = {k: v for k, v in req.headers.items() if k.lower() != "cookie"}
    cookies = [v for k, v in req.headers.items() if k.lower() == "cookie"]
    if cookies:
        pairs = (c.strip().partition("=") for c in cookies[0].split(";"))
        await context.add_cookies(
            [{"name": n.strip(), "value": v, "url": req.url} for n, _, v in pairs if n.strip()]
        )
    if headers:
        scheme, _, rest = req.url.partition("://")
        origin = f"{scheme}://{rest.split('/', 1)[0].split('?', 1)[0]}"
        same = re.compile(re.escape(origin) + r"([/?#]|$)", re.IGNORECASE)
        await context.route(
            same, lambda route: route.continue_(headers={**route.request.headers, **headers})
        )


async def render(
    browser: Browser,
    req: RenderRequest,
    spare: asyncio.Task[tuple[BrowserContext, Page]] | None = None,
) -> RenderResult:
    from playwright.async_api import Error
    from playwright.async_api import TimeoutError as PlaywrightTimeout

    until = time.monotonic() + req.budget
    out = RenderResult(id=req.id, final_url=req.url)
    context, page = await _ready(browser, req, spare)
    try:
        await _own(context, req)
        Watch(page, out)
        try:
            left = max(1.0, until - time.monotonic() - 1.5)
            response = await page.goto(req.url, wait_until="load", timeout=left * 1000)
            if response is not None:
                out.status = response.status
        except PlaywrightTimeout:
            out.timed_out = True
        except Error as exc:
            out.error = str(exc).splitlines()[0][:300]
        if out.error is None and out.blocked is None and not out.crashed:
            await _settle(page, req, until, out)
        if page.url.startswith("chrome-error:") and out.error is None:
            out.error = "the page navigated to an address that could not be loaded"
    except Error as exc:
        out.error = out.error or str(exc).splitlines()[0][:300]
    finally:
        with contextlib.suppress(Exception):
            await asyncio.wait_for(context.close(), 5)
    return out


async def _settle(page: Page, req: RenderRequest, until: float, out: RenderResult) -> None:
    """After load: the wait, the actions, then the page as it is (and its screenshot)."""
    from playwright.async_api import Error
    from playwright.async_api import TimeoutError as PlaywrightTimeout

    try:
        if req.wait_for:
            left = max(0.0, until - time.monotonic()) * 1000
            await page.wait_for_timeout(min(req.wait_for, left))
        for action in req.actions:
            if (shot := await _act(page, action, until)) is not None:
                out.shots.append(shot)
    except PlaywrightTimeout:
        out.timed_out = True
    except Error as exc:
        out.error = f"action failed: {str(exc).splitlines()[0][:200]}"
    out.final_url = page.url
    out.html = (await page.content())[: req.max_html]
    if req.screenshot:
        png = await page.screenshot(type="png", timeout=5000.0)
        out.screenshot = base64.b64encode(png).decode()


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
                    asyncio.ensure_future(_blank(browser, msg.proxy_port)),
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
