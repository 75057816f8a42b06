"""A window far under its `max_tokens` is neither encoded nor counted: every token is at least
one byte of the text's UTF-8, so a text of no more bytes fits whatever the tokenizer says."""

from __future__ import annotations

import random
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


ATOMS = ["word", " ", "\n", "\n\n", "\n#", "## Head", "/", ".", ",\n/", "\r\n", "\t", "é", "日本"]
ATOMS += ["👩‍💻", "'s", "123", "`", "\u00a0", "x/y", "://", "#", "- item"]


def test_a_count_summed_over_sections_is_the_tokenizers_count_of_the_whole():
    """Sections (cut before each heading's line) and pieces (cut after a line break) add up
    to the count of the whole text, whatever comes around the cut; remembered or not."""
    rnd = random.Random(38)
    enc = tokens.tokenizer()
    for size in [*range(1, 400, 7), 20_000, 40_000]:
        text = "".join(rnd.choice(ATOMS) for _ in range(size))
        assert tokens.count(text) == enc.count(text)
        assert tokens.count(text + "\n# more") == enc.count(text + "\n# more")


def test_a_map_of_a_document_counted_before_is_left_little_to_count():
    """The document's sections are remembered as it is counted whole; a text that quotes them
    (a map: its outline, then its leading sections) has only its own part left to count, and
    its count is exact."""
    rnd = random.Random(7)
    words = ["heat", "city", "roof", "park", "water", "shade", "report"]

    def section(n: int) -> str:
        lines = [" ".join(rnd.choice(words) for _ in range(40)) + "." for _ in range(8)]
        return f"## Section {n}\n\n" + "\n\n".join(lines)

    document = "# Title\n\n" + "\n\n".join(section(n) for n in range(20))
    assert tokens.count(document) == tokens.tokenizer().count(document)
    lead = document[: document.index("## Section 5")].rstrip("\n")
    quoted = "# Title\nsections 20\n\n- Section 0\n- Section 1\n\n" + lead
    assert tokens.cost_left(quoted) < tokens.cost(quoted) // 4
    assert tokens.count(quoted) == tokens.tokenizer().count(quoted)


def test_a_long_documents_size_is_estimated_on_a_sample_within_a_few_per_cent():
    """A map's `~T tokens` counts `tokens.SAMPLE` characters spread over the document, not
    all of it (that was 2 ms of every new 100 KB page's map): within 5 % of the exact count on
    prose, code, CJK and a document whose halves differ, and nothing counted is remembered
    (the whole document was counted section by section before)."""
    rnd = random.Random(38)
    words = ["heat", "city", "roof", "park", "water", "shade", "report", "council"]
    prose = "\n\n".join(
        f"## Part {n}\n\n" + " ".join(rnd.choice(words) for _ in range(300)) for n in range(60)
    )
    code = "\n".join(f"    def f{i}(x):\n        return x * {i} + len(str(x))" for i in range(4000))
    cjk = "日本語の文章です。東京は大きな都市です。\n" * 6000
    halves = "word " * 40_000 + "\n" + "日本語の文章です。\n" * 4000
    enc = tokens.tokenizer()
    for text in (prose, code, cjk, halves):
        assert len(text) > 60_000  # a document over the output cap
        remembered = len(tokens._counts)
        exact = enc.count(text)
        assert abs(tokens.estimate(text) - exact) <= 0.05 * exact
        assert len(tokens._counts) == remembered
