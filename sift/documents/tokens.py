"""Tokens as an agent's model counts them: OpenAI's `o200k_base` BPE (the GPT-4o family's),
through `bpe-openai`, whose wheel ships the vocabulary (nothing is downloaded, ever). One rule
for every answer's `tokens` and every `max_tokens` cut.

Loading the vocabulary takes about half a second and some 40 MB, once per process, so it is
loaded on first use, off the event loop (`cost` says so to `svc.compute`)."""

from __future__ import annotations

import functools
import hashlib
import threading
from collections import OrderedDict
from typing import Any

ENCODING = "o200k_base"
# Counting runs at ~10 MB/s: a text's cost in `svc.compute` terms (characters it could hash in
# the same time) is about twenty times its length.
_COST_PER_CHAR = 20
_NOT_LOADED = 1 << 40
_REMEMBERED = 4_096  # counts of recent answers (an agent asks for the same page again)

_lock = threading.Lock()
_counts: OrderedDict[bytes, int] = OrderedDict()


@functools.cache
def _encoding() -> Any:
    import bpe_openai

    return bpe_openai.get_encoding(ENCODING)


def loaded() -> bool:
    return _encoding.cache_info().currsize > 0


def cost(text: str) -> int:
    """What counting `text` costs, for `svc.compute`: never on the loop before the load."""
    return len(text) * _COST_PER_CHAR if loaded() else _NOT_LOADED


def count(text: str) -> int:
    """The tokens of `text`; the counts of recent texts are remembered by their digest."""
    if not text:
        return 0
    key = hashlib.blake2b(text.encode("utf-8", "surrogatepass"), digest_size=16).digest()
    with _lock:
        found = _counts.get(key)
        if found is not None:
            _counts.move_to_end(key)
            return found
    n = len(_encoding().encode_ordinary(text))
    with _lock:
        _counts[key] = n
        if len(_counts) > _REMEMBERED:
            _counts.popitem(last=False)
    return n


def prefix_chars(text: str, limit: int) -> int:
    """How many leading characters of `text` its first `limit` tokens cover (all of it when
    it has no more than `limit` tokens)."""
    ids = _encoding().encode_ordinary(text)
    if len(ids) <= limit:
        return len(text)
    return len(_encoding().decode_bytes(ids[:limit]).decode("utf-8", "ignore"))
