"""GET / (a page for people) and its two assets, shipped in the package (`web/static/`).

The page asks for the caller's token and calls sift's own JSON API with it, same-origin (the
edge's `Origin` rule lets a page of sift's own name and port through, `core/hosts.py`). Its
Content-Security-Policy allows nothing from elsewhere and no inline script or style, so text a
fetched page carries can never run or restyle it, even if it reached the DOM as markup.
"""

from __future__ import annotations

from functools import cache
from importlib.resources import files

from sift.core.errors import NotFound
from sift.web.base import BaseHandler

ASSET = r"([^/]{1,64})"
ASSETS = frozenset({"page.js", "page.css"})  # the files the page loads: nothing else is served
_TYPES = {
    "html": "text/html; charset=utf-8",
    "js": "text/javascript; charset=utf-8",
    "css": "text/css; charset=utf-8",
}
CSP = (
    "default-src 'self'; object-src 'none'; base-uri 'none'; form-action 'none'; "
    "frame-ancestors 'none'"
)


@cache
def asset(name: str) -> bytes:
    """A file of `web/static/`, read once (a few KiB)."""
    return files("sift.web").joinpath("static", name).read_bytes()


class _Static(BaseHandler):
    public = True  # the page holds no secret: the caller types the token into it

    def send_file(self, name: str) -> None:
        self.set_header("Content-Type", _TYPES[name.rsplit(".", 1)[1]])
        self.set_header("Content-Security-Policy", CSP)
        self.set_header("X-Content-Type-Options", "nosniff")
        self.set_header("Referrer-Policy", "no-referrer")
        self.set_header("X-Frame-Options", "DENY")
        data = asset(name)
        self.bytes_out = len(data)
        self.finish(data)


class PageHandler(_Static):
    route = "/"

    def get(self) -> None:
        self.send_file("index.html")


class AssetHandler(_Static):
    route = "/static/{file}"

    def get(self, name: str) -> None:
        if name not in ASSETS:
            raise NotFound("no such file of the page")
        self.send_file(name)
