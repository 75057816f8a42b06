"""What sift and its browser child say to each other over the child's stdin and stdout: typed
msgspec structs, each a length-prefixed JSON frame. The child is long-lived: one `Launch`,
then any number of `RenderRequest`s (and `Cancel`s, `Prepare`s), each answered by one
`RenderResult`."""

from __future__ import annotations

import struct

import msgspec

from sift.core.request import Action

MAX_FRAME = 64 * 1024**2  # a page's HTML (5 MB of text) and a viewport's PNG fit well within
_LENGTH = struct.Struct(">I")


class Launch(msgspec.Struct, tag="launch", kw_only=True):
    browser: str  # the executable Playwright starts (a launcher that drops privileges, as root)
    parked_port: int  # a loopback port nobody listens on: the browser's own traffic goes there
    timeout: float  # seconds the launch may take


class RenderRequest(msgspec.Struct, tag="render", kw_only=True):
    id: int = 0
    url: str
    proxy_port: int  # this render's own guarded proxy
    budget: float  # seconds for the whole render; the page as it is then is the answer
    wait_for: int = 0  # milliseconds to wait after the page loaded (Firecrawl `waitFor`)
    actions: list[Action] = []
    screenshot: bool = False
    mobile: bool = False  # a phone's viewport, touch and user agent
    languages: list[str] = []  # the browser's locale and Accept-Language
    max_html: int = 5_000_000
    # The caller's own headers: set on this render's context only (Cookie as its cookies, the
    # rest on requests to the page's own origin). Never logged.
    headers: dict[str, str] = {}

    def __repr__(self) -> str:
        return f"RenderRequest(id={self.id}, url={self.url!r}, headers=<{len(self.headers)}>)"


class Cancel(msgspec.Struct, tag="cancel"):
    id: int


class Prepare(msgspec.Struct, tag="prepare"):
    """Ready a fresh context and page going out through this proxy, for the next render."""

    proxy_port: int


class Ready(msgspec.Struct, tag="ready", kw_only=True):
    failed: str | None = None  # the browser did not start: why, in one line


class RenderResult(msgspec.Struct, tag="result", kw_only=True):
    id: int = 0
    html: str = ""
    final_url: str = ""
    status: int = 0
    blocked: str | None = None  # the main document was refused by the proxy: its URL
    refused: list[str] = []  # what the browser itself refused to load (file:, chrome:, …)
    timed_out: bool = False  # the page had not finished loading at the budget
    error: str | None = None  # the navigation failed (net::ERR_…)
    failed: str | None = None  # the browser itself failed (closed, cancelled)
    crashed: bool = False  # the page's renderer died (killed over memory, or crashed)
    screenshot: str | None = None  # base64 PNG
    shots: list[str] = []  # base64 PNGs of the `screenshot` actions, in order


ToChild = Launch | RenderRequest | Cancel | Prepare
FromChild = Ready | RenderResult


def frame(msg: msgspec.Struct) -> bytes:
    body = msgspec.json.encode(msg)
    return _LENGTH.pack(len(body)) + body


def length(head: bytes) -> int:
    """The body length a 4-byte frame head announces; ValueError past `MAX_FRAME`."""
    (n,) = _LENGTH.unpack(head)
    if n > MAX_FRAME:
        raise ValueError(f"a frame of {n} bytes")
    return int(n)
