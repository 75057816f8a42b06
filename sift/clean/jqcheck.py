"""Which jq programs may run: none that reads the environment, files, modules or more input.

libjq gives a program `env` and `$ENV`, `import`/`include` of modules and data files, and
`input`/`inputs`, `input_filename`, `debug`/`stderr` and the search-path builtins. sift's jq
answers from the one fetched document only, so a program naming any of them is refused. The
check walks the program's tokens as jq's lexer does — strings (with their `\\(…)`
interpolations, which hold code), comments, fields (`.env` is a field, not the builtin),
`$variables`, numbers and formats — so a forbidden name inside a string is fine and one inside
an interpolation is not. Where jq's lexer and this one could disagree (a comment continued by a
trailing backslash), the program is refused. Clean workers also run with an empty environment,
so `$ENV` would find nothing even past this check.
"""

from __future__ import annotations

import re

# Builtins and keywords that reach outside the document (jq 1.8 names).
FORBIDDEN_NAMES = frozenset(
    {
        "env",
        "import",
        "include",
        "input",
        "inputs",
        "input_filename",
        "input_line_number",
        "debug",
        "stderr",
        "get_search_list",
        "get_prog_origin",
        "get_jq_origin",
        "modulemeta",
    }
)
FORBIDDEN_VARIABLES = frozenset({"ENV", "__prog_args"})

_IDENT = re.compile(r"(?:[a-zA-Z_][a-zA-Z_0-9]*::)*[a-zA-Z_][a-zA-Z_0-9]*")
# Tokens that hold letters but name nothing: `..`, a field (`.env` is not `env`), a number
# (`1.` then `env` is two tokens, as jq reads them), a format (`@json`).
_SKIP = re.compile(
    r"\.\.|\.[a-zA-Z_][a-zA-Z_0-9]*|(?:[0-9]+(?:\.[0-9]*)?|\.[0-9]+)(?:[eE][+-]?[0-9]+)?"
    r"|@[a-zA-Z0-9_]+"
)
_CONTINUED_COMMENT = re.compile(r"\\\r?$")


class Refused(Exception):
    """The program names something sift's jq may not use; the message says what."""


class Unreadable(Refused):
    """The program does not lex as jq: jq's compiler says why, unless it compiles (refused)."""


def check(program: str) -> None:
    """Raise Refused if `program` uses a forbidden builtin, keyword or variable.

    Raises:
        Refused: a forbidden name, wherever jq would read it as code.
        Unreadable: the program does not lex as this check reads jq.
    """
    _code(program, 0, interpolation=False)


def _code(src: str, i: int, *, interpolation: bool) -> int:
    """Scan code from `i`; return where it ends (the ")" closing an interpolation, or EOF)."""
    depth = 0
    n = len(src)
    while i < n:
        c = src[i]
        if c == "#":
            eol = src.find("\n", i)
            line = src[i : n if eol < 0 else eol]
            if _CONTINUED_COMMENT.search(line):
                raise Unreadable("a comment continued by a trailing backslash")
            i = n if eol < 0 else eol + 1
        elif c == '"':
            i = _string(src, i + 1)
        elif c == "(":
            depth += 1
            i += 1
        elif c == ")":
            if depth == 0 and interpolation:
                return i + 1
            depth -= 1
            i += 1
        elif m := _SKIP.match(src, i):
            i = m.end()
        elif c == "$" and (m := _IDENT.match(src, i + 1)):
            if any(part in FORBIDDEN_VARIABLES for part in m.group().split("::")):
                raise Refused(f"${m.group()}")
            i = m.end()
        elif m := _IDENT.match(src, i):
            bad = [part for part in m.group().split("::") if part in FORBIDDEN_NAMES]
            if bad:
                raise Refused(f"`{bad[0]}`")
            i = m.end()
        else:
            i += 1
    if interpolation:
        raise Unreadable("an unterminated string interpolation")
    return i


def _string(src: str, i: int) -> int:
    """Scan a string's body from `i` (after its opening quote); return the index past its end."""
    n = len(src)
    while i < n:
        c = src[i]
        if c == '"':
            return i + 1
        if c == "\\" and src.startswith("\\(", i):
            i = _code(src, i + 2, interpolation=True)
        elif c == "\\":
            i += 2
        else:
            i += 1
    raise Unreadable("an unterminated string")
