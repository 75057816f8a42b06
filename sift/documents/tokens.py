"""Tokens as an agent's model counts them: OpenAI's `o200k_base` BPE (the GPT-4o family's),
by the Rust `bpe-openai` tokenizer, whose wheel ships the vocabulary (nothing is downloaded,
ever). One rule for every answer's `tokens` and every `max_tokens` cut.

The tokenizer takes ~0.2 s and ~70 MB to load, once per process: on first use, off the event
loop (`cost` says so to `svc.cpu.compute`)."""

from __future__ import annotations

import _thread
import functools
import os
import re
import sys
from collections import OrderedDict
from pathlib import Path
from typing import Any

ENCODING = "o200k_base"
# Counting runs at ~10 MB/s: a text's cost in `svc.cpu.compute` terms (characters it could hash in
# the same time) is about twenty times its length.
_COST_PER_CHAR = 20
_NOT_LOADED = 1 << 40
# Counts of recent texts (an agent asks for the same page again) and of their sections (a
# map shows its document's leading sections, counted with the document a moment before).
_REMEMBERED = 16_384
_SECTION_MIN = 256  # characters: a shorter section is counted, not remembered
# Where counts add up: just after a line break that a character follows which is neither a
# space (a run of them is one token) nor `/` (punctuation takes the breaks and slashes after
# it into its token). A heading's line starts a section (`_sections`).
_SAFE_AFTER = re.compile(r"\n(?=[^\s/])")
_HEADING = re.compile(r"\n(?=#)")
_LOOKED_UP_BELOW = 100_000  # characters whose sections `cost_left` looks up (on the loop)
# Characters `estimate` counts at most, in `_SLICES` slices spread evenly over the text: a long
# document's `~T tokens` in its map is an estimate (DESIGN: the map), within a few per cent on
# prose, code and CJK alike, where counting all of a new 100 KB page was 2 ms of every cold map.
SAMPLE = 16_384
_SLICES = 16
PIECE = 16_384  # characters the tokenizer takes at once (see `_pieces`)
_UTF8_MAX = 4  # a cut token sequence may end inside a character of up to four bytes

# Whether this process's string hash has a secret key: not with a PYTHONHASHSEED number.
_RANDOM_HASH = bool(sys.flags.hash_randomization) and os.environ.get(
    "PYTHONHASHSEED", "random"
) in ("", "random")

_lock = _thread.allocate_lock()  # `threading`'s own lock, without its import
_counts: OrderedDict[tuple[int, int] | bytes, int] = OrderedDict()


@functools.cache
def tokenizer() -> Any:
    """The Rust tokenizer for ENCODING, loaded from the package's extension module alone:
    the package's Python layer decodes every vocabulary it has into dicts at import (~0.5 s,
    ~80 MB more) and warns as it does, for a tiktoken-like API sift does not use."""
    import importlib.machinery
    import importlib.util

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
    """What counting `text` costs, for `svc.cpu.compute`: never on the loop before the load."""
    return cost_of(len(text))


def cost_of(chars: int) -> int:
    """What counting a text of `chars` characters costs (see `cost`)."""
    return chars * _COST_PER_CHAR if loaded() else _NOT_LOADED


def _key(text: str) -> tuple[int, int] | bytes:
    """What a text's count is remembered by. Python's own string hash (SipHash, keyed by a
    secret drawn at each start) is ten times faster than a digest (20 µs for 100 KB) and
    keeps the GIL, where hashlib lets it go for the event loop to win back behind other
    threads; so the loop asks the memory without a wait. With hashing made predictable
    (PYTHONHASHSEED), colliding texts could be made, and a digest keys the memory."""
    if _RANDOM_HASH:
        return len(text), hash(text)
    import hashlib  # late: OpenSSL's load is a fifth of a cached `sift extract`'s own work

    return hashlib.blake2b(text.encode("utf-8", "surrogatepass"), digest_size=16).digest()


def remembered(text: str) -> int | None:
    """The count of `text` when it was counted lately (a hash: cheap enough for the loop)."""
    if not text:
        return 0
    return _recall(_key(text))


def _recall(key: tuple[int, int] | bytes) -> int | None:
    with _lock:
        found = _counts.get(key)
        if found is not None:
            _counts.move_to_end(key)
        return found


