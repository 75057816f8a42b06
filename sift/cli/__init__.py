"""The `sift` command (`main`), by job: `fetch` (fetch and extract in-process), `batch`.

msgspec is imported here, before any command, with `typing_extensions` hidden while it loads:
msgspec reads annotations with it when it is installed, and that import cost every command's
start 12M instructions. Python 3.11's `typing` reads sift's annotations the same way (its
`Required`/`NotRequired` are typing's own); a module that imports `typing_extensions` later
gets it as always."""

import sys

EXIT_ERROR = 1
EXIT_USAGE = 2

if "msgspec" not in sys.modules:
    _hidden = sys.modules.setdefault("typing_extensions", None) is None  # type: ignore[arg-type]
    try:
        import msgspec  # noqa: F401
    finally:
        if _hidden:
            del sys.modules["typing_extensions"]
    del _hidden
