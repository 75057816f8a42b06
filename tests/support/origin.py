"""The session's loopback ORIGIN: a Tornado app in its own thread on 127.0.0.1:0.

Tests and `bench/` fetch from it instead of the internet. It counts requests per path and
keeps their headers, and it has named behaviours:

    /article        a realistic article page (nav, headings, list, table, ads, footer)
    /json /text     a JSON document / plain text (`origin.text_body`)
    /image.png      a real PNG
    /slow?secs=N    sends nothing for N seconds (ends early at shutdown or client close)
    /big?mb=N       an N MB HTML body
    /gzipbomb       ~1 MB of gzip (Content-Encoding: gzip) that inflates to 1 GiB
    /redirect?to=URL&code=302   /chain?n=K (K redirects, then 200); `&utf8=1` sends the
                    Location as raw UTF-8 bytes
    /bigheader?kb=N a response with an N kB header line
    /status/<code>  that status with a small HTML body
    /members        the members' article only with `Cookie: session=<MEMBER_COOKIE>`, else a
                    public teaser; either says whether an Authorization header arrived
    /etag           ETag "v1"; 304 to a matching If-None-Match (see `set_etag`)
    /reset          resets the connection (RST) without answering
    /hold/<name>    answers once the test calls `origin.release(name)`; `wait_arrived(name)`
                    waits until a request got there. A release lasts for the session, so
                    each test uses its own names.

Tests register their own paths with `set`, `set_etag`, `set_slow` and `route`, and get a port
that refuses connections from `refusing_port` / `refused_url()`.
"""

from __future__ import annotations

import asyncio
import http
import json
import socket
import struct
import threading
import zlib
from collections import defaultdict
from collections.abc import Awaitable, Callable, Iterator
from dataclasses import dataclass, field
from typing import Any

import pytest
import tornado.httpserver
import tornado.httputil
import tornado.iostream
import tornado.netutil
import tornado.web

HTML = "text/html; charset=utf-8"
CHUNK = 64 * 1024

Handler = Callable[["OriginHandler"], Awaitable[None]]


@dataclass
class _Entry:
    """What a registered path answers."""

    body: bytes = b""
    content_type: str = HTML
    status: int = 200
    headers: dict[str, str] = field(default_factory=dict)
    etag: str | None = None
    last_modified: str | None = None
    slow: float = 0.0
    handler: Handler | None = None


