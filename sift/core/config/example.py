"""`sift config example`: every key with its default and a one-line comment, made from the
schema itself (`sections.py`: each key's comment is the one on its line, else the comment lines
right above it; a section's is its docstring's first line), so it cannot drift from it.
"""

from __future__ import annotations

import ast
import inspect
import io
import json
import tokenize
from typing import Any

import msgspec

from sift.core.config import sections
from sift.core.config.sections import CallerConfig, Config
from sift.core.units import Duration, Size

HEAD = (
    "# sift's configuration: every key with its default (`sift config example`).\n"
    "# Keep only the keys you change; `sift config check FILE` checks a file without starting.\n"
    '# Sizes take units ("64MiB", "5MB"), durations too ("20s", "24h").\n'
)
CALLER = {"name": "agent", "token_sha256": "<64 hex digits>", "class": "fleet"}


def example() -> str:
    """The example file: the top-level keys, then one `[section]` each, then `[[caller]]`."""
    notes = key_comments()
    default = Config()
    out = [HEAD]
    tables = []
    for f in msgspec.structs.fields(Config):
        value = getattr(default, f.name)
        if isinstance(value, msgspec.Struct):
            tables.append((f.encode_name, value))
        elif f.name != "caller":
            out.append(_key(f.encode_name, _toml(value, f.type), notes[Config.__name__][f.name]))
    for name, section in tables:
        said = notes[type(section).__name__]
        out.append(f"\n# {said['']}\n[{name}]")
        for f in msgspec.structs.fields(section):
            text = _toml(getattr(section, f.name), f.type)
            out.append(_key(f.encode_name, text, said[f.name]))
    out.append(f"\n# {notes[CallerConfig.__name__]['']}\n# [[caller]]")
    for f in msgspec.structs.fields(CallerConfig):
        comment = notes[CallerConfig.__name__][f.name]
        out.append(f"# {comment}\n# {f.encode_name} = {_toml(CALLER[f.encode_name], f.type)}")
    return "\n".join(out) + "\n"


def _key(name: str, value: str, comment: str) -> str:
    return f"# {comment}\n{name} = {value}"


def _toml(value: Any, kind: Any = None) -> str:
    """A default as TOML: sizes and durations with their unit, strings quoted, other numbers
    with `_` between thousands."""
    if kind is Size:
        return json.dumps(_with_unit(value, SIZES))
    if kind is Duration:
        return json.dumps(_with_unit(value, DURATIONS))
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, int):
        return f"{value:_}"
    if isinstance(value, list):
        return "[" + ", ".join(_toml(v) for v in value) + "]"
    if isinstance(value, dict):
        return "{" + ", ".join(f"{json.dumps(k)} = {_toml(v)}" for k, v in value.items()) + "}"
    return json.dumps(value) if isinstance(value, str) else repr(value)


SIZES = (("GiB", 1024**3), ("MiB", 1024**2), ("KiB", 1024), ("MB", 1000**2), ("B", 1))
DURATIONS = (("d", 86400), ("h", 3600), ("m", 60), ("s", 1), ("ms", 0.001))


def _with_unit(value: float, units: tuple[tuple[str, float], ...]) -> str:
    """`value` in the largest unit it is a whole number of: "512MiB", "24h", "10ms"."""
    for unit, size in units:
        count = round(value / size, 6)
        if count >= 1 and count == int(count):
            return f"{int(count)}{unit}"
    return f"{value}{units[-1][0]}"


def key_comments() -> dict[str, dict[str, str]]:
    """By struct name: each field's comment, and the struct's own under ""."""
    source = inspect.getsource(sections)
    comments = {
        tok.start[0]: tok.string.lstrip("#").strip()
        for tok in tokenize.generate_tokens(io.StringIO(source).readline)
        if tok.type == tokenize.COMMENT
    }
    lines = source.splitlines()
    found: dict[str, dict[str, str]] = {}
    for node in ast.parse(source).body:
        if not isinstance(node, ast.ClassDef):
            continue
        doc = ast.get_docstring(node) or ""
        notes = found[node.name] = {"": doc.split("\n\n")[0].replace("\n", " ")}
        for stmt in node.body:
            if isinstance(stmt, ast.AnnAssign) and isinstance(stmt.target, ast.Name):
                notes[stmt.target.id] = _comment(stmt.lineno, comments, lines)
    return found


def _comment(line: int, comments: dict[int, str], lines: list[str]) -> str:
    """The comment on `line`, else the comment lines right above it, as one line."""
    if line in comments:
        return comments[line]
    above: list[str] = []
    n = line - 1
    while n in comments and lines[n - 1].lstrip().startswith("#"):
        above.insert(0, comments[n])
        n -= 1
    return " ".join(above)
