"""Configuration people can read (issue 37): `sift config example` prints every key of the schema
with its default and a one-line comment, and reads back as the defaults; `sift config check FILE`
checks a file without starting anything (exit 0, or 2 with the error)."""

from __future__ import annotations

import subprocess
import sys
import tomllib
from pathlib import Path
from typing import Any

import msgspec

from sift.core.config import CallerConfig, Config, loads

ROOT = Path(__file__).resolve().parents[2]


def _sift(*argv: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "sift", *argv], capture_output=True, text=True, timeout=60
    )


def _schema_keys(struct: type[msgspec.Struct], prefix: str = "") -> set[str]:
    keys = set()
    for f in msgspec.structs.fields(struct):
        kind = f.type
        if isinstance(kind, type) and issubclass(kind, msgspec.Struct):
            keys |= _schema_keys(kind, f"{prefix}{f.encode_name}.")
        elif f.name == "caller":
            keys |= _schema_keys(CallerConfig, "caller.")
        else:
            keys.add(prefix + f.encode_name)
    return keys


def _example_keys(table: dict[str, Any], prefix: str = "") -> set[str]:
    keys = set()
    for key, value in table.items():
        if isinstance(value, dict) and value:  # a section; `{}` is a table-valued key's default
            keys |= _example_keys(value, f"{prefix}{key}.")
        else:
            keys.add(prefix + key)
    return keys


def test_the_example_holds_every_key_of_the_schema_with_a_comment():
    done = _sift("config", "example")
    assert done.returncode == 0, done.stderr
    text = done.stdout
    _, _, commented = text.partition("# [[caller]]\n")  # an example caller, commented out
    caller = "\n".join(ln[2:] for ln in commented.splitlines() if " = " in ln)
    caller_keys = {f"caller.{k}" for k in tomllib.loads(caller)}
    assert _example_keys(tomllib.loads(text)) | caller_keys == _schema_keys(Config)
    lines = text.splitlines()
    for i, line in enumerate(lines):
        bare = line.removeprefix("# ")
        if " = " in bare and not bare.startswith(("#", " ")) and i > 3:
            comment = lines[i - 1]
            assert comment.startswith("# ") and len(comment.strip("# ")) > 5, (line, comment)


def test_the_example_reads_back_as_the_defaults():
    assert loads(_sift("config", "example").stdout) == Config()


def test_config_check_validates_without_starting(tmp_path):
    state = tmp_path / "state"
    good = tmp_path / "good.toml"
    good.write_text(f'state_dir = "{state}"\n[fetch]\nmax_body = "1MB"\n')
    done = _sift("config", "check", str(good))
    assert done.returncode == 0 and done.stdout.strip() == f"{good}: ok", done.stderr
    assert not state.exists()  # nothing started, nothing made
    bad = tmp_path / "bad.toml"
    bad.write_text("[fetch]\nmax_body = 0\n")
    done = _sift("config", "check", str(bad))
    assert done.returncode == 2
    assert "`fetch.max_body` must be more than 0, got 0" in done.stderr
    bad.write_text("[fetch]\nmax_bodies = 1\n")
    done = _sift("config", "check", str(bad))
    assert done.returncode == 2 and "max_bodies" in done.stderr


def test_the_readme_points_at_the_commands_not_the_source():
    readme = (ROOT / "README.md").read_text()
    assert "sift config example" in readme and "sift config check" in readme
    assert "sift/core/config.py" not in readme
    assert "allow_ports" in readme


def test_no_config_module_is_near_the_size_limit():
    for module in (ROOT / "sift" / "core" / "config").glob("*.py"):
        assert len(module.read_text().splitlines()) < 380, module


def test_a_blocked_address_names_the_setting_in_the_log_not_the_answer(make_sift, origin, captured):
    """The operator reads which setting would allow a refusal; the caller does not (it would
    tell whoever probes for internal services what to look for)."""
    sift = make_sift({"guard": {"allow_prefixes": []}})
    r = sift.fetch(origin.url("/article"))
    assert r.status == 403 and r.json["error"] == "blocked: loopback address 127.0.0.1", r.body
    r = sift.fetch("http://8.8.8.8:8080/")  # refused before any connection
    assert r.status == 403 and r.json["error"] == "blocked: port 8080 not allowed", r.body
    for answer in (r.body, sift.fetch(origin.url("/article")).body):
        assert b"allow_" not in answer and b"[guard]" not in answer
    captured.wait_requests(3)
    allowed = [line.get("allowed_by") for line in captured.requests()]
    assert allowed[0] is not None and "[guard] allow_prefixes" in allowed[0]
    assert allowed[1] == "[guard] allow_ports"
