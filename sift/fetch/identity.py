"""Web Bot Auth: sift names itself on every request it sends, with a signature a site can
verify (draft-ietf-webbotauth-httpsig-protocol on RFC 9421 HTTP Message Signatures, Ed25519).

Each request (each redirect hop: the signature covers the hop's own authority) carries

    Signature-Agent: sig1="https://sift.example"
    Signature-Input: sig1=("@authority" "signature-agent";key="sig1");created=…;expires=…;
                     keyid="<JWK thumbprint>";alg="ed25519";tag="web-bot-auth"
    Signature: sig1=:<Ed25519 over the signature base>:

and the key directory (a JWKS) is served at `DIRECTORY_PATH`. The private key lives in one
file of the state directory (mode 0600, made on first use) and in this object only: it is never
logged, answered, or handed to a child (children get an empty environment; the parent signs).
"""

from __future__ import annotations

import base64
import hashlib
import json
import os
import time
from pathlib import Path
from urllib.parse import urlsplit

from cryptography.hazmat.primitives import serialization
from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PrivateKey

from sift.core.config import Config, ConfigError
from sift.core.config.edges import DIRECTORY_PATH

LABEL = "sig1"
TAG = "web-bot-auth"
LIFETIME = 300  # seconds a signature verifies (the draft: at most 24 h)
DIRECTORY_TYPE = "application/http-message-signatures-directory+json"
COVERED = f'("@authority" "signature-agent";key="{LABEL}")'
OWN_HEADERS = frozenset({"signature", "signature-input", "signature-agent"})
KEY_FILE = "identity.pem"


def _b64url(data: bytes) -> str:
    return base64.urlsafe_b64encode(data).rstrip(b"=").decode()


def authority(scheme: str, host: str, port: int) -> str:
    """RFC 9421 `@authority`: the host, lowercase (IPv6 in brackets), with the port unless it
    is the scheme's default."""
    name = host.lower()
    name = f"[{name}]" if ":" in name and not name.startswith("[") else name
    default = {"http": 80, "https": 443}.get(scheme.lower())
    return name if port == default else f"{name}:{port}"


class Signer:
    """Signs requests with one Ed25519 key, naming `agent` (the key directory's URL)."""

    def __init__(self, key: Ed25519PrivateKey, agent: str) -> None:
        self._key = key
        raw = key.public_key().public_bytes(
            serialization.Encoding.Raw, serialization.PublicFormat.Raw
        )
        self.x = _b64url(raw)
        # RFC 7638 (RFC 8037 A.3 for OKP): the required members, sorted, no whitespace.
        canonical = json.dumps({"crv": "Ed25519", "kty": "OKP", "x": self.x}, separators=(",", ":"))
        self.keyid = _b64url(hashlib.sha256(canonical.encode()).digest())
        self.agent_member = _agent_member(agent)

    def __repr__(self) -> str:  # never the key
        return f"Signer(keyid={self.keyid!r})"

    def headers(self, scheme: str, host: str, port: int, now: float | None = None) -> list[str]:
        """The three header lines that sign one request to `scheme://host:port`."""
        created = int(time.time() if now is None else now)
        params = (
            f'{COVERED};created={created};expires={created + LIFETIME};keyid="{self.keyid}"'
            f';alg="ed25519";tag="{TAG}"'
        )
        member = self.agent_member[len(LABEL) + 1 :]  # the member's value, as serialized
        base = (
            f'"@authority": {authority(scheme, host, port)}\n'
            f'"signature-agent";key="{LABEL}": {member}\n'
            f'"@signature-params": {params}'
        )
        signature = base64.b64encode(self._key.sign(base.encode())).decode()
        return [
            f"Signature-Agent: {self.agent_member}",
            f"Signature-Input: {LABEL}={params}",
            f"Signature: {LABEL}=:{signature}:",
        ]

    def directory(self) -> bytes:
        """The key directory: a JWKS with this key, `kid` its thumbprint."""
        key = {"kty": "OKP", "crv": "Ed25519", "kid": self.keyid, "x": self.x, "use": "sig"}
        return json.dumps({"keys": [key]}).encode()


def _agent_member(agent: str) -> str:
    """The `Signature-Agent` dictionary member for `agent`: an origin whose well-known URI is
    the directory (type `directory`, the default), else the JWKS URL itself (`jwks_uri`)."""
    parts = urlsplit(agent)
    origin = f"{parts.scheme}://{parts.netloc}"
    if parts.path == DIRECTORY_PATH and not parts.query:
        return f'{LABEL}="{origin}"'
    return f'{LABEL}="{agent}";type=jwks_uri'


def signer_for(cfg: Config) -> Signer | None:
    """The signer `[identity]` asks for (None when it is off): the key from `key_file`, else
    `state_dir/identity.pem`; the agent `signature_agent`, else the directory at `public_url`
    or the listen address.

    Raises:
        ConfigError: the key file cannot be read or made, or holds no Ed25519 key.
    """
    ident = cfg.identity
    if not ident.enabled:
        return None
    path = Path(ident.key_file).expanduser() if ident.key_file else cfg.state_path / KEY_FILE
    base = cfg.server.public_url.rstrip("/") or f"http://{cfg.listen}"
    try:
        key = load_key(path)
    except (OSError, ValueError, TypeError) as exc:  # never the file's content
        why = exc.strerror if isinstance(exc, OSError) else "not an unencrypted Ed25519 PEM key"
        raise ConfigError(f"config: `identity.key_file` {str(path)!r}: {why}") from None
    return Signer(key, ident.signature_agent or base + DIRECTORY_PATH)


def load_key(path: Path) -> Ed25519PrivateKey:
    """The key in `path`, made there first (mode 0600, created exclusively) when missing."""
    try:
        data = path.read_bytes()
    except FileNotFoundError:
        key = Ed25519PrivateKey.generate()
        pem = key.private_bytes(
            serialization.Encoding.PEM,
            serialization.PrivateFormat.PKCS8,
            serialization.NoEncryption(),
        )
        path.parent.mkdir(parents=True, exist_ok=True)
        try:
            fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
        except FileExistsError:  # another process made it first: use that one
            return load_key(path)
        with os.fdopen(fd, "wb") as out:
            out.write(pem)
        return key
    loaded = serialization.load_pem_private_key(data, password=None)
    if not isinstance(loaded, Ed25519PrivateKey):
        raise ValueError(f"{path} does not hold an Ed25519 private key")
    return loaded
