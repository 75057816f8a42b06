"""The checks a value's type cannot express: every number more than 0 (or 0 or more where its
default is 0 or it is in `ZERO_ALLOWED`: `check` walks the sections, so no key is forgotten),
addresses, prefixes, ports, the browser's user; and the state directory, before `serve`.
"""

from __future__ import annotations

import ipaddress
import os
import pwd
import re
from collections.abc import Iterator
from typing import Any

import msgspec

from sift.core.config.edges import edge_problem
from sift.core.config.sections import READ_MAX_TOKENS, READ_MIN_TOKENS, Config


class ConfigError(Exception):
    """A config file that cannot be used; the message names the key."""


# Numbers that may be 0 although their default is not (a key whose default is 0 may always be 0).
ZERO_ALLOWED = {"fetch.max_redirects", "pdf.queue", "cache.ttl", "cache.memory", "clean.max_tasks"}


def _numbers(section: msgspec.Struct, prefix: str = "") -> Iterator[tuple[str, Any, Any]]:
    """(key, value, default) of every number in `section` and its subsections."""
    for f in msgspec.structs.fields(section):
        value = getattr(section, f.name)
        key = f"{prefix}{f.encode_name}"
        if isinstance(value, msgspec.Struct):
            yield from _numbers(value, key + ".")
        elif isinstance(value, int | float) and not isinstance(value, bool):
            yield key, value, f.default


# Control characters but the tab: a User-Agent is sent as it is, and a line break in it would
# add headers of its own to every fetch.
_CONTROL = re.compile(r"[\x00-\x08\x0a-\x1f\x7f]")


def listen_address(listen: str) -> tuple[str, int]:
    """`host:port` (or `[v6]:port`, or `:port`) as (host, port); ValueError says what is wrong."""
    host, sep, port = listen.strip().rpartition(":")
    if not sep or not port.isdigit():
        raise ValueError(f'{listen!r} is not host:port (write e.g. "127.0.0.1:8731")')
    if int(port) > 65535:
        raise ValueError(f"port {port} is out of range (0-65535)")
    host = host.strip("[]") or "127.0.0.1"
    try:
        ipaddress.ip_address(host)
    except ValueError:
        if not re.fullmatch(r"(?!-)[A-Za-z0-9-]{1,63}(?:\.(?!-)[A-Za-z0-9-]{1,63})*\.?", host):
            raise ValueError(f"{host!r} is neither an IP address nor a host name") from None
    return host, int(port)


def check(cfg: Config) -> None:
    """The checks a value's type cannot express; ConfigError names the key."""
    try:
        listen_address(cfg.listen)
    except ValueError as exc:
        raise ConfigError(f"config: `listen`: {exc}") from None
    for key, value, default in _numbers(cfg):
        if value < 0 or (value == 0 and default != 0 and key not in ZERO_ALLOWED):
            least = "0 or more" if key in ZERO_ALLOWED or default == 0 else "more than 0"
            raise ConfigError(f"config: `{key}` must be {least}, got {value}")
    if not cfg.store.url.startswith(("sqlite:", "postgresql://", "postgres://")):
        raise ConfigError("config: `store.url` must be `sqlite:` or `postgresql://…`")
    if _CONTROL.search(cfg.fetch.user_agent):
        raise ConfigError("config: `fetch.user_agent` must be one line, no control characters")
    if cfg.pdf.children > 16:
        raise ConfigError("config: `pdf.children` must be 16 or fewer")
    if cfg.batch.workers > 2:
        raise ConfigError("config: `batch.workers` must be 1 or 2")
    if cfg.search.searxng_url and not cfg.search.searxng_url.startswith(("http://", "https://")):
        raise ConfigError("config: `search.searxng_url` must be an http:// or https:// URL")
    for p in cfg.guard.allow_prefixes:
        try:
            ipaddress.ip_network(p, strict=False)
        except ValueError:
            raise ConfigError(f"config: `guard.allow_prefixes`: not a prefix: {p!r}") from None
    for port in cfg.guard.allow_ports:
        if not 0 < port < 65536:
            raise ConfigError(f"config: `guard.allow_ports`: not a port: {port}")
    if cfg.render.enabled and os.geteuid() == 0:  # the browser drops to this user
        try:
            uid = pwd.getpwnam(cfg.render.user).pw_uid
        except KeyError:
            raise ConfigError(f"config: `render.user`: no such user {cfg.render.user!r}") from None
        if uid == 0:
            raise ConfigError("config: `render.user` must not be root")
    if (problem := edge_problem(cfg.server, cfg.identity)) is not None:
        raise ConfigError(f"config: {problem}")
    if not READ_MIN_TOKENS <= cfg.read.max_tokens <= READ_MAX_TOKENS:  # a read's own bounds
        raise ConfigError(
            f"config: `read.max_tokens` must be {READ_MIN_TOKENS} to {READ_MAX_TOKENS:,}"
        )
    for client, cap in cfg.mcp.client_caps.items():
        if cap < 0 or 0 < cap < 100:  # a read's budget is 100 tokens at least
            raise ConfigError(f"config: `mcp.client_caps` of {client!r} must be 0 or 100 or more")
    _callers(cfg)


def _callers(cfg: Config) -> None:
    """Each token hash is 64 hex digits (either case) and names one caller: a request with a
    token two callers share would be either of them."""
    named: dict[str, str] = {}
    for c in cfg.caller:
        if not re.fullmatch(r"[0-9a-fA-F]{64}", c.token_sha256):
            raise ConfigError(f"config: `caller.token_sha256` of {c.name!r} is not 64 hex digits")
        first = named.setdefault(c.token_sha256.lower(), c.name)
        if first != c.name:
            why = f"is {first!r}'s too (one token, one caller)"
            raise ConfigError(f"config: `caller.token_sha256` of {c.name!r} {why}")


def check_state_dir(cfg: Config) -> None:
    """The state directory exists (created if missing) and sift can write in it."""
    path = cfg.state_path
    what = f"config: `state_dir` {str(path)!r}"
    if path.exists() and not path.is_dir():
        raise ConfigError(f"{what} is not a directory")
    try:
        path.mkdir(parents=True, exist_ok=True)
    except OSError as exc:
        raise ConfigError(f"{what} cannot be created: {exc.strerror}") from None
    import tempfile  # late: only `serve` asks

    try:
        with tempfile.NamedTemporaryFile(dir=path, prefix=".write-test-"):
            pass
    except OSError as exc:
        raise ConfigError(f"{what} is not writable: {exc.strerror}") from None
