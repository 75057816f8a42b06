"""The suite's own house rules, read from its source: what tests share lives in tests/support,
so no test module imports another; and a shared fixture is registered once, in
tests/conftest.py, so a test asks for it by name and never imports it."""

from __future__ import annotations

import ast
from pathlib import Path

TESTS = Path(__file__).resolve().parent


def module_name(path: Path, tests: Path) -> str:
    return ".".join(path.relative_to(tests.parent).with_suffix("").parts)


def modules_of_tests(tests: Path) -> list[Path]:
    return sorted(tests.rglob("test_*.py"))


def imported(path: Path, tests: Path) -> list[tuple[str, str | None]]:
    """(module, name) for every import in `path`, relative ones made absolute; `name` is None
    for `import module`."""
    package = module_name(path, tests).rsplit(".", 1)[0].split(".")
    found: list[tuple[str, str | None]] = []
    for node in ast.walk(ast.parse(path.read_text())):
        if isinstance(node, ast.Import):
            found += [(alias.name, None) for alias in node.names]
        elif isinstance(node, ast.ImportFrom):
            base = package[: len(package) - node.level + 1] if node.level else []
            module = ".".join([*base, *filter(None, [node.module])])
            found += [(module, alias.name) for alias in node.names]
    return found


def is_test_module(module: str, name: str | None) -> bool:
    if module != "tests" and not module.startswith("tests."):
        return False
    return any(part.startswith("test_") for part in [*module.split("."), name or ""])


def fixtures(path: Path) -> set[str]:
    """Names of the functions `path` decorates with `pytest.fixture`."""
    names = set()
    for node in ast.walk(ast.parse(path.read_text())):
        if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef):
            for d in node.decorator_list:
                target = d.func if isinstance(d, ast.Call) else d
                if ast.unparse(target) == "pytest.fixture":
                    names.add(node.name)
    return names


def support_fixtures(tests: Path) -> dict[str, set[str]]:
    """Every support module that defines fixtures, and their names."""
    found = {module_name(p, tests): fixtures(p) for p in sorted((tests / "support").rglob("*.py"))}
    return {module: names for module, names in found.items() if names}


def registered(tests: Path) -> set[str]:
    """The modules named in `pytest_plugins` of tests/conftest.py."""
    for node in ast.parse((tests / "conftest.py").read_text()).body:
        if isinstance(node, ast.Assign) and ast.unparse(node.targets[0]) == "pytest_plugins":
            return set(ast.literal_eval(node.value))
    return set()


def imports_of_tests(tests: Path) -> dict[str, list[str]]:
    found: dict[str, list[str]] = {}
    for path in modules_of_tests(tests):
        wrong = [f"{m}.{n}" if n else m for m, n in imported(path, tests) if is_test_module(m, n)]
        if wrong:
            found[str(path.relative_to(tests))] = wrong
    return found


def imported_fixtures(tests: Path) -> dict[str, list[str]]:
    """Fixtures a test module imports by name, or binds from a support module it imported."""
    shared = support_fixtures(tests)
    found: dict[str, list[str]] = {}
    for path in modules_of_tests(tests):
        imports = imported(path, tests)
        wrong = [f"{m}.{n}" for m, n in imports if n in shared.get(m, ())]
        modules = [f"{m}.{n}" if n else m for m, n in imports]
        bound = {module.rsplit(".", 1)[-1]: module for module in modules}
        for node in ast.parse(path.read_text()).body:
            for value in ast.walk(node) if isinstance(node, ast.Assign) else []:
                if isinstance(value, ast.Attribute) and isinstance(value.value, ast.Name):
                    owner = bound.get(value.value.id, "")
                    if value.attr in shared.get(owner, ()):
                        wrong.append(f"{owner}.{value.attr}")
        if wrong:
            found[str(path.relative_to(tests))] = wrong
    return found


def test_no_test_module_imports_another():
    assert imports_of_tests(TESTS) == {}


def test_no_test_module_imports_a_fixture():
    assert imported_fixtures(TESTS) == {}


def test_every_shared_fixture_is_registered_in_conftest():
    assert set(support_fixtures(TESTS)) - registered(TESTS) == set()


ROOT = TESTS.parent


def architecture_rows(text: str) -> dict[str, str]:
    """ARCHITECTURE.md's table of folders: `folder/` → the row's text."""
    rows: dict[str, str] = {}
    for line in text.splitlines():
        cells = line.split("|")
        if len(cells) > 3 and cells[1].strip().startswith("`") and cells[1].strip().endswith("/`"):
            rows[cells[1].strip().strip("`")] = cells[2]
    return rows


def unnamed_modules(root: Path, text: str) -> list[str]:
    """The modules of `root/sift` that their folder's row of the table does not name."""
    rows = architecture_rows(text)
    missing = []
    for path in sorted((root / "sift").rglob("*.py")):
        if path.name == "__init__.py":
            continue
        folder = path.parent.relative_to(root / "sift").as_posix()
        row = rows.get("sift/" if folder == "." else folder + "/", "")
        if f"`{path.name}`" not in row:
            missing.append(path.relative_to(root).as_posix())
    return missing


def test_architecture_names_every_module_in_its_folders_row():
    text = (ROOT / "ARCHITECTURE.md").read_text()
    assert unnamed_modules(ROOT, text) == []


def test_a_module_left_out_of_the_architecture_is_found(tmp_path):
    """The check can fail: a module added to a copy of the tree and named nowhere."""
    (tmp_path / "sift" / "fetch").mkdir(parents=True)
    (tmp_path / "sift" / "fetch" / "newcomer.py").write_text("")
    text = "| folder | owns |\n| --- | --- |\n| `fetch/` | `guard.py` |\n"
    assert unnamed_modules(tmp_path, text) == ["sift/fetch/newcomer.py"]
