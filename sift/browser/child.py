"""The browser child (`python -m sift.browser.child`): one render, then exit.

It reads a `RenderRequest` on stdin, starts the system Chromium through Playwright with a
fresh profile, points every request at sift's guarded proxy, loads the page, runs the
actions, and writes one `RenderResult` line. The page as it is at the budget is the answer:
a page that never stops loading still gives what it rendered. sift's parent enforces the
hard deadline and the memory limit from outside (sift.browser.engine).
"""

from __future__ import annotations

import base64
import sys
import tempfile
import time
from typing import Any

import msgspec

from sift.browser.proxy import BLOCKED_HEADER
from sift.browser.wire import RenderRequest, RenderResult
from sift.core.request import Action

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
    "--disable-features=NetworkPrediction,PrefetchPrivacyChanges,DnsOverHttps,InterestFeedContentSuggestions",
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


def _context_options(req: RenderRequest) -> dict[str, Any]:
    """The render's own browser context: a desktop's, or a phone's (`mobile`); the caller's
    `languages` as its locale and Accept-Language."""
    options: dict[str, Any] = {
        "service_workers": "block",
        "accept_downloads": False,
        "viewport": {"width": 1280, "height": 900},
    }
    if req.mobile:
        options.update(MOBILE)
    if req.languages:
        options["locale"] = req.languages[0]
        options["extra_http_headers"] = {"Accept-Language": ", ".join(req.languages)}
    return options


def _act(page: object, action: Action, until: float) -> str | None:
    """Run one action; a `screenshot` action's PNG (base64) is returned."""
    from playwright.sync_api import Page

    assert isinstance(page, Page)
    left = max(0.0, until - time.monotonic()) * 1000
    if action.type == "screenshot":
        png = page.screenshot(type="png", timeout=max(1000.0, min(left, 5000.0)))
        return base64.b64encode(png).decode()
    if action.type == "wait":
        if action.selector:
            page.wait_for_selector(action.selector, timeout=left)
        else:
            page.wait_for_timeout(min(left, action.milliseconds or 1000))
    elif action.type == "click" and action.selector:
        page.click(action.selector, timeout=left)
    elif action.type == "scroll":
        dy = -1 if action.direction == "up" else 1
        if action.selector:
            page.locator(action.selector).first.scroll_into_view_if_needed(timeout=left)
        else:
            page.mouse.wheel(0, dy * 2000)
    elif action.type == "write" and action.text is not None:
        page.keyboard.type(action.text)
    elif action.type == "press" and action.key:
        page.keyboard.press(action.key)
    return None


def render(req: RenderRequest) -> RenderResult:
    from playwright.sync_api import Error, sync_playwright
    from playwright.sync_api import TimeoutError as PlaywrightTimeout

    started = time.monotonic()
    until = started + req.budget
    out = RenderResult(final_url=req.url)
    with tempfile.TemporaryDirectory(prefix="sift-browser-") as home, sync_playwright() as pw:
        browser = pw.chromium.launch(
            executable_path=req.browser,
            chromium_sandbox=True,
            args=[*ARGS, f"--proxy-server=http://127.0.0.1:{req.proxy_port}"],
            env={"HOME": home, "PATH": "/usr/bin:/bin"},
            timeout=max(1000.0, req.budget * 500),
        )
        context = browser.new_context(**_context_options(req))
        # file:, chrome:, data: and anything else that is not the web never loads.
        context.route(lambda url: not url.startswith(("http:", "https:")), lambda r: r.abort())
        page = context.new_page()
        try:
            left = max(1.0, until - time.monotonic() - 1.5)
            response = page.goto(req.url, wait_until="load", timeout=left * 1000)
            if response is not None:
                out.status = response.status
                out.blocked = response.headers.get(BLOCKED_HEADER.lower()) == "1"
        except PlaywrightTimeout:
            out.timed_out = True
        except Error as exc:
            out.error = str(exc).splitlines()[0][:300]
        if out.error is None and not out.blocked:
            try:
                if req.wait_for:
                    left = max(0.0, until - time.monotonic()) * 1000
                    page.wait_for_timeout(min(req.wait_for, left))
                for action in req.actions:
                    if (shot := _act(page, action, until)) is not None:
                        out.shots.append(shot)
            except PlaywrightTimeout:
                out.timed_out = True
            except Error as exc:
                out.error = f"action failed: {str(exc).splitlines()[0][:200]}"
            out.final_url = page.url
            out.html = page.content()[: req.max_html]
            if req.screenshot:
                png = page.screenshot(type="png", timeout=max(1000.0, 5000.0))
                out.screenshot = base64.b64encode(png).decode()
        context.close()
        browser.close()
    return out


def main() -> None:
    req = msgspec.json.decode(sys.stdin.buffer.read(), type=RenderRequest)
    try:
        result = render(req)
    except Exception as exc:  # the browser did not start or died: said in one line
        result = RenderResult(failed=f"{type(exc).__name__}: {str(exc).splitlines()[0][:300]}")
    sys.stdout.buffer.write(msgspec.json.encode(result) + b"\n")
    sys.stdout.flush()


if __name__ == "__main__":
    main()