class Origin:
    """The origin server; `start()` once, `stop()` at the end (the `origin` fixture does both).

    `host` may be another loopback address (127.0.0.2) for a second origin in a test.
    """

    def __init__(self, host: str = "127.0.0.1") -> None:
        self.host = host
        self.port = 0
        self.text_body = TEXT
        self.article_body = ARTICLE
        self._lock = threading.Lock()
        self._counts: dict[str, int] = defaultdict(int)
        self._headers: dict[str, list[tornado.httputil.HTTPHeaders]] = defaultdict(list)
        self._entries: dict[str, _Entry] = {
            "/etag": _Entry(body=b"<html><body><p>etag v1</p></body></html>", etag='"v1"')
        }
        self._arrived: dict[str, threading.Event] = defaultdict(threading.Event)
        self._loop: asyncio.AbstractEventLoop | None = None
        self._holds: dict[str, asyncio.Event] = {}
        self._stopping: asyncio.Event | None = None
        self._ready = threading.Event()
        self._thread = threading.Thread(target=self._run, name="origin", daemon=True)
        self._refusing = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
        self._refusing.bind(("127.0.0.1", 0))  # bound, never listening: connects are refused
        self.refusing_port: int = self._refusing.getsockname()[1]

    # -- the test's side --------------------------------------------------------------------

    def url(self, path: str = "/") -> str:
        return f"http://{self.host}:{self.port}{path}"

    def refused_url(self, path: str = "/") -> str:
        """A URL on a loopback port that refuses connections."""
        return f"http://127.0.0.1:{self.refusing_port}{path}"

    def count(self, path: str) -> int:
        """Requests seen for `path` (without the query)."""
        with self._lock:
            return self._counts.get(path, 0)

    def requests(self, path: str) -> list[tornado.httputil.HTTPHeaders]:
        """The request headers of every request for `path`, oldest first."""
        with self._lock:
            return list(self._headers.get(path, []))

    def last_headers(self, path: str) -> tornado.httputil.HTTPHeaders:
        """The headers of the latest request for `path` (case-insensitive; empty if none)."""
        seen = self.requests(path)
        return seen[-1] if seen else tornado.httputil.HTTPHeaders()

    def reset_counts(self) -> None:
        with self._lock:
            self._counts.clear()
            self._headers.clear()

    def set(
        self,
        path: str,
        body: bytes | str,
        content_type: str = HTML,
        status: int = 200,
        headers: dict[str, str] | None = None,
    ) -> None:
        """Serve `body` at `path` (replacing any behaviour there). `content_type=""` sends none."""
        data = body.encode() if isinstance(body, str) else body
        self._put(path, _Entry(data, content_type, status, dict(headers or {})))

    def set_etag(
        self,
        path: str,
        etag: str,
        body: bytes | str,
        content_type: str = HTML,
        last_modified: str | None = None,
    ) -> None:
        """Serve `body` with `etag` (and Last-Modified); a matching validator gets a 304."""
        data = body.encode() if isinstance(body, str) else body
        self._put(path, _Entry(data, content_type, etag=etag, last_modified=last_modified))

    def set_slow(self, path: str, secs: float, body: bytes | str = b"slow done") -> None:
        """`path` sends nothing for `secs` seconds, then `body`."""
        data = body.encode() if isinstance(body, str) else body
        self._put(path, _Entry(data, slow=secs))

    def route(self, path: str, handler: Handler) -> None:
        """Serve `path` with `await handler(request_handler)` (runs on the origin's loop)."""
        self._put(path, _Entry(handler=handler))

    def release(self, name: str) -> None:
        """Let the requests waiting at `/hold/<name>` (now or later) answer."""
        assert self._loop is not None
        self._loop.call_soon_threadsafe(self._hold(name).set)

    def wait_arrived(self, name: str, timeout: float = 10.0) -> bool:
        """Wait until a request for `/hold/<name>` has reached the origin."""
        with self._lock:
            event = self._arrived[name]
        return event.wait(timeout)

    wait_for_hold = wait_arrived

    # -- lifecycle ---------------------------------------------------------------------------

    def start(self) -> Origin:
        self._thread.start()
        if not self._ready.wait(10):
            raise RuntimeError("origin did not start")
        return self

    def stop(self) -> None:
        if self._loop is not None and self._stopping is not None:
            self._loop.call_soon_threadsafe(self._stopping.set)
        self._thread.join(20)
        self._refusing.close()

    def _run(self) -> None:
        loop = asyncio.new_event_loop()
        asyncio.set_event_loop(loop)
        self._loop = loop
        try:
            loop.run_until_complete(self._serve_until_stopped())
            pending = asyncio.all_tasks(loop)
            for task in pending:
                task.cancel()
            loop.run_until_complete(asyncio.gather(*pending, return_exceptions=True))
            loop.run_until_complete(loop.shutdown_asyncgens())
        finally:
            loop.close()

    async def _serve_until_stopped(self) -> None:
        self._stopping = asyncio.Event()
        app = tornado.web.Application(
            [(r"/.*", OriginHandler, {"origin": self})], log_function=lambda _h: None
        )
        server = tornado.httpserver.HTTPServer(app)
        sockets = tornado.netutil.bind_sockets(0, self.host)
        self.port = sockets[0].getsockname()[1]
        server.add_sockets(sockets)
        self._ready.set()
        await self._stopping.wait()
        server.stop()
        await server.close_all_connections()

    # -- the loop's side ----------------------------------------------------------------------

    def _put(self, path: str, entry: _Entry) -> None:
        with self._lock:
            self._entries[path] = entry

    def _entry(self, path: str) -> _Entry | None:
        with self._lock:
            return self._entries.get(path)

    def _record(self, path: str, headers: tornado.httputil.HTTPHeaders) -> None:
        with self._lock:
            self._counts[path] += 1
            self._headers[path].append(tornado.httputil.HTTPHeaders(headers))
            if path.startswith("/hold/"):
                self._arrived[path[len("/hold/") :]].set()

    def _hold(self, name: str) -> asyncio.Event:
        if name not in self._holds:
            self._holds[name] = asyncio.Event()
        return self._holds[name]


