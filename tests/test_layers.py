"""The import contracts of pyproject.toml hold, and they catch a wrong-way import: a copy of
the package with one logic module importing an actor must fail `lint-imports`. A fetch written
around the upstream part (no guard, no gate) fails them too, or the check below."""

from __future__ import annotations

import ast
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
LINT = Path(sys.executable).with_name("lint-imports")


def _lint(tree: Path) -> subprocess.CompletedProcess[str]:
    """`lint-imports` on the contracts of pyproject.toml, with `tree` first on the path."""
    env = {**os.environ, "PYTHONPATH": str(tree)}
    return subprocess.run(
        [str(LINT), "--no-cache", str(ROOT / "pyproject.toml")],
        cwd=tree,
        env=env,
        capture_output=True,
        text=True,
        timeout=120,
    )


def _lint_with(tmp_path: Path, module: str, added: str) -> subprocess.CompletedProcess[str]:
    """`_lint` on a copy of the package with `added` appended to `module` (a path in it)."""
    shutil.copytree(ROOT / "sift", tmp_path / "sift", ignore=shutil.ignore_patterns("__pycache__"))
    path = tmp_path / "sift" / module
    path.write_text(path.read_text() + added)
    return _lint(tmp_path)


def test_the_real_tree_keeps_every_contract():
    done = _lint(ROOT)
    assert done.returncode == 0, done.stdout + done.stderr
    assert "0 broken" in done.stdout


# (module of a copy of `sift/`, the import added, what `lint-imports` must then report)
WRONG_WAY = [
    pytest.param(
        "fetch/guard.py",
        "import sift.actors.base",
        "sift.fetch.guard -> sift.actors.base",
        id="logic-imports-an-actor",
    ),
    pytest.param(  # a step of one fetch never imports a way in that uses the steps
        "service/steps/browse.py",
        "import sift.service.entries.local_run",
        "sift.service.steps.browse -> sift.service.entries.local_run",
        id="step-imports-an-entry",
    ),
    pytest.param(  # inside `steps/`, the caller's view never imports the browser path
        "service/steps/view.py",
        "import sift.service.steps.browse",
        "one fetch reads down its steps BROKEN",
        id="steps-read-down",
    ),
    pytest.param(  # OCR reuses the PDF runner, never the other way
        "documents/pdf/runner.py",
        "import sift.documents.ocr.runner",
        "sift.documents.pdf.runner -> sift.documents.ocr.runner",
        id="pdf-imports-ocr",
    ),
    pytest.param(  # a step that asks the fetch actor itself would skip the guard and gates
        "service/steps/site_markdown.py",
        "from sift.actors.fetch import FetchRequest",
        "sift.service.steps.site_markdown -> sift.actors.fetch",
        id="fetch-around-upstream",
    ),
    pytest.param(  # the small parts of the running service stay independent
        "service/parts/held.py",
        "import sift.service.parts.gates",
        "the parts of the running service know nothing of each other BROKEN",
        id="part-knows-a-part",
    ),
]


@pytest.mark.parametrize(("module", "added", "reported"), WRONG_WAY)
def test_a_wrong_way_import_breaks_the_contracts(tmp_path, module, added, reported):
    done = _lint_with(tmp_path, module, f"\n{added}  # the wrong way\n")
    assert done.returncode != 0, done.stdout
    assert reported in done.stdout


def test_an_import_cycle_breaks_the_contracts(tmp_path):
    """Even one made only for the type checker."""
    cycle = (
        "\nfrom typing import TYPE_CHECKING\nif TYPE_CHECKING:\n"
        "    import sift.service.steps.pipeline\n"
    )
    done = _lint_with(tmp_path, "service/parts/runtime.py", cycle)
    assert done.returncode != 0, done.stdout
    assert "BROKEN" in done.stdout


# The fetch actor's message is named, and a fetch actor picked, only by the upstream part (and
# by the actor itself): `Roles` starts the role and may import its module, nothing more.
ITS_OWN = {Path("actors/fetch.py"), Path("service/parts/upstream.py")}


def _asks_the_fetch_actor(node: ast.AST) -> bool:
    """`FetchRequest` named (imported, or read off its module), or `….fetcher()` called."""
    if isinstance(node, ast.Name):
        return node.id == "FetchRequest"
    if isinstance(node, ast.alias):
        return node.name == "FetchRequest"
    if isinstance(node, ast.Attribute):
        return node.attr == "FetchRequest"
    if isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute):
        return node.func.attr == "fetcher"
    return False


def _fetch_actor_users(tree: Path) -> list[str]:
    """Where a module of `tree` (a copy of `sift/`) asks the fetch actor, outside `ITS_OWN`."""
    return [
        f"{path.relative_to(tree)}:{getattr(node, 'lineno', 0)}"
        for path in sorted(tree.rglob("*.py"))
        if path.relative_to(tree) not in ITS_OWN
        for node in ast.walk(ast.parse(path.read_text()))
        if _asks_the_fetch_actor(node)
    ]


def test_only_the_upstream_part_asks_the_fetch_actor():
    assert _fetch_actor_users(ROOT / "sift") == []


def test_a_fetch_actor_picked_elsewhere_is_found(tmp_path):
    """The check catches the way around the import contract: `Roles` picks a fetch actor."""
    shutil.copytree(ROOT / "sift", tmp_path / "sift", ignore=shutil.ignore_patterns("__pycache__"))
    usage = tmp_path / "sift" / "service" / "steps" / "usage.py"
    usage.write_text(usage.read_text() + "\n\ndef around(svc):\n    return svc.roles.fetcher()\n")
    assert _fetch_actor_users(tmp_path / "sift") == [
        f"service/steps/usage.py:{len(usage.read_text().splitlines())}"
    ]
