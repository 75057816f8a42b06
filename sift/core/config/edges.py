"""The checks of sift's edges' config: who may reach its listeners (`[server]`) and how it
names itself to the sites it fetches (`[identity]`); the sections are in
`core/config/sections.py`."""

from __future__ import annotations

from urllib.parse import urlsplit

from sift.core.config.sections import IdentityConfig, ServerConfig

DIRECTORY_PATH = "/.well-known/http-message-signatures-directory"


def edge_problem(server: ServerConfig, identity: IdentityConfig) -> str | None:
    """What is wrong with these sections, naming the key; None when nothing is."""
    urls = {
        "server.public_url": server.public_url,
        "identity.signature_agent": identity.signature_agent,
    }
    for key, url in urls.items():
        if url and (not _http_url(url) or any(c in url for c in '"\\ ')):
            return f"`{key}` must be an http:// or https:// URL, got {url!r}"
    for origin in server.allowed_origins:
        parts = urlsplit(origin)
        if not _http_url(origin) or parts.path not in ("", "/") or parts.query:
            return f"`server.allowed_origins`: not an origin (scheme://host[:port]): {origin!r}"
    for host in server.allowed_hosts:
        if not host or any(c in host for c in "/@ \t") or (host.count(":") > 1 and "[" not in host):
            return f"`server.allowed_hosts`: not a host[:port]: {host!r} (write IPv6 as [::1])"
    return None


def _http_url(url: str) -> bool:
    try:
        parts = urlsplit(url)
        _ = parts.port  # a bad port raises
        return parts.scheme in ("http", "https") and bool(parts.hostname)
    except ValueError:
        return False
