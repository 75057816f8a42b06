"""sift: a self-hosted web-fetch service for AI agents.

msgspec is imported here, with `typing_extensions` hidden while it loads: msgspec reads
annotations with it when it is installed, and its import is some 60M instructions (two thirds
of msgspec's, a fifth of a cached `sift extract`). On Python 3.11 `typing` reads sift's
annotations the same way (its `Required`/`NotRequired` are typing's own); a module that
imports `typing_extensions` later gets it as always."""

import sys

__version__ = "0.1.0"

if "msgspec" not in sys.modules:
    _hidden = sys.modules.setdefault("typing_extensions", None) is None  # type: ignore[arg-type]
    try:
        import msgspec  # noqa: F401
    finally:
        if _hidden:
            del sys.modules["typing_extensions"]
    del _hidden
