"""What sift tells the browser child (one JSON document on stdin) and what it answers (one
JSON line on stdout), as typed msgspec structs."""

from __future__ import annotations

from typing import Literal

import msgspec


class Action(msgspec.Struct, forbid_unknown_fields=False, kw_only=True):
    """One Firecrawl action of the kinds sift supports (others are refused up front)."""

    type: Literal["wait", "click", "scroll", "write", "press"]
    milliseconds: int | None = None  # wait
    selector: str | None = None  # wait, click, scroll
    text: str | None = None  # write
    key: str | None = None  # press
    direction: Literal["up", "down"] = "down"  # scroll


class RenderRequest(msgspec.Struct, kw_only=True):
    url: str
    proxy_port: int
    browser: str  # the executable Playwright starts (a launcher that drops privileges, as root)
    budget: float  # seconds for the whole render; the page as it is then is the answer
    wait_for: int = 0  # milliseconds to wait after the page loaded (Firecrawl `waitFor`)
    actions: list[Action] = []
    screenshot: bool = False
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