class OriginHandler(tornado.web.RequestHandler):
    """Every request: record it, then the registered entry or the named behaviour."""

    def initialize(self, origin: Origin) -> None:
        self.origin = origin
        self.gone = asyncio.Event()

    def compute_etag(self) -> str | None:
        return None  # no automatic ETags (and 304s) except where a test asks for one

    def prepare(self) -> None:
        self.origin._record(self.request.path, self.request.headers)

    def on_connection_close(self) -> None:
        self.gone.set()

    async def get(self) -> None:
        path = self.request.path
        entry = self.origin._entry(path)
        if entry is not None:
            await self._serve_entry(entry)
            return
        name, _, rest = path[1:].partition("/")
        behaviour = BEHAVIOURS.get(name)
        if behaviour is None:
            self.set_status(404)
            self.finish("<html><body><h1>Not Found</h1></body></html>")
            return
        await behaviour(self, rest)

    async def wait(self, event: asyncio.Event | None, secs: float | None) -> bool:
        """Wait for `event` (or `secs`); False if the client left or the origin is stopping."""
        assert self.origin._stopping is not None
        waits = [self.gone.wait(), self.origin._stopping.wait()]
        if event is not None:
            waits.append(event.wait())
        tasks = [asyncio.ensure_future(w) for w in waits]
        try:
            await asyncio.wait(tasks, timeout=secs, return_when=asyncio.FIRST_COMPLETED)
        finally:
            for task in tasks:
                task.cancel()
        return not self.gone.is_set() and not self.origin._stopping.is_set()

    async def send(self, body: bytes | Iterator[bytes], content_type: str = HTML) -> None:
        """Write `body` in flushed chunks; stop quietly when the client hangs up."""
        if content_type:
            self.set_header("Content-Type", content_type)
        else:
            self.clear_header("Content-Type")
        chunks = _chunks(body) if isinstance(body, bytes) else body
        try:
            for chunk in chunks:
                self.write(chunk)
                await self.flush()
            self.finish()
        except tornado.iostream.StreamClosedError:
            pass

    async def _serve_entry(self, e: _Entry) -> None:
        if e.handler is not None:
            await e.handler(self)
            return
        if e.slow and not await self.wait(None, e.slow):
            return
        self.set_status(e.status)
        for name, value in e.headers.items():
            self.set_header(name, value)
        if e.etag is not None:
            self.set_header("ETag", e.etag)
        if e.last_modified is not None:
            self.set_header("Last-Modified", e.last_modified)
        inm = self.request.headers.get("If-None-Match")
        ims = self.request.headers.get("If-Modified-Since")
        if (e.etag and inm == e.etag) or (e.last_modified and not inm and ims == e.last_modified):
            self.set_status(304)
            self.finish()
            return
        if e.headers.get("Content-Length") is None:
            self.set_header("Content-Length", str(len(e.body)))
        await self.send(e.body, e.content_type)


def _chunks(data: bytes) -> Iterator[bytes]:
    for start in range(0, len(data), CHUNK):
        yield data[start : start + CHUNK]


# -- named behaviours ---------------------------------------------------------------------------


async def _article(h: OriginHandler, _rest: str) -> None:
    await h.send(ARTICLE.encode())


async def _json(h: OriginHandler, _rest: str) -> None:
    await h.send(json.dumps(JSON_DOC, indent=2).encode(), "application/json")


