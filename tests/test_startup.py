"""`sift serve` refuses a bad config at once: exit status 2, one line naming the key, no
traceback. Run as a real process, as an operator would."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from sift.core.config import ZERO_ALLOWED, Config, _numbers


def _serve(tmp_path: Path, text: str, *args: str) -> subprocess.CompletedProcess[str]:
    cfg = tmp_path / "sift.toml"
    if "state_dir" not in text:
        text = f'state_dir = "{tmp_path / "state"}"\n' + text
    cfg.write_text(text)
    env = {k: v for k, v in os.environ.items() if not k.startswith("SIFT_")}
    return subprocess.run(
        [sys.executable, "-m", "sift", "--config", str(cfg), "serve", *args],
        capture_output=True, text=True, env=env, timeout=30,
    )  # fmt: skip


def _refused(p: subprocess.CompletedProcess[str], *words: str) -> None:
    assert p.returncode == 2, p.stderr
    lines = p.stderr.strip().splitlines()
    assert len(lines) == 1 and "Traceback" not in p.stderr, p.stderr
    for w in words:
        assert w in lines[0], (w, lines[0])


def _toml(key: str, value: object) -> str:
    section, _, name = key.rpartition(".")
    return (f"[{section}]\n" if section else "") + f"{name} = {value}\n"


NUMBER_KEYS = [key for key, _value, default in _numbers(Config()) if default != 0]


@pytest.mark.parametrize("key", [k for k in NUMBER_KEYS if k not in ZERO_ALLOWED])
def test_zero_is_refused_for_every_count_size_and_timeout(tmp_path, key):
    _refused(_serve(tmp_path, _toml(key, 0)), f"`{key}`", "more than 0")


@pytest.mark.parametrize("key", NUMBER_KEYS[::3] + sorted(ZERO_ALLOWED))
def test_negative_is_refused(tmp_path, key):
    _refused(_serve(tmp_path, _toml(key, -1)), key)


@pytest.mark.parametrize(
    ("listen", "words"),
    [
        ("nonsense", ["`listen`", "not host:port"]),
        ("127.0.0.1:99999", ["`listen`", "99999", "out of range"]),
        ("127.0.0.1:http", ["`listen`", "not host:port"]),
        ("bad host!:8080", ["`listen`", "neither an IP address nor a host name"]),
    ],
)
def test_a_bad_listen_is_refused(tmp_path, listen, words):
    _refused(_serve(tmp_path, f'listen = "{listen}"\n'), *words)
    _refused(_serve(tmp_path, "", "--listen", listen), *words)  # the flag too


def test_a_state_dir_that_is_a_file_is_refused(tmp_path):
    (tmp_path / "file").write_text("x")
    p = _serve(tmp_path, f'state_dir = "{tmp_path / "file"}"\n')
    _refused(p, "`state_dir`", "not a directory")


@pytest.mark.parametrize("where", ["under-a-file", "in-proc", "proc"])
def test_a_state_dir_that_cannot_be_created_or_written_is_refused(tmp_path, where):
    """Tests run as root: "not writable" is a directory no one may write, /proc."""
    (tmp_path / "file").write_text("x")
    path = {"under-a-file": tmp_path / "file" / "state", "in-proc": Path("/proc/sift-state"),
            "proc": Path("/proc")}[where]  # fmt: skip
    words = ["not writable"] if where == "proc" else ["cannot be created"]
    _refused(_serve(tmp_path, f'state_dir = "{path}"\n'), "`state_dir`", str(path), *words)


def test_the_config_flag_works_before_and_after_serve(tmp_path):
    p = _serve(tmp_path, "[fetch]\ntimeout = 0\n")  # `sift --config F serve`
    _refused(p, "fetch.timeout")
    cfg = tmp_path / "sift.toml"
    env = {k: v for k, v in os.environ.items() if not k.startswith("SIFT_")}
    p = subprocess.run(
        [sys.executable, "-m", "sift", "serve", "--config", str(cfg)],
        capture_output=True, text=True, env=env, timeout=30,
    )  # fmt: skip
    _refused(p, "fetch.timeout")