def count(text: str) -> int:
    """The tokens of `text`, summed over its sections (`_sections`); the counts of recent
    texts and of their sections are remembered by their hash, so a map costs little more than
    its outline once its document was counted."""
    if not text:
        return 0
    key = _key(text)
    found = _recall(key)
    if found is not None:
        return found
    n = 0
    for a, b in _sections(text):
        n += _section_count(text[a:b])
    _remember(key, n)
    return n


def _section_count(part: str) -> int:
    key = _key(part) if len(part) >= _SECTION_MIN else None
    found = _recall(key) if key is not None else None
    if found is None:
        enc = tokenizer()
        found = sum(int(enc.count(part[a:b])) for a, b in _pieces(part))
        if key is not None:
            _remember(key, found)
    return found


def _remember(key: tuple[int, int] | bytes, n: int) -> None:
    with _lock:
        _counts[key] = n
        if len(_counts) > _REMEMBERED:
            _counts.popitem(last=False)


def cost_left(text: str) -> int:
    """What counting `text` costs (see `cost`) for the part of it whose sections' counts are
    not remembered; finding out hashes each section (cheap for the loop below
    `_LOOKED_UP_BELOW` characters)."""
    if not loaded() or len(text) >= _LOOKED_UP_BELOW:
        return cost(text)
    left = 0
    for a, b in _sections(text):
        if b - a < _SECTION_MIN or _recall(_key(text[a:b])) is None:
            left += b - a
    return cost_of(left)


def _sections(text: str) -> list[tuple[int, int]]:
    """`text` cut just before each heading's line (where the tokenizer starts a new token
    anyway): a section is the same span in any text that quotes it whole, such as a map's
    leading sections, so its count is found again."""
    spans = []
    a = 0
    for m in _HEADING.finditer(text):
        spans.append((a, m.end()))
        a = m.end()
    spans.append((a, len(text)))
    return spans


def within(text: str, limit: int) -> bool:
    """Whether `text` surely has no more than `limit` tokens, known without the tokenizer:
    every token is at least one byte of the text's UTF-8, so a text of no more bytes fits (a
    window far under its `max_tokens` is neither encoded to be cut nor counted to be checked)."""
    if len(text) > limit:
        return False
    return len(text) * _UTF8_MAX <= limit or len(text.encode("utf-8", "surrogatepass")) <= limit


def estimate(text: str) -> int:
    """The tokens of `text`, as a long document's map says them (`~T tokens`): counted on
    `_SLICES` slices of it, SAMPLE characters in all, spread from its start to its end (each
    after a line break), and scaled to its length; a text of no more than SAMPLE is counted."""
    if len(text) <= SAMPLE:
        return count(text)
    enc = tokenizer()
    size = SAMPLE // _SLICES
    n = chars = 0
    for k in range(_SLICES):
        a = k * (len(text) - size) // (_SLICES - 1)
        if k:
            line = text.find("\n", a, a + size // 2)
            a = line + 1 if line >= 0 else a
        part = text[a : a + size]
        n += int(enc.count(part))
        chars += len(part)
    return round(n * len(text) / chars)


def prefix_chars(text: str, limit: int) -> int:
    """How many leading characters of `text` its first `limit` tokens cover (all of it when
    it has no more than `limit` tokens)."""
    enc = tokenizer()
    used = 0
    for a, b in _pieces(text):
        ids = enc.encode(text[a:b])
        if used + len(ids) <= limit:
            used += len(ids)
            continue
        room = limit - used
        for k in range(room, max(-1, room - _UTF8_MAX), -1):
            try:
                return a + len(enc.decode(ids[:k])) if k else a
            except ValueError:  # the tokens end inside a character
                continue
        return a
    return len(text)


def _pieces(text: str) -> list[tuple[int, int]]:
    """`text` as spans of about PIECE characters, each split just after a line break where
    the tokenizer starts a new token anyway (`_SAFE_AFTER`: so counts add up).
    The tokenizer holds the GIL while it runs: a piece at a time, the event loop waits for
    one piece (about a millisecond) at most, never for a whole long text."""
    spans = []
    a = 0
    while len(text) - a > PIECE:
        b = text.rfind("\n", a + PIECE // 2, a + PIECE)
        while b >= 0 and not _SAFE_AFTER.match(text, b):
            b = text.rfind("\n", a + PIECE // 2, b)
        b = b + 1 if b >= 0 else a + PIECE
        spans.append((a, b))
        a = b
    spans.append((a, len(text)))
    return spans