async def _text(h: OriginHandler, _rest: str) -> None:
    await h.send(TEXT.encode(), "text/plain; charset=utf-8")


async def _image(h: OriginHandler, _rest: str) -> None:
    await h.send(PNG, "image/png")


async def _slow(h: OriginHandler, _rest: str) -> None:
    secs = float(h.get_argument("secs", "5"))
    if await h.wait(None, secs):
        await h.send(b"<html><body><p>slow done</p></body></html>")


async def _big(h: OriginHandler, _rest: str) -> None:
    size = int(float(h.get_argument("mb", "6")) * 1_000_000)
    h.set_header("Content-Length", str(size))
    await h.send(_filler(size))


async def _gzipbomb(h: OriginHandler, _rest: str) -> None:
    data = gzip_bomb()
    h.set_header("Content-Encoding", "gzip")
    h.set_header("Content-Length", str(len(data)))
    await h.send(data)


async def _redirect(h: OriginHandler, _rest: str) -> None:
    h.set_status(int(h.get_argument("code", "302")))
    to = h.get_argument("to")
    if h.get_argument("utf8", ""):  # raw UTF-8 bytes on the wire, as browsers accept
        to = to.encode("utf-8").decode("latin-1")
    h.set_header("Location", to)
    h.finish()


async def _bigheader(h: OriginHandler, _rest: str) -> None:
    h.set_header("X-Big", "a" * int(float(h.get_argument("kb", "200")) * 1000))
    await h.send(b"<html><body><p>big header</p></body></html>")


async def _chain(h: OriginHandler, _rest: str) -> None:
    n = int(h.get_argument("n", "1"))
    if n <= 0:
        await h.send(b"<html><body><p>end of chain</p></body></html>")
        return
    h.set_status(302)
    h.set_header("Location", f"/chain?n={n - 1}")
    h.finish()


async def _status(h: OriginHandler, rest: str) -> None:
    code = int(rest or "500")
    try:
        reason = http.HTTPStatus(code).phrase
    except ValueError:
        reason = "Unknown"
    h.set_status(code, reason)
    await h.send(f"<html><body><h1>{code} {reason}</h1></body></html>".encode())


MEMBER_COOKIE = "s3cr3t-cookie-value-7f3a9"


async def _members(h: OriginHandler, _rest: str) -> None:
    member = f"session={MEMBER_COOKIE}" in h.request.headers.get("Cookie", "")
    auth = "present" if h.request.headers.get("Authorization") else "absent"
    text = (
        "The members' report: quarterly figures for subscribers, the full analysis of the "
        "harbour project, its budget and the names of the engineers who built it."
        if member
        else "The public front page of the harbour gazette: news for every reader, "
        "opening hours of the harbour office and the ferry timetable for the week."
    )
    title = "Members report" if member else "Harbour gazette"
    paras = "".join(f"<p>{text} Paragraph {i} of the page.</p>" for i in range(6))
    body = (
        f"<html><head><title>{title}</title></head><body><article><h1>{title}</h1>{paras}"
        f"<p>Authorization header: {auth}.</p></article></body></html>"
    )
    await h.send(body.encode())


async def _reset(h: OriginHandler, _rest: str) -> None:
    stream = h.detach()
    stream.socket.setsockopt(socket.SOL_SOCKET, socket.SO_LINGER, struct.pack("ii", 1, 0))
    stream.close()


async def _hold(h: OriginHandler, rest: str) -> None:
    if await h.wait(h.origin._hold(rest), None):
        await h.send(f"<html><body><p>released {rest}</p></body></html>".encode())


BEHAVIOURS: dict[str, Callable[[OriginHandler, str], Awaitable[None]]] = {
    "article": _article,
    "json": _json,
    "text": _text,
    "image.png": _image,
    "slow": _slow,
    "big": _big,
    "gzipbomb": _gzipbomb,
    "redirect": _redirect,
    "chain": _chain,
    "status": _status,
    "reset": _reset,
    "members": _members,
    "bigheader": _bigheader,
    "hold": _hold,
}


