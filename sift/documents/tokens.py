"""Tokens as an agent's model counts them: OpenAI's `o200k_base` BPE (the GPT-4o family's),
by the Rust `bpe-openai` tokenizer, whose wheel ships the vocabulary (nothing is downloaded,
ever). One rule for every answer's `tokens` and every `max_tokens` cut.

The tokenizer takes ~0.2 s and ~70 MB to load, once per process: on first use, off the event
loop (`cost` says so to `svc.compute`)."""

from __future__ import annotations

import functools
import hashlib
import importlib.machinery
import importlib.util
import threading
from collections import OrderedDict
from pathlib import Path
from typing import Any

ENCODING = "o200k_base"
# Counting runs at ~10 MB/s: a text's cost in `svc.compute` terms (characters it could hash in
# the same time) is about twenty times its length.
_COST_PER_CHAR = 20
_NOT_LOADED = 1 << 40
_REMEMBERED = 4_096  # counts of recent answers (an agent asks for the same page again)
_MARGIN = 16  # tokens past a budget that a text cut short still counts right before
_UTF8_MAX = 4  # a cut token sequence may end inside a character of up to four bytes

_lock = threading.Lock()
_counts: OrderedDict[bytes, int] = OrderedDict()


@functools.cache
def tokenizer() -> Any:
    """The Rust tokenizer for ENCODING, loaded from the package's extension module alone:
    the package's Python layer decodes every vocabulary it has into dicts at import (~0.5 s,
    ~80 MB more) and warns as it does, for a tiktoken-like API sift does not use."""
    spec = importlib.util.find_spec("bpe_openai")
    if spec is None or not spec.submodule_search_locations:
        raise RuntimeError("bpe-openai is not installed")
    found = next(Path(spec.submodule_search_locations[0]).glob("_bindings*.so"))
    loader = importlib.machinery.ExtensionFileLoader("bpe_openai._bindings", str(found))
    module_spec = importlib.util.spec_from_file_location(
        "bpe_openai._bindings", found, loader=loader
    )
    assert module_spec is not None
    module = importlib.util.module_from_spec(module_spec)
    loader.exec_module(module)
    return module.tokenizer_for_encoding(ENCODING)


def loaded() -> bool:
    return tokenizer.cache_info().currsize > 0


def cost(text: str) -> int:
    """What counting `text` costs, for `svc.compute`: never on the loop before the load."""
    return len(text) * _COST_PER_CHAR if loaded() else _NOT_LOADED


def _key(text: str) -> bytes:
    return hashlib.blake2b(text.encode("utf-8", "surrogatepass"), digest_size=16).digest()


def remembered(text: str) -> int | None:
    """The count of `text` when it was counted lately (a hash: cheap enough for the loop)."""
    if not text:
        return 0
    key = _key(text)
    with _lock:
        found = _counts.get(key)
        if found is not None:
            _counts.move_to_end(key)
        return found


def count(text: str) -> int:
    """The tokens of `text`; the counts of recent texts are remembered by their digest."""
    found = remembered(text)
    if found is not None:
        return found
    n = int(tokenizer().count(text))
    with _lock:
        _counts[_key(text)] = n
        if len(_counts) > _REMEMBERED:
            _counts.popitem(last=False)
    return n


def prefix_chars(text: str, limit: int) -> int:
    """How many leading characters of `text` its first `limit` tokens cover (all of it when
    it has no more than `limit` tokens)."""
    enc = tokenizer()
    span = min(len(text), limit * 8 + 256)  # most tokens are under eight characters
    ids = enc.encode(text[:span])
    while span < len(text) and len(ids) <= limit + _MARGIN:  # the cut end may tokenize apart
        span = min(len(text), span * 2)
        ids = enc.encode(text[:span])
    if len(ids) <= limit:
        return len(text)
    for k in range(limit, max(0, limit - _UTF8_MAX), -1):
        try:
            return len(enc.decode(ids[:k]))
        except ValueError:  # the tokens end inside a character
            continue
    return 0
