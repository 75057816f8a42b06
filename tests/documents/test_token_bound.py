"""A window far under its `max_tokens` is neither encoded nor counted: every token is at least
one byte of the text's UTF-8, so a text of no more bytes fits whatever the tokenizer says."""

from __future__ import annotations

import subprocess
import sys

import pytest

from sift.documents import tokens
from sift.documents.window import window

TEXTS = [
    "plain ASCII prose, with a [link](https://example.org/a) and `code`.\n\n" * 40,
    "日本語の文章です。" * 200,  # three bytes a character, about one token each
    "emoji 👩‍💻🧑🏽‍🚀 and combining e\u0301 marks\n" * 60,
    "\U0001f600" * 500,  # four bytes a character: the tokenizer's worst case
]


@pytest.mark.parametrize("text", TEXTS)
def test_no_more_tokens_than_utf8_bytes(text: str) -> None:
    size = len(text.encode())
    assert tokens.count(text) <= size
    assert tokens.within(text, size)
    assert not tokens.within(text, size - 1) or len(text) * 4 <= size - 1
    assert window(text, 0, len(text), size) == len(text)  # the same as counted


def test_a_window_under_its_budget_loads_no_tokenizer() -> None:
    """In a fresh process: a 5,000-character page under a 20,000-token budget is whole, and
    the tokenizer (~0.2 s, ~70 MB to load) was never asked."""
    code = (
        "from sift.documents import tokens\n"
        "from sift.documents.window import window\n"
        "text = 'A line of text.\\n\\n' * 300\n"
        "assert window(text, 0, 50_000, 20_000) == len(text)\n"
        "assert window(text, 0, 1_000, 20_000) < 1_000\n"
        "print(tokens.loaded())\n"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "False"