def _filler(size: int) -> Iterator[bytes]:
    head = b"<html><head><title>Big</title></head><body>\n"
    line = b"<p>" + b"big body filler text " * 4 + b"</p>\n"
    yield head
    left = size - len(head)
    block = line * (CHUNK // len(line))
    while left > 0:
        piece = block[:left]
        left -= len(piece)
        yield piece


_bomb: bytes | None = None
_bomb_lock = threading.Lock()


def gzip_bomb(inflated: int = 1 << 30) -> bytes:
    """~1 MB of gzip that inflates to `inflated` zero bytes; built once, in milliseconds.

    After a full flush deflate starts afresh, so every MiB of zeros compresses to the same
    block: the block is computed once and repeated, and the trailer's CRC is computed directly.
    """
    global _bomb
    with _bomb_lock:
        if _bomb is None:
            mib = bytes(1 << 20)
            deflate = zlib.compressobj(9, zlib.DEFLATED, -15)
            block = deflate.compress(mib) + deflate.flush(zlib.Z_FULL_FLUSH)
            crc = 0
            for _ in range(inflated >> 20):
                crc = zlib.crc32(mib, crc)
            header = b"\x1f\x8b\x08\x00\x00\x00\x00\x00\x00\x03"
            tail = deflate.flush(zlib.Z_FINISH)
            trailer = struct.pack("<II", crc, inflated & 0xFFFFFFFF)
            _bomb = header + block * (inflated >> 20) + tail + trailer
        return _bomb


def _png(width: int = 16, height: int = 16) -> bytes:
    def chunk(kind: bytes, data: bytes) -> bytes:
        return (
            struct.pack(">I", len(data)) + kind + data + struct.pack(">I", zlib.crc32(kind + data))
        )

    rows = b"".join(
        b"\x00" + b"".join(bytes((x * 16, y * 16, 128)) for x in range(width))
        for y in range(height)
    )
    ihdr = struct.pack(">IIBBBBB", width, height, 8, 2, 0, 0, 0)
    return (
        b"\x89PNG\r\n\x1a\n"
        + chunk(b"IHDR", ihdr)
        + chunk(b"IDAT", zlib.compress(rows))
        + chunk(b"IEND", b"")
    )


PNG = _png()

TEXT = """Release notes for version 2.4

This release fixes the slow start-up on large repositories and adds a --dry-run flag.
Upgrading is safe: the configuration format has not changed.

Known issue: the progress bar flickers on some terminals.
"""

JSON_DOC: dict[str, Any] = {
    "count": 3,
    "items": [
        {"name": "alpha", "price": 12.5, "tags": ["new", "sale"]},
        {"name": "beta", "price": 7.0, "tags": []},
        {"name": "gamma", "price": 99.99, "tags": ["premium"]},
    ],
    "next": None,
}

ARTICLE = """<!DOCTYPE html>
<html lang="en">
<head>
  <meta charset="utf-8">
  <title>How Cities Are Rethinking Urban Heat</title>
  <meta name="description" content="Cool roofs, street trees and new building codes.">
  <meta property="og:title" content="How Cities Are Rethinking Urban Heat">
  <link rel="stylesheet" href="/static/site.css">
  <script>window.dataLayer = window.dataLayer || []; function track(){}</script>
</head>
<body>
  <header class="site-header">
    <a class="logo" href="/">The Daily Example</a>
    <nav class="main-nav">
      <ul>
        <li><a href="/">Home</a></li>
        <li><a href="/world">World</a></li>
        <li><a href="/science">Science</a></li>
        <li><a href="/cities">Cities</a></li>
        <li><a href="/subscribe">Subscribe to our newsletter</a></li>
      </ul>
    </nav>
  </header>
  <div class="ad ad-banner" id="top-ad">
    <a href="https://ads.example/click?id=42">Summer sale on air conditioners. Buy now!</a>
  </div>
  <main>
    <article class="post">
      <h1>How Cities Are Rethinking Urban Heat</h1>
      <p class="byline">By <a href="/authors/maria-lopez">Maria Lopez</a> ·
        <time datetime="2026-06-14">14 June 2026</time></p>
      <p>Summers in the world's large cities are getting longer and hotter, and the heat is not
        evenly shared. Dense neighbourhoods with little shade and dark asphalt can be several
        degrees warmer than leafy districts only a few kilometres away. City planners call this
        the urban heat island effect, and it has moved from a research topic to a public health
        priority.</p>
      <p>Over the past decade, municipal governments have tried a wide range of measures, from
        painting roofs white to rewriting building codes. Some of these interventions are cheap
        and quick; others take a generation to pay off. This article looks at what has worked,
        what has not, and what residents can expect in the years ahead.</p>
      <h2>Why some streets are hotter than others</h2>
      <p>Heat builds up where surfaces absorb sunlight during the day and release it slowly at
        night. Asphalt, concrete and dark roofing store large amounts of energy, while trees and
        open soil cool the air through shade and evaporation. Narrow streets lined with tall
        buildings trap warm air, and waste heat from traffic and air conditioning adds to the
        load. The result is that night-time temperatures, which matter most for health, stay
        high in exactly the places where people have the fewest ways to cool down.</p>
      <h2>What cities are doing</h2>
      <p>The most common measures fall into a handful of groups:</p>
      <ul>
        <li>Cool roofs and pavements that reflect more sunlight than they absorb.</li>
        <li>Street trees and pocket parks that provide shade and evaporative cooling.</li>
        <li>Building codes that require insulation, shading and better ventilation.</li>
        <li>Cooling centres and early warning systems during heat waves.</li>
      </ul>
      <p>Results vary with climate and city layout, but several programmes now have enough data
        to compare. The table below summarises published estimates of the surface temperature
        reduction achieved by each measure in three cities.</p>
      <table>
        <thead>
          <tr><th>Measure</th><th>City</th><th>Cooling (°C)</th><th>Cost per m²</th></tr>
        </thead>
        <tbody>
          <tr><td>Cool roofs</td><td>Los Angeles</td><td>1.5</td><td>$2</td></tr>
          <tr><td>Street trees</td><td>Melbourne</td><td>2.8</td><td>$15</td></tr>
          <tr><td>Green walls</td><td>Singapore</td><td>1.1</td><td>$40</td></tr>
        </tbody>
      </table>
      <h2>The limits of quick fixes</h2>
      <p>Reflective coatings lose their effect as they get dirty, and young trees need years of
        watering before they give meaningful shade. Researchers warn that without steady
        maintenance budgets, many programmes fade after the ribbon-cutting. The cities with the
        best results treat heat as permanent infrastructure rather than a seasonal campaign,
        with dedicated staff, long-term funding and clear targets for each neighbourhood.</p>
      <blockquote>
        <p>"Shade is not a luxury. It is as basic as drainage or street lighting."</p>
      </blockquote>
      <p>For residents, the practical advice has not changed: drink water, check on elderly
        neighbours, and know where the nearest cooling centre is. But the long-term answer, most
        experts agree, lies in how streets and buildings are designed in the first place.</p>
    </article>
  </main>
  <aside class="sidebar">
    <div class="ad"><p>Sponsored: premium sunscreen, 50% off. Buy now.</p></div>
    <div class="newsletter">
      <h3>Stay informed</h3>
      <p>Subscribe to our newsletter for a weekly digest of city news.</p>
      <form action="/subscribe"><input type="email" name="email"><button>Sign up</button></form>
    </div>
    <h3>Most read</h3>
    <ol>
      <li><a href="/a/1">Ten parks worth the trip</a></li>
      <li><a href="/a/2">The return of the night bus</a></li>
    </ol>
  </aside>
  <footer class="site-footer">
    <p>© 2026 The Daily Example. All rights reserved.</p>
    <p><a href="/privacy">Privacy</a> · <a href="/terms">Terms</a> ·
      <a href="/contact">Contact</a></p>
  </footer>
  <script src="/static/analytics.js"></script>
</body>
</html>
"""


# -- a small site for map and crawl ------------------------------------------------------------

SITE_PAGES = {  # path: (title, links)
    "/site/": (
        "Home",
        ["/site/a", "/site/b", "/site/private/x", "/site/docs/1", "http://localhost/elsewhere"],
    ),
    "/site/a": ("Page A", ["/site/a/deep", "/site/b", "#top"]),
    "/site/a/deep": ("Deep", ["/site/a/deeper"]),
    "/site/a/deeper": ("Deeper", ["/site/"]),
    "/site/b": ("Page B", ["/site/", "/site/a"]),
    "/site/private/x": ("Private", []),
    "/site/docs/1": ("Doc 1", ["/site/docs/2"]),
    "/site/docs/2": ("Doc 2", []),
}


def _urlset(origin: Origin, paths: list[str]) -> bytes:
    urls = "".join(f"<url><loc>{origin.url(p)}</loc></url>" for p in paths)
    return (
        '<?xml version="1.0" encoding="UTF-8"?>'
        f'<urlset xmlns="http://www.sitemaps.org/schemas/sitemap/0.9">{urls}</urlset>'
    ).encode()


def install_site(origin: Origin) -> None:
    """`/site/`: robots.txt (a `Sitemap:` line, `/site/private` disallowed), a gzipped sitemap
    index naming a plain and a gzipped urlset, and pages linking to each other."""
    import gzip

    index = (
        '<?xml version="1.0"?><sitemapindex xmlns="http://www.sitemaps.org/schemas/sitemap/0.9">'
        f"<sitemap><loc>{origin.url('/site/sitemap-pages.xml')}</loc></sitemap>"
        f"<sitemap><loc>{origin.url('/site/sitemap-docs.xml.gz')}</loc></sitemap>"
        "</sitemapindex>"
    ).encode()
    robots = (
        "User-agent: *\nDisallow: /site/private\n\n"
        f"Sitemap: {origin.url('/site/sitemap_index.xml.gz')}\n"
    )
    origin.set("/robots.txt", robots, "text/plain")
    origin.set("/site/sitemap_index.xml.gz", gzip.compress(index), "application/gzip")
    origin.set(
        "/site/sitemap-pages.xml",
        _urlset(origin, ["/site/", "/site/sitemap-only"]),
        "application/xml",
    )
    docs = gzip.compress(_urlset(origin, ["/site/docs/1", "/site/docs/2"]))
    origin.set("/site/sitemap-docs.xml.gz", docs, "application/x-gzip")
    for path, (title, links) in SITE_PAGES.items():
        items = "".join(f'<li><a href="{href}">{href}</a></li>' for href in links)
        origin.set(
            path,
            f"<html><head><title>{title}</title></head><body><main><h1>{title}"
            f"</h1><p>The {title} page of the test site.</p><ul>{items}</ul>"
            "</main></body></html>",
        )
    origin.set("/site/sitemap-only", "<html><title>Only</title><p>Only in the sitemap.</p>")


def slow_chain(origin: Origin, prefix: str, n: int, slow: float = 1.5) -> list[str]:
    """`prefix/` links to `prefix/c1`, which links to `c2`, …: a crawl finds one new page per
    page it reads (each also links back, so what it has seen matters). Every page takes `slow`
    seconds to answer."""
    paths = [f"{prefix}/"] + [f"{prefix}/c{i}" for i in range(1, n)]
    for i, path in enumerate(paths):
        links = paths[i + 1 : i + 2] + paths[:1] + paths[max(i - 1, 0) : i]
        items = "".join(f'<a href="{origin.url(p)}">{p}</a> ' for p in links)
        origin.set_slow(path, slow, f"<html><title>{path}</title><p>Page {path}.</p>{items}</html>")
    return paths


@pytest.fixture(scope="session")
def origin() -> Iterator[Origin]:
    """The session's loopback origin server."""
    server = Origin().start()
    try:
        yield server
    finally:
        server.stop()
