"""Who may reach a listener of sift (the API, `sift mcp --listen`): the `Host` a request names
and the `Origin` a browser sends, checked before any work (DESIGN §3, "The service itself").

A web page that rebinds its own name to sift's address reaches sift with its own name in
`Host`: not on the list, a 421. A page that posts to sift cross-origin carries its `Origin`:
not on `[server] allowed_origins`, a 403. A client that is no browser sends no `Origin`.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from urllib.parse import urlsplit

from sift.core.config import ServerConfig
from sift.core.errors import SiftError


class WrongHost(SiftError):
    status = 421


class ForeignOrigin(SiftError):
    status = 403


def split_host(value: str) -> tuple[str, int | None] | None:
    """`name`, `name:port`, `[v6]` or `[v6]:port` as (lowercase name, port); None if malformed."""
    value = value.strip().lower()
    if value.startswith("["):
        name, sep, rest = value.partition("]")
        name += sep
        port = rest[1:] if rest.startswith(":") else None
        if not sep or (rest and port is None):
            return None
    else:
        name, sep, port = value.partition(":")
        port = port if sep else None
    if not name or (port is not None and not (port.isdigit() and int(port) < 65536)):
        return None
    return name, int(port) if port is not None else None


def bracketed(host: str) -> str:
    """An address as `Host` spells it: an IPv6 address in brackets."""
    return f"[{host}]" if ":" in host and not host.startswith("[") else host


class HostRules:
    """The allow-lists of one listener.

    Args:
        cfg: `[server]`.
        listen_host: the address the listener was asked to listen on (always allowed).
        urls: more URLs sift is reached at (`[identity] signature_agent`): their hosts too.
    """

    def __init__(self, cfg: ServerConfig, listen_host: str, urls: Sequence[str] = ()) -> None:
        names: list[str] = [*cfg.allowed_hosts, bracketed(listen_host)]
        names += [urlsplit(url).netloc for url in (cfg.public_url, *urls) if url]
        self.hosts = {h for h in (split_host(n) for n in names) if h is not None}
        self.origins = {_origin(o) for o in cfg.allowed_origins}

    def refusal(self, host: str | None, origin: str | None, port: int) -> SiftError | None:
        """Why a request to the listener on `port` with these headers is refused, or None."""
        if host is not None and not self._host_ok(host, port):
            return WrongHost(
                "misdirected request: this sift does not answer for that Host; "
                "the operator can add it to [server] allowed_hosts"
            )
        if origin is not None and not self._origin_ok(origin, host):
            return ForeignOrigin(
                "forbidden: a web page of another origin may not call sift; "
                "the operator can add it to [server] allowed_origins"
            )
        return None

    def cors(self, origin: str | None) -> str | None:
        """The `Access-Control-Allow-Origin` for `origin`: only one the operator configured."""
        if origin is None or _origin(origin) not in self.origins:
            return None
        return origin

    def _host_ok(self, value: str, port: int) -> bool:
        parsed = split_host(value)
        if parsed is None:
            return False
        name, asked = parsed
        return any(
            name == allowed and (asked == at or (at is None and asked in (None, port)))
            for allowed, at in self.hosts
        )

    def _origin_ok(self, origin: str, host: str | None) -> bool:
        """Configured, or the page's own origin: a page sift itself served (the Host check
        has passed, so its name is sift's)."""
        mine = _origin(origin)
        if mine in self.origins:
            return True
        parts = urlsplit(mine)
        return (
            host is not None
            and parts.scheme in ("http", "https")
            and (parts.netloc == host.strip().lower())
        )


def _origin(value: str) -> str:
    return value.strip().lower().rstrip("/")


def any_refusal(
    rules: HostRules, headers: Iterable[tuple[str, str]], port: int
) -> SiftError | None:
    """`refusal` for a request's headers as (name, value) pairs (names in any case)."""
    host = origin = None
    for name, value in headers:
        low = name.lower()
        if low == "host" and host is None:
            host = value
        elif low == "origin" and origin is None:
            origin = value
    return rules.refusal(host, origin, port)
