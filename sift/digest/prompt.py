"""What the model is told: a fixed system prompt and the document (whole, or the best chunks
within the input budget) with its page markers, then the question."""

from __future__ import annotations

from collections.abc import Sequence

from sift.digest.chunks import Chunk, estimate_tokens, marker

CITE_LINE = "When the document has `--- page N ---` markers, cite pages as (p. N)."
CITE_SECTIONS = "When it has `--- section N ---` markers instead, cite sections as (s. N)."

SYSTEM = (
    "You answer a question about one document, using only the document text below. "
    "If the text does not contain the answer, say so briefly. Be concise and exact; "
    "quote figures and names as the document writes them.\n" + CITE_LINE + "\n" + CITE_SECTIONS
)

# Room kept for the framing lines around the document (title, notes, question labels).
FRAMING_TOKENS = 200


def render(selected: Sequence[Chunk], unit: str | None) -> str:
    """Chunks in document order, a marker wherever the page changes, `[…]` at every gap."""
    out: list[str] = []
    page = None
    last = None
    for chunk in sorted(selected, key=lambda c: c.index):
        if last is not None and chunk.index != last + 1:
            out.append("[…]")
            page = None
        for number, text in chunk.parts:
            if unit is not None and number != page:
                out.append(marker(number, unit))
            out.append(text)
            page = number
        last = chunk.index
    return "\n\n".join(out)


def budget(max_input_tokens: int, question: str) -> int:
    """Tokens left for document text once the system prompt, framing and question fit."""
    fixed = estimate_tokens(SYSTEM) + estimate_tokens(question) + FRAMING_TOKENS
    return max(0, max_input_tokens - fixed)


def select(chunks: Sequence[Chunk], order: Sequence[int], tokens: int) -> list[Chunk]:
    """The best-ranked chunks that fit `tokens` together (at least one)."""
    chosen: list[Chunk] = []
    used = 0
    for number in order:
        chunk = chunks[number]
        if chosen and used + chunk.tokens > tokens:
            continue
        chosen.append(chunk)
        used += chunk.tokens
        if used >= tokens:
            break
    return chosen


def user_message(
    title: str, unit: str | None, pages: int, question: str, document: str, excerpts: bool
) -> str:
    head = [f"Document: {title}" if title else "Document:"]
    if unit is not None:
        head.append(f"({pages} {unit}s; the `--- {unit} N ---` markers give their numbers)")
    if excerpts:
        head.append("Only the excerpts most relevant to the question are shown; […] marks gaps.")
    return "\n".join(head) + f"\n\n{document}\n\n---\n\nQuestion: {question}"
