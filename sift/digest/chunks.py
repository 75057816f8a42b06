"""Page-aware chunks: about 1,000 tokens each, each knowing the pages its text came from.

A chunk is built from whole paragraphs where it can be (a page over the target is split at
paragraphs, then sentences, then hard), and small pages are packed together, so that every
chunk renders with `--- page N ---` markers and an answer built from it can cite its page.
The split is a pure function of the pages: the same content hash always gives the same chunks,
which is what lets embeddings be stored by chunk number.
"""

from __future__ import annotations

import re
from collections.abc import Iterator, Sequence
from dataclasses import dataclass

# Bump when the split changes: stored embeddings are keyed by it (they are by chunk number).
SCHEME = 1
TARGET_TOKENS = 1000

_PARAGRAPH = re.compile(r"\n\s*\n")
_SENTENCE_END = re.compile(r"(?<=[.!?。！？])\s+")


def estimate_tokens(text: str) -> int:
    """About four bytes of UTF-8 a token: right for English, close for CJK (three a char)."""
    return (len(text.encode("utf-8")) + 3) // 4


# How each kind of document numbers its parts: PDFs have pages, long HTML has sections.
UNITS = {"page": "p.", "section": "s."}


def marker(number: int, unit: str = "page") -> str:
    return f"--- {unit} {number} ---"


@dataclass(frozen=True)
class Chunk:
    """Consecutive text of a document: `parts` are (page number, text), in page order."""

    index: int
    parts: tuple[tuple[int, str], ...]

    @property
    def first_page(self) -> int:
        return self.parts[0][0]

    @property
    def last_page(self) -> int:
        return self.parts[-1][0]

    @property
    def text(self) -> str:
        return "\n\n".join(t for _, t in self.parts)

    @property
    def tokens(self) -> int:
        return sum(estimate_tokens(t) for _, t in self.parts)

    def render(self, unit: str | None = "page") -> str:
        """The chunk as the model reads it: each page's text under its marker (if `unit`)."""
        if unit is None:
            return self.text
        return "\n\n".join(f"{marker(p, unit)}\n\n{t}" for p, t in self.parts)


def _hard_split(text: str, limit: int) -> Iterator[str]:
    """Slices of at most `limit` characters, at a space where there is one."""
    while len(text) > limit:
        cut = text.rfind(" ", limit // 2, limit)
        cut = cut if cut > 0 else limit
        yield text[:cut].strip()
        text = text[cut:]
    if text.strip():
        yield text.strip()


def blocks(text: str, target_tokens: int = TARGET_TOKENS) -> Iterator[str]:
    """A page's text as paragraphs, each under the target (split at sentences, then hard)."""
    limit_chars = target_tokens * 4
    for para in _PARAGRAPH.split(text):
        para = para.strip()
        if not para:
            continue
        if estimate_tokens(para) <= target_tokens:
            yield para
            continue
        piece = ""
        for sentence in _SENTENCE_END.split(para):
            if estimate_tokens(sentence) > target_tokens:
                if piece:
                    yield piece
                    piece = ""
                yield from _hard_split(sentence, limit_chars // 2)
            elif piece and estimate_tokens(piece) + estimate_tokens(sentence) > target_tokens:
                yield piece
                piece = sentence
            else:
                piece = f"{piece} {sentence}" if piece else sentence
        if piece:
            yield piece


def split(pages: Sequence[str], target_tokens: int = TARGET_TOKENS) -> list[Chunk]:
    """Chunks of `pages` (`pages[i]` is page i+1); empty pages contribute nothing."""
    chunks: list[Chunk] = []
    parts: list[tuple[int, str]] = []
    size = 0

    def flush() -> None:
        nonlocal parts, size
        if parts:
            chunks.append(Chunk(len(chunks), tuple(parts)))
        parts, size = [], 0

    for number, page in enumerate(pages, start=1):
        for block in blocks(page, target_tokens):
            tokens = estimate_tokens(block)
            if parts and size + tokens > target_tokens:
                flush()
            if parts and parts[-1][0] == number:
                parts[-1] = (number, parts[-1][1] + "\n\n" + block)
            else:
                parts.append((number, block))
            size += tokens
    flush()
    return chunks
