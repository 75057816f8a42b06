"""`sift serve` refuses a bad config at once: exit status 2, one line naming the key, no
traceback. Every refusal is checked in this process through `main` (the function the `sift`
command runs: it loads and checks the config, prints the line and answers the exit status);
a few real processes show the wiring (the exit status, `--config` on either side of `serve`,
a port in use)."""

from __future__ import annotations

import hashlib
import os
import socket
import subprocess
import sys
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest

from sift.cli.main import main
from sift.core.callers import callers_for
from sift.core.config import ZERO_ALLOWED, Config, _numbers, loads


@pytest.fixture
def busy() -> Iterator[str]:
    """An address another socket listens on: a config that got past its checks would stop
    there with exit 1 (not serve on), so a refusal that went missing fails, never hangs."""
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        s.listen()
        yield f"127.0.0.1:{s.getsockname()[1]}"


@pytest.fixture
def serve(
    tmp_path: Path, busy: str, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> Callable[..., tuple[int, str]]:
    """`serve(text, *args)`: `sift --config F serve ARGS` in this process, F holding `text`;
    (exit status, stderr)."""
    for name in [n for n in os.environ if n.startswith("SIFT_")]:
        monkeypatch.delenv(name)

    def run(text: str, *args: str) -> tuple[int, str]:
        cfg = _config(tmp_path, text if "listen" in text else f'listen = "{busy}"\n' + text)
        capsys.readouterr()
        code = main(["--config", str(cfg), "serve", *args])
        return code, capsys.readouterr().err

    return run


def _config(tmp_path: Path, text: str) -> Path:
    cfg = tmp_path / "sift.toml"
    if "state_dir" not in text:
        text = f'state_dir = "{tmp_path / "state"}"\n' + text
    cfg.write_text(text)
    return cfg


def _process(*argv: str) -> subprocess.CompletedProcess[str]:
    """`sift ARGV` as a real process, as an operator runs it."""
    env = {k: v for k, v in os.environ.items() if not k.startswith("SIFT_")}
    return subprocess.run(
        [sys.executable, "-m", "sift", *argv], capture_output=True, text=True, env=env, timeout=30
    )


def _refused(answer: tuple[int, str], *words: str) -> None:
    code, stderr = answer
    assert code == 2, stderr
    lines = stderr.strip().splitlines()
    assert len(lines) == 1 and "Traceback" not in stderr, stderr
    for w in words:
        assert w in lines[0], (w, lines[0])


def _toml(key: str, value: object) -> str:
    section, _, name = key.rpartition(".")
    return (f"[{section}]\n" if section else "") + f"{name} = {value}\n"


NUMBER_KEYS = [key for key, _value, default in _numbers(Config()) if default != 0]


@pytest.mark.parametrize("key", [k for k in NUMBER_KEYS if k not in ZERO_ALLOWED])
def test_zero_is_refused_for_every_count_size_and_timeout(serve, key):
    _refused(serve(_toml(key, 0)), f"`{key}`", "more than 0")


@pytest.mark.parametrize("key", NUMBER_KEYS[::3] + sorted(ZERO_ALLOWED))
def test_negative_is_refused(serve, key):
    _refused(serve(_toml(key, -1)), key)


@pytest.mark.parametrize(
    ("listen", "words"),
    [
        ("nonsense", ["`listen`", "not host:port"]),
        ("127.0.0.1:99999", ["`listen`", "99999", "out of range"]),
        ("127.0.0.1:http", ["`listen`", "not host:port"]),
        ("bad host!:8080", ["`listen`", "neither an IP address nor a host name"]),
    ],
)
def test_a_bad_listen_is_refused(serve, listen, words):
    _refused(serve(f'listen = "{listen}"\n'), *words)
    _refused(serve("", "--listen", listen), *words)  # the flag too


def test_a_state_dir_that_is_a_file_is_refused(serve, tmp_path):
    (tmp_path / "file").write_text("x")
    _refused(serve(f'state_dir = "{tmp_path / "file"}"\n'), "`state_dir`", "not a directory")


@pytest.mark.parametrize("where", ["under-a-file", "in-proc", "proc"])
def test_a_state_dir_that_cannot_be_created_or_written_is_refused(serve, tmp_path, where):
    """Tests run as root: "not writable" is a directory no one may write, /proc."""
    (tmp_path / "file").write_text("x")
    path = {
        "under-a-file": tmp_path / "file" / "state",
        "in-proc": Path("/proc/sift-state"),
        "proc": Path("/proc"),
    }[where]
    words = ["not writable"] if where == "proc" else ["cannot be created"]
    _refused(serve(f'state_dir = "{path}"\n'), "`state_dir`", str(path), *words)


def _exited(p: subprocess.CompletedProcess[str]) -> tuple[int, str]:
    return p.returncode, p.stderr


def test_the_config_flag_works_before_and_after_serve(tmp_path):
    """A real process: exit status 2 and the one line, `--config` on either side of `serve`."""
    cfg = _config(tmp_path, "[fetch]\ntimeout = 0\n")
    _refused(_exited(_process("--config", str(cfg), "serve")), "fetch.timeout")
    _refused(_exited(_process("serve", "--config", str(cfg))), "fetch.timeout")


def test_a_port_in_use_exits_1_naming_the_address(tmp_path, busy):
    cfg = _config(tmp_path, f'listen = "{busy}"\n')
    p = _process("--config", str(cfg), "serve")
    assert p.returncode == 1, p.stderr
    assert f"cannot listen on {busy}" in p.stderr and "Traceback" not in p.stderr, p.stderr


@pytest.mark.parametrize(
    "agent", [r"sift\r\nX-Injected: 1", r"sift\nbot", r"sift\u0000", r"sift\u007f"]
)
def test_a_user_agent_that_is_not_one_header_line_is_refused(serve, agent):
    """It is sent as it is with every fetch: a line break would add headers of its own."""
    _refused(serve(f'[fetch]\nuser_agent = "{agent}"\n'), "`fetch.user_agent`")


def test_a_user_agent_with_a_tab_is_a_header_line():
    assert loads('[fetch]\nuser_agent = "sift\\t(ops)"\n').fetch.user_agent == "sift\t(ops)"


def _caller(name: str, digest: str) -> str:
    return f'[[caller]]\nname = "{name}"\ntoken_sha256 = "{digest}"\n'


def test_a_token_hash_in_capitals_is_64_hex_digits_too():
    """`sha256sum` writes small letters, other tools capitals: the same hash either way."""
    digest = hashlib.sha256(b"a token").hexdigest()
    cfg = loads(_caller("ops", digest.upper()))
    answer = callers_for(cfg)[0].authenticate("Bearer a token")
    assert answer is not None and answer.name == "ops"


def test_one_token_for_two_callers_is_refused(serve):
    """Which of them a request is would be a guess; two tokens for one name (a rotation) are
    fine."""
    one, two = (hashlib.sha256(t).hexdigest() for t in (b"one", b"two"))
    _refused(serve(_caller("a", one) + _caller("b", one.upper())), "token_sha256", "'a'", "'b'")
    assert len(loads(_caller("a", one) + _caller("a", two)).caller) == 2
