"""Callers: bearer tokens mapped to a named caller of class `fleet` or `restricted`.

Tokens are never stored, only their SHA-256; a presented token is hashed and compared with
every known hash in constant time. With no callers configured, a local token is created on
first start and kept (mode 0600) in the state directory, where the CLI finds it.
"""

from __future__ import annotations

import hashlib
import hmac
import os
from dataclasses import dataclass
from pathlib import Path

from sift.core.config import Config

TOKEN_FILE = "token"


@dataclass(frozen=True)
class Caller:
    name: str
    cls: str  # "fleet" | "restricted"
    batch: bool = False  # fetching a batch target: its own PDF pool name (`pool_name`)

    @property
    def restricted(self) -> bool:
        return self.cls == "restricted"

    @property
    def pool_name(self) -> str:
        """The name the PDF pool knows this caller by: a batch never takes the caller's own
        interactive slot. Gates, caches and redaction use `name` and `cls` as ever."""
        return f"{self.name}/batch" if self.batch else self.name


def sha256_hex(token: str) -> str:
    return hashlib.sha256(token.encode()).hexdigest()


class Callers:
    def __init__(self, entries: list[tuple[str, str, str]]) -> None:
        """`entries`: (name, token sha256 hex, class)."""
        self._entries = [(bytes.fromhex(h), Caller(n, c)) for n, h, c in entries]

    def authenticate(self, header: str | None) -> Caller | None:
        """The caller for an `Authorization: Bearer <token>` header, or None."""
        if not header or not header.startswith("Bearer "):
            return None
        digest = hashlib.sha256(header[7:].strip().encode()).digest()
        found = None
        for known, caller in self._entries:  # no early exit: constant time over all callers
            if hmac.compare_digest(known, digest):
                found = caller
        return found


def token_path(cfg: Config) -> Path:
    return cfg.state_path / TOKEN_FILE


def local_token(cfg: Config, create: bool) -> str | None:
    """The local caller's token from the state directory; created (0600) when asked."""
    path = token_path(cfg)
    try:
        return path.read_text().strip() or None
    except FileNotFoundError:
        if not create:
            return None
    path.parent.mkdir(parents=True, exist_ok=True)
    import secrets  # late: only a first start makes a token (`sift extract` starts without it)

    token = "sift_" + secrets.token_urlsafe(32)
    fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
    with os.fdopen(fd, "w") as f:
        f.write(token + "\n")
    return token


def callers_for(cfg: Config, create_local: bool = True) -> tuple[Callers, str | None]:
    """The configured callers; with none configured, the local caller (and its token)."""
    if cfg.caller:
        return Callers([(c.name, c.token_sha256, c.class_) for c in cfg.caller]), None
    token = local_token(cfg, create=create_local)
    entries = [("local", sha256_hex(token), "fleet")] if token else []
    return Callers(entries), token
