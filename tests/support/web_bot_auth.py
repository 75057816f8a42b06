"""Web Bot Auth as a site checks it, with an independent RFC 9421 implementation
(`http-message-signatures`, not sift's code): the keys sift's directory publishes (each
checked against its RFC 7638 thumbprint here) and the verification of a request as the origin
received it."""

from __future__ import annotations

import base64
import hashlib
import json
from dataclasses import dataclass
from typing import Any

import tornado.httputil
from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PublicKey
from http_message_signatures import HTTPMessageVerifier, MappingKeyResolver, algorithms

from tests.support.sift_server import http_call

DIRECTORY = "/.well-known/http-message-signatures-directory"
AGENT = "https://sift.example"  # the origin the tests' `signature_agent` names
ON = {"identity": {"enabled": True, "signature_agent": AGENT + DIRECTORY}}


@dataclass
class Seen:
    """A request as the origin received it, in the shape the verifier reads."""

    method: str
    url: str
    headers: dict[str, str]


def seen(headers: tornado.httputil.HTTPHeaders, path: str) -> Seen:
    return Seen("GET", f"http://{headers['Host']}{path}", dict(headers.get_all()))


def b64url_decode(text: str) -> bytes:
    return base64.urlsafe_b64decode(text + "=" * (-len(text) % 4))


def directory_keys(base: str) -> dict[str, Ed25519PublicKey]:
    """The keys the sift at `base` publishes, each checked against its RFC 7638 thumbprint
    (computed here)."""
    r = http_call(base, "GET", DIRECTORY, token=None)
    assert r.status == 200, r.body
    assert r.headers["Content-Type"] == "application/http-message-signatures-directory+json"
    keys = {}
    for jwk in r.json["keys"]:
        assert set(jwk) >= {"kty", "crv", "x", "kid"} and "d" not in jwk, jwk  # public only
        members = {"crv": jwk["crv"], "kty": jwk["kty"], "x": jwk["x"]}
        canonical = json.dumps(members, sort_keys=True, separators=(",", ":")).encode()
        thumb = base64.urlsafe_b64encode(hashlib.sha256(canonical).digest()).rstrip(b"=")
        assert jwk["kid"] == thumb.decode(), jwk
        keys[jwk["kid"]] = Ed25519PublicKey.from_public_bytes(b64url_decode(jwk["x"]))
    return keys


def verify(keys: dict[str, Ed25519PublicKey], request: Seen) -> Any:
    verifier = HTTPMessageVerifier(
        signature_algorithm=algorithms.ED25519,
        key_resolver=MappingKeyResolver(public_keys=keys, private_keys={}),
    )
    [result] = verifier.verify(
        request,
        expect_tag="web-bot-auth",
        require_components=["@authority", '"signature-agent";key="sig1"'],
    )
    params = result.parameters
    assert params["tag"] == "web-bot-auth" and params["keyid"] in keys, params
    lifetime = int(params["expires"]) - int(params["created"])
    assert 0 < lifetime <= 24 * 3600, params
    assert request.headers["Signature-Agent"] == f'sig1="{AGENT}"', request.headers
    return result
