"""An identity sites can verify, and 402 as an answer: with `[identity]` on, every request sift
sends (each redirect hop, robots.txt, the browser's through its proxy) carries a Web Bot Auth
signature that an independent RFC 9421 implementation (`http-message-signatures`, not sift's
code) verifies at a loopback origin against the key directory sift serves; the key stays in
a 0600 file and out of answers and children. A site's price (402) is refused, never paid,
never cached, never shown."""

from __future__ import annotations

import asyncio
import base64
import contextlib
import json
import os
import stat
from typing import Any

import pytest
from cryptography.hazmat.primitives import serialization
from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PrivateKey
from http_message_signatures import InvalidSignature

from sift.browser.proxy import GuardedProxy
from sift.fetch.identity import Signer
from tests.support.clean_workers import worker_pids
from tests.support.origin import Origin
from tests.support.web_bot_auth import DIRECTORY, ON, Seen, directory_keys, seen, verify

BROWSER = "/usr/bin/chromium"
needs_chromium = pytest.mark.skipif(
    not os.access(BROWSER, os.X_OK), reason="no chromium (apt-get install chromium)"
)


@pytest.fixture
def second_origin() -> Any:
    other = Origin("127.0.0.2").start()
    yield other
    other.stop()


def test_every_hop_is_signed_for_its_own_authority(make_sift, origin, second_origin):
    sift = make_sift(ON)
    keys = directory_keys(sift.url)
    second_origin.set("/id/landing", "<html><body><article><p>landed</p></article></body></html>")
    target = second_origin.url("/id/landing")
    r = sift.fetch(origin.url(f"/redirect?to={target}&code=302"))
    assert r.status == 200, r.body
    first = seen(origin.last_headers("/redirect"), f"/redirect?to={target}&code=302")
    second = seen(second_origin.last_headers("/id/landing"), "/id/landing")
    assert first.url != second.url
    verify(keys, first)
    verify(keys, second)
    # A hop's signature does not verify for another authority: each was made for its own.
    elsewhere = first.headers["Host"]
    moved = Seen("GET", f"http://{elsewhere}/id/landing", {**second.headers, "Host": elsewhere})
    with pytest.raises(InvalidSignature):
        verify(keys, moved)


def test_robots_txt_is_signed_too(make_sift, origin):
    sift = make_sift({**ON, "fetch": {"robots": "report"}})
    keys = directory_keys(sift.url)
    origin.set("/robots.txt", "User-agent: *\nAllow: /\n", "text/plain")
    assert sift.fetch(origin.url("/article?id=robots")).status == 200
    verify(keys, seen(origin.last_headers("/robots.txt"), "/robots.txt"))


def test_the_browsers_requests_are_signed_by_the_proxy(origin):
    """The guarded proxy signs each request the browser sends through it (the signer is
    passed in: the key never reaches the browser's process), in place of any the page set."""
    key = Ed25519PrivateKey.generate()
    signer = Signer(key, "https://sift.example" + DIRECTORY)
    origin.set("/id/proxied", "<p>through the proxy</p>")
    netloc = origin.url("/").split("//")[1].rstrip("/")
    host, port = netloc.split(":")

    async def through_proxy() -> None:
        proxy = GuardedProxy(lambda _netloc: (host, int(port)), 1 << 20, signer.headers)
        at = await proxy.start()
        reader, writer = await asyncio.open_connection("127.0.0.1", at)
        forged = "Signature: sig1=:AAAA:\r\n"  # a page's own signature never goes on
        head = f"GET {origin.url('/id/proxied')} HTTP/1.1\r\nHost: {netloc}\r\n{forged}\r\n"
        writer.write(head.encode())
        await writer.drain()
        assert b" 200 " in (await reader.read(65536)).split(b"\r\n", 1)[0]
        writer.close()
        await proxy.close()

    asyncio.run(through_proxy())
    request = seen(origin.last_headers("/id/proxied"), "/id/proxied")
    with pytest.raises(InvalidSignature):  # a key that is not sift's does not verify it
        verify({signer.keyid: Ed25519PrivateKey.generate().public_key()}, request)
    verify({signer.keyid: key.public_key()}, request)


def test_off_by_default_nothing_is_signed_and_there_is_no_directory(sift, origin):
    assert sift.fetch(origin.url("/article?id=unsigned")).status == 200
    headers = origin.last_headers("/article")
    assert not any(h in headers for h in ("Signature", "Signature-Input", "Signature-Agent"))
    assert sift.request("GET", DIRECTORY, token=None).status == 404


def test_the_key_is_a_0600_file_and_never_in_an_answer_or_a_child(make_sift, origin, tmp_path):
    before = worker_pids()
    sift = make_sift(ON)
    key = sift.cfg.state_path / "identity.pem"
    assert stat.S_IMODE(key.stat().st_mode) == 0o600
    pem = key.read_text()
    secret = "".join(pem.strip().splitlines()[1:-1])
    r = sift.fetch(origin.url("/article?id=key"))
    assert r.status == 200 and secret not in r.body.decode()
    assert secret not in sift.request("GET", DIRECTORY, token=None).body.decode()
    for pid in worker_pids() - before:  # the clean workers: an empty environment
        with contextlib.suppress(FileNotFoundError), open(f"/proc/{pid}/environ", "rb") as env:
            assert secret.encode() not in env.read()
    loaded = serialization.load_pem_private_key(pem.encode(), password=None)
    raw = loaded.public_key().public_bytes(
        serialization.Encoding.Raw, serialization.PublicFormat.Raw
    )
    assert [k.public_bytes_raw() for k in directory_keys(sift.url).values()] == [raw]


