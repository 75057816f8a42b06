"""One render in the browser child: a fresh context of its own (or the one readied for it), the
caller's actions, the page watched for what it answered and refused, and the page as it is at
the budget (`render`). The child's process and its pipe are `sift.browser.child`."""

from __future__ import annotations

import asyncio
import base64
import contextlib
import re
import time
from typing import TYPE_CHECKING, Any

from sift.browser.proxy import BLOCKED_HEADER
from sift.browser.wire import RenderRequest, RenderResult
from sift.core.request import Action

if TYPE_CHECKING:
    from playwright.async_api import Browser, BrowserContext, ConsoleMessage, Page, Response

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


async def blank(
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
    return await blank(browser, req.proxy_port, req)


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
