"""Config: embedded defaults, sizes and durations as strings, errors that name the key."""

from __future__ import annotations

import os
import subprocess
import sys

import pytest

from sift.core.config import Config, ConfigError, loads, parse_duration, parse_size


def test_defaults_need_no_file():
    cfg = Config()
    assert cfg.fetch.max_body == 5_000_000 and cfg.fetch.timeout == 20
    assert cfg.fetch.pdf_max_body == 100_000_000 and cfg.fetch.pdf_timeout == 120
    assert cfg.gates.global_ == 8 and cfg.gates.per_host == 2
    assert cfg.cache.ttl == 24 * 3600
    assert cfg.fetch.max_redirects == 5
    assert cfg.server.allowed_hosts == ["localhost", "127.0.0.1", "[::1]"]
    assert cfg.server.allowed_origins == [] and cfg.server.public_url == ""
    assert cfg.identity.enabled is False  # no request is signed unless the operator asks


def test_sizes_and_durations():
    assert parse_size("5MB") == 5_000_000
    assert parse_size("64MiB") == 64 * 1024**2
    assert parse_size(1024) == 1024
    assert parse_duration("20s") == 20 and parse_duration("24h") == 86400
    assert parse_duration("250ms") == 0.25 and parse_duration(1.5) == 1.5
    cfg = loads('[fetch]\nmax_body = "1MB"\ntimeout = "2s"\n[gates]\nglobal = 3\n')
    assert cfg.fetch.max_body == 1_000_000 and cfg.fetch.timeout == 2 and cfg.gates.global_ == 3


@pytest.mark.parametrize(
    ("text", "names"),
    [
        ("[fetch]\nbogus = 1\n", ["bogus", "fetch"]),
        ('[fetch]\nmax_body = "lots"\n', ["fetch.max_body"]),
        ('[cache]\nttl = "soon"\n', ["cache.ttl"]),
        ('out_cap = "x"\n', ["out_cap"]),
        ("nonsense = true\n", ["nonsense"]),
        ("[gates]\nper_host = 0\n", ["gates.per_host"]),
        ('[guard]\nallow_prefixes = ["not-a-net"]\n', ["guard.allow_prefixes"]),
        ('[[caller]]\nname = "a"\ntoken_sha256 = "abc"\n', ["token_sha256"]),
        ("[fetch\n", ["TOML"]),
        ("[render]\nslots = 0\n", ["render.slots"]),
        ("[pdf]\nchildren = 0\n", ["pdf.children"]),
        ("[pdf]\nchildren = 17\n", ["pdf.children"]),
        ('[render]\nmax_rss = "lots"\n', ["render.max_rss"]),
        ('[fetch]\nrobots = "sometimes"\n', ["fetch.robots"]),
        ('[server]\npublic_url = "ftp://x"\n', ["server.public_url"]),
        ('[server]\nallowed_origins = ["https://a.example/path"]\n', ["server.allowed_origins"]),
        ('[server]\nallowed_origins = ["*"]\n', ["server.allowed_origins"]),
        ('[server]\nallowed_hosts = ["::1"]\n', ["server.allowed_hosts"]),
        ('[server]\nallowed_hosts = ["a/b"]\n', ["server.allowed_hosts"]),
        ('[identity]\nsignature_agent = "not a url"\n', ["identity.signature_agent"]),
        ("[identity]\nenabled = 1\n", ["identity.enabled"]),
        ("[read]\nmax_tokens = 50\n", ["read.max_tokens"]),  # every read would be a 400
        ("[read]\nmax_tokens = 500000\n", ["read.max_tokens"]),
    ],
)
def test_bad_config_names_the_key(text, names):
    with pytest.raises(ConfigError) as info:
        loads(text)
    for name in names:
        assert name in str(info.value), (name, str(info.value))


def test_serve_refuses_a_bad_config(tmp_path):
    cfg = tmp_path / "sift.toml"
    cfg.write_text("[fetch]\nmax_bodyy = 1\n")
    p = subprocess.run(
        [sys.executable, "-m", "sift", "--config", str(cfg), "serve"],
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert p.returncode != 0
    assert "max_bodyy" in p.stderr


@pytest.mark.skipif(os.geteuid() != 0, reason="the browser's user is checked where sift is root")
def test_render_user_must_exist_and_not_be_root():
    with pytest.raises(ConfigError, match=r"render\.user"):
        loads('[render]\nuser = "no-such-user-for-sift"\n')
    with pytest.raises(ConfigError, match="must not be root"):
        loads('[render]\nuser = "root"\n')
    assert loads('[render]\nenabled = false\nuser = "root"\n').render.user == "root"


def test_webhook_section():
    cfg = loads('[webhook]\nsecret = "s"\nattempts = 2\nbackoff = "250ms"\nmax_body = "1MiB"\n')
    hook = cfg.webhook
    assert (hook.secret, hook.attempts, hook.backoff, hook.max_body) == ("s", 2, 0.25, 1024**2)
    assert Config().webhook.secret == "" and Config().webhook.timeout == 10
    for text, key in (("attempts = 0", "webhook.attempts"), ("pending = -1", "webhook.pending")):
        with pytest.raises(ConfigError) as err:
            loads(f"[webhook]\n{text}\n")
        assert key in str(err.value)
