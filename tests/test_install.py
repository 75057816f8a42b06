"""The install respects the host: `make serve` installs what serving needs (not the test tools),
and every system package goes through `ops/apt-install`, which takes no recommends, waits a
bounded time for a held apt or dpkg lock, and says exactly why when it cannot install.

apt-get itself is never run here: a stand-in `apt-get` on PATH plays the host's package manager
(a held lock, a failure), and records how it was asked.
"""

from __future__ import annotations

import os
import re
import shutil
import subprocess
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
SCRIPT = ROOT / "ops" / "apt-install"
HELD = (
    "E: Could not get lock /var/lib/dpkg/lock-frontend. It is held by process 812 (unattended-upgr)"
)
TOOLS = ("sh", "date", "sleep", "id", "grep", "sed", "cat", "mktemp", "rm", "tail")


def _dry_run(target: str, tmp_path: Path) -> str:
    """`make -n TARGET` for a venv not yet made: the commands a fresh clone would run."""
    venv = tmp_path / "venv"
    done = subprocess.run(
        ["make", "-n", target, f"VENV={venv}"], cwd=ROOT, capture_output=True, text=True, check=True
    )
    return done.stdout


def test_make_serve_installs_sift_without_the_test_tools(tmp_path):
    serve = _dry_run("serve", tmp_path)
    assert re.search(r"pip install -q -c constraints.txt -e \.$", serve, re.MULTILINE)
    assert ".[test]" not in serve and "bin/pytest" not in serve
    test = _dry_run("test", tmp_path)
    assert "-e '.[test]'" in test


def test_make_bench_installs_the_baselines_of_its_rows(tmp_path):
    """A fresh clone's `make bench` installs pdftotext, Tesseract and wrk like the other system
    packages (the PDF, OCR and load rows measure against them), then runs the bench."""
    bench = _dry_run("bench", tmp_path)
    for package in ("poppler-utils", "tesseract-ocr", "wrk", "chromium"):
        assert re.search(rf"ops/apt-install .*\b{package}\b", bench), package
    assert "-e '.[test,bench]'" in bench and "python -m bench" in bench


def test_every_system_package_goes_through_the_install_script():
    for name in ("Makefile", ".ci/run"):
        text = (ROOT / name).read_text()
        assert "apt-get install" not in text, f"{name} installs around ops/apt-install"
        assert "ops/apt-install" in text
    assert "fonts-liberation" in (ROOT / "Makefile").read_text()  # headless Chromium needs a font


def _host(tmp_path: Path, script: str) -> dict[str, str]:
    """A PATH whose `apt-get` is SCRIPT (its calls appended to `calls`), with the tools sh needs."""
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir()
    for tool in TOOLS:
        found = shutil.which(tool)
        assert found, tool
        (bin_dir / tool).symlink_to(found)
    fake = bin_dir / "apt-get"
    fake.write_text(f'#!/bin/sh\necho "$*" >> {tmp_path}/calls\n{script}\n')
    fake.chmod(0o755)
    return {"PATH": str(bin_dir), "APT_LOCK_WAIT": "2", "APT_LOCK_POLL": "0.2"}


def _install(env: dict[str, str]) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [str(SCRIPT), "rendering is off", "chromium", "fonts-liberation"],
        env=env,
        capture_output=True,
        text=True,
        timeout=30,
    )


needs_root = pytest.mark.skipif(os.geteuid() != 0, reason="the script installs only as root")


@needs_root
def test_packages_are_installed_without_recommends_and_a_bounded_lock_wait(tmp_path):
    done = _install(_host(tmp_path, "exit 0"))
    assert done.returncode == 0, done.stderr
    update, install = (tmp_path / "calls").read_text().splitlines()
    assert update == "-q update"
    assert "--no-install-recommends" in install and "DPkg::Lock::Timeout=" in install
    assert install.endswith("install --no-install-recommends chromium fonts-liberation")


@needs_root
def test_a_held_lock_is_waited_for_then_the_packages_are_installed(tmp_path):
    script = f'[ "$(cat {tmp_path}/calls | wc -l)" -gt 2 ] && exit 0\necho "{HELD}" >&2\nexit 100'
    env = _host(tmp_path, script)
    (tmp_path / "bin" / "wc").symlink_to(shutil.which("wc") or "wc")
    done = _install(env)
    assert done.returncode == 0, done.stderr
    assert "waiting up to 2 s for the package lock" in done.stderr
    assert "process 812 (unattended-upgr)" in done.stderr


@needs_root
def test_a_lock_held_past_the_wait_is_named_with_its_holder(tmp_path):
    done = _install(_host(tmp_path, f'echo "{HELD}" >&2\nexit 100'))
    assert done.returncode == 1
    last = done.stderr.strip().splitlines()[-1]
    assert last.startswith("chromium fonts-liberation not installed, rendering is off:")
    assert "kept the package lock for over 2 s" in last and "process 812 (unattended-upgr)" in last
    assert "apt-get install --no-install-recommends chromium fonts-liberation" in last


@needs_root
def test_another_failure_is_said_with_apt_s_own_error(tmp_path):
    script = (
        '[ "$1" = -q ] && [ "$2" = update ] && exit 0\n'
        'echo "E: Unable to locate package chromium" >&2\nexit 100'
    )
    done = _install(_host(tmp_path, script))
    assert done.returncode == 1
    assert "apt-get install failed: Unable to locate package chromium" in done.stderr


def test_a_host_without_apt_is_told_so(tmp_path):
    env = _host(tmp_path, "exit 0")
    (tmp_path / "bin" / "apt-get").unlink()
    done = _install(env)
    assert done.returncode == 1
    assert "no apt-get on this system" in done.stderr and "rendering is off" in done.stderr
