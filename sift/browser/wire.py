"""What sift tells the browser child (one JSON document on stdin) and what it answers (one
JSON line on stdout), as typed msgspec structs."""

from __future__ import annotations

import msgspec

from sift.core.request import Action


class RenderRequest(msgspec.Struct, kw_only=True):
    url: str
    proxy_port: int
    browser: str  # the executable Playwright starts (a launcher that drops privileges, as root)
    budget: float  # seconds for the whole render; the page as it is then is the answer
    wait_for: int = 0  # milliseconds to wait after the page loaded (Firecrawl `waitFor`)
    actions: list[Action] = []
    screenshot: bool = False
    mobile: bool = False  # a phone's viewport, touch and user agent
    languages: list[str] = []  # the browser's locale and Accept-Language
    max_html: int = 5_000_000


class RenderResult(msgspec.Struct, kw_only=True):
    html: str = ""
    final_url: str = ""
    status: int = 0
    blocked: bool = False  # the main document was refused by the proxy
    timed_out: bool = False  # the page had not finished loading at the budget
    error: str | None = None  # the navigation failed (net::ERR_…)
    failed: str | None = None  # the browser itself failed (did not start, crashed)
    screenshot: str | None = None  # base64 PNG
    shots: list[str] = []  # base64 PNGs of the `screenshot` actions, in order