# -- 402 ---------------------------------------------------------------------------------------

PAGE_TEXT = "Members pay to read this paragraph"


def x402_header() -> str:
    offer = {
        "scheme": "exact",
        "network": "eip155:8453",
        "amount": "10000",
        "asset": "0x833589fcd6edb6e08f4c7c32d4f71b54bda02913",
        "payTo": "0x0000000000000000000000000000000000000001",
        "maxTimeoutSeconds": 60,
        "extra": {"name": "USDC", "version": "2"},
    }
    data = {"x402Version": 2, "error": "payment required", "accepts": [offer]}
    return base64.b64encode(json.dumps(data).encode()).decode()


CASES = {
    "pay-per-crawl": (
        {"crawler-price": "USD 0.01"},
        {"price": "0.01", "currency": "USD", "scheme": "pay-per-crawl"},
    ),
    "x402": (
        {"PAYMENT-REQUIRED": x402_header()},
        {"price": "10000", "currency": "USDC", "scheme": "x402", "network": "eip155:8453"},
    ),
}


@pytest.mark.parametrize("case", sorted(CASES))
def test_a_priced_402_is_a_refusal_never_paid_cached_or_shown(sift, origin, case):
    headers, payment = CASES[case]
    path = f"/id/paywall-{case}"
    origin.set(path, f"<html><body><p>{PAGE_TEXT}</p></body></html>", status=402, headers=headers)
    url = origin.url(path)
    for _ in range(2):
        r = sift.fetch(url)
        assert r.status == 403, r.body
        body = r.json
        assert body["payment_required"] == payment, body
        assert body["upstream_status"] == 402 and "never pays" in body["error"], body
        assert PAGE_TEXT not in r.body.decode()
    assert origin.count(path) == 2  # never cached: asked again each time
    for req in origin.requests(path):  # and never paid: no payment header went out
        assert not any(h.lower().startswith(("x-payment", "payment-sig")) for h in req)
    scrape = sift.post("/v2/scrape", {"url": url, "formats": ["markdown"]})
    assert scrape.status == 400, scrape.body  # Firecrawl's refusal status (its SDK: 403 is
    assert scrape.json["payment_required"] == payment  # "website not supported")
    assert PAGE_TEXT not in scrape.body.decode()
    reader = sift.request("GET", f"/r/{url}")
    assert reader.status == 403 and PAGE_TEXT not in reader.body.decode()


def test_a_402_without_a_price_is_an_upstream_error_as_before(sift, origin):
    origin.set("/id/plain-402", "<p>no price here</p>", status=402)
    r = sift.fetch(origin.url("/id/plain-402"))
    assert r.status == 502 and "payment_required" not in r.json, r.body


def test_a_sites_price_header_cannot_inject_lines(sift, origin):
    hostile = "USD [sift: ignore this]\u00e9\t" + "9" * 500  # non-ASCII, a tab, too long
    origin.set("/id/hostile-402", "<p>x</p>", status=402, headers={"crawler-price": hostile})
    r = sift.fetch(origin.url("/id/hostile-402"))
    assert r.status == 403, r.body
    price = r.json["payment_required"]["price"]
    assert len(price) <= 64 and price.isascii() and "\t" not in price, price


def test_a_key_file_that_is_not_a_key_stops_start_up_naming_the_key(tmp_path, capsys):
    from sift.cli.main import main

    bad = tmp_path / "bad.pem"
    bad.write_text("not a key\n")
    cfg = tmp_path / "sift.toml"
    cfg.write_text(
        f'state_dir = "{tmp_path / "state"}"\nlisten = "127.0.0.1:0"\n'
        f'[identity]\nenabled = true\nkey_file = "{bad}"\n'
    )
    assert main(["serve", "--config", str(cfg)]) == 2
    err = capsys.readouterr().err
    assert "identity.key_file" in err and "not a key" not in err, err  # never the content


@needs_chromium
def test_a_renders_requests_are_signed_by_its_proxy(make_sift, origin):
    """A real render (the system Chromium): the page the browser asks for through its guarded
    proxy reaches the origin signed, though the browser never had the key."""
    render = {"enabled": True, "browser": BROWSER, "deadline": "15s"}
    sift = make_sift({**ON, "render": render})
    origin.set("/id/rendered", "<html><body><article><p>rendered page</p></article></body></html>")
    r = sift.fetch(origin.url("/id/rendered"), render=True)
    assert r.status == 200, r.body
    verify(directory_keys(sift.url), seen(origin.last_headers("/id/rendered"), "/id/rendered"))
