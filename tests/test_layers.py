"""The import contracts of pyproject.toml hold, and they catch a wrong-way import: a copy of
the package with one logic module importing an actor must fail `lint-imports`."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
LINT = Path(sys.executable).with_name("lint-imports")


def _lint(tree: Path) -> subprocess.CompletedProcess[str]:
    """`lint-imports` on the contracts of pyproject.toml, with `tree` first on the path."""
    env = {**os.environ, "PYTHONPATH": str(tree)}
    return subprocess.run(
        [str(LINT), "--no-cache", str(ROOT / "pyproject.toml")],
        cwd=tree, env=env, capture_output=True, text=True, timeout=120,
    )  # fmt: skip


def test_the_real_tree_keeps_every_contract():
    done = _lint(ROOT)
    assert done.returncode == 0, done.stdout + done.stderr
    assert "0 broken" in done.stdout


def test_a_wrong_way_import_breaks_the_layers(tmp_path):
    shutil.copytree(ROOT / "sift", tmp_path / "sift", ignore=shutil.ignore_patterns("__pycache__"))
    guard = tmp_path / "sift" / "fetch" / "guard.py"
    guard.write_text(guard.read_text() + "\nimport sift.actors.base  # the wrong way\n")
    done = _lint(tmp_path)
    assert done.returncode != 0, done.stdout
    assert "sift.fetch.guard -> sift.actors.base" in done.stdout


def test_an_import_cycle_breaks_the_contracts(tmp_path):
    """Even one made only for the type checker."""
    shutil.copytree(ROOT / "sift", tmp_path / "sift", ignore=shutil.ignore_patterns("__pycache__"))
    render = tmp_path / "sift" / "service" / "runtime.py"
    cycle = (
        "\nfrom typing import TYPE_CHECKING\nif TYPE_CHECKING:\n    import sift.service.pipeline\n"
    )
    render.write_text(render.read_text() + cycle)
    done = _lint(tmp_path)
    assert done.returncode != 0, done.stdout
    assert "BROKEN" in done.stdout


def test_the_browser_path_and_the_local_runner_stay_apart(tmp_path):
    """The pipeline's steps import one way, and the browser path and the local runner (a
    file's bytes in place of a fetch) never import each other."""
    shutil.copytree(ROOT / "sift", tmp_path / "sift", ignore=shutil.ignore_patterns("__pycache__"))
    browse = tmp_path / "sift" / "service" / "browse.py"
    browse.write_text(browse.read_text() + "\nimport sift.service.local_run  # the wrong way\n")
    done = _lint(tmp_path)
    assert done.returncode != 0, done.stdout
    assert "sift.service.browse -> sift.service.local_run" in done.stdout
