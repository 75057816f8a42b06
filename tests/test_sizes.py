"""The middle layer stays readable in one sitting: no module of sift over 400 lines, and no
function of the service layer (every request passes through it) over 60."""

from __future__ import annotations

import ast
from pathlib import Path

SIFT = Path(__file__).resolve().parent.parent / "sift"
MODULE_LINES = 400
SERVICE_FUNCTION_LINES = 60


def test_no_module_is_over_400_lines():
    long = {
        str(f.relative_to(SIFT)): n
        for f in SIFT.rglob("*.py")
        if (n := f.read_text().count("\n")) > MODULE_LINES
    }
    assert long == {}


def test_no_function_of_the_service_layer_is_over_60_lines():
    long = {}
    for f in (SIFT / "service").rglob("*.py"):
        for node in ast.walk(ast.parse(f.read_text())):
            if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef):
                lines = (node.end_lineno or node.lineno) - node.lineno + 1
                if lines > SERVICE_FUNCTION_LINES:
                    long[f"{f.relative_to(SIFT)}:{node.name}"] = lines
    assert long == {}
