"""The config of sift's edges: who may reach its listeners (`[server]`) and how it names
itself to the sites it fetches (`[identity]`). Sections of `Config` (`core/config.py`)."""

from __future__ import annotations

from urllib.parse import urlsplit

import msgspec

DIRECTORY_PATH = "/.well-known/http-message-signatures-directory"


class ServerConfig(msgspec.Struct, forbid_unknown_fields=True, kw_only=True):
    """Who may reach sift's listeners (the API and `sift mcp --listen`): a web page that
    rebinds a name to sift, or posts to it cross-origin, is refused before any work."""

    # `Host` values a request may carry, each with or without the listening port (an entry
    # with a port: that port only); the listen address and `public_url`'s host always may.
    allowed_hosts: list[str] = msgspec.field(
        default_factory=lambda: ["localhost", "127.0.0.1", "[::1]"]
    )
    # Browser origins (`https://app.example`) that may call sift; only these get CORS
    # headers. A request with any other `Origin` is a 403 (none: no browser page may).
    allowed_origins: list[str] = []
    # The URL callers reach sift at (behind a proxy): the links sift builds for them (the
    # reader URL's continuation, Firecrawl's `next`) start with it; default the listen address.
    public_url: str = ""


class IdentityConfig(msgspec.Struct, forbid_unknown_fields=True, kw_only=True):
    """Web Bot Auth: every outgoing request signed (RFC 9421, Ed25519) with the operator's key,
    whose directory sift serves at `/.well-known/http-message-signatures-directory`."""

    enabled: bool = False
    # The Ed25519 key (PEM, mode 0600), generated on first use; default `state_dir/identity.pem`.
    key_file: str = ""
    # The URL of the key directory as sites see it (`Signature-Agent`); default `public_url`
    # (else the listen address) + /.well-known/http-message-signatures-directory.
    signature_agent: str = ""


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
