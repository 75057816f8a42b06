"""Limits and the guard through HTTP: caps, deadlines, redirects (issue 2 acceptance)."""

from __future__ import annotations

import urllib.parse

import pytest


def test_caps_and_deadline(make_sift, origin):
    sift = make_sift()
    r = sift.fetch(origin.url("/big?mb=6"))
    assert r.status == 413 and r.json["error"] == "too large (>5 MB decompressed)"
    r = sift.fetch(origin.url("/gzipbomb"))
    assert r.status == 413 and r.json["error"] == "too large (>5 MB decompressed)"
    sift = make_sift({"fetch": {"timeout": "1s"}})  # the cap's 5 MB need more than 1 s under load
    r = sift.fetch(origin.url("/slow?secs=25"))
    assert r.status == 504 and "timed out" in r.json["error"]
    r = sift.post("/v2/scrape", {"url": origin.url("/slow?secs=25")})
    assert r.status == 504 and r.json["success"] is False


def test_a_cap_under_a_megabyte_is_said_as_it_is(make_sift, origin):
    """`[fetch] max_body` below 1 MB: the 413 names the cap that applied, not `>0 MB`."""
    sift = make_sift({"fetch": {"max_body": "20KB"}})
    origin.set("/page-of-60k", "<html><body>" + "<p>words and more words</p>" * 2000)
    r = sift.fetch(origin.url("/page-of-60k"))
    assert r.status == 413 and r.json["error"] == "too large (>0.02 MB decompressed)"


@pytest.mark.parametrize("code", [301, 302, 303, 307, 308])
def test_redirect_to_a_private_address_is_blocked(sift, origin, code):
    for target in (
        "http://10.0.0.7/admin",
        "http://169.254.169.254/latest/meta-data/",
        "file:///etc/passwd",
        "gopher://127.0.0.1:70/",
    ):
        to = urllib.parse.quote(target, safe="")
        r = sift.fetch(origin.url(f"/redirect?to={to}&code={code}"))
        assert r.status == 403, (code, target, r.body)
        assert r.json["error"].startswith("blocked: ")


def test_redirects_are_followed_within_five_hops(sift, origin):
    r = sift.fetch(origin.url("/chain?n=5"))
    assert r.status == 200 and r.json["final_url"] != origin.url("/chain?n=5")
    r = sift.fetch(origin.url("/chain?n=6"))
    assert r.status == 502 and "redirects" in r.json["error"]


def test_guard_spellings_through_http(make_sift):
    sift = make_sift({"guard": {"allow_prefixes": []}})
    for host in (
        "127.0.0.1",
        "2130706433",
        "0x7f000001",
        "0177.0.0.1",
        "127.1",
        "[::ffff:127.0.0.1]",
        "[::1]",
        "10.1.2.3",
        "192.168.0.1",
        "100.64.0.1",
        "169.254.169.254",
        "224.0.0.1",
        "0.0.0.0",
        "[fe80::1]",
        "[fc00::1]",
        "[64:ff9b::10.0.0.1]",
        "[2002:0a00:0001::]",
        "localhost",
    ):
        r = sift.fetch(f"http://{host}/")
        assert r.status == 403, (host, r.body)
        assert r.json["error"].startswith("blocked: "), host
    assert sift.fetch("http://93.184.216.34:8080/").json["error"].startswith("blocked: port")
