"""Generated documents with facts planted on known pages, for digest tests and bench/.

The filler is seeded pseudo-prose over a Zipf-like vocabulary, so BM25's weights behave as on
real text; each fact's names also appear on other pages (distractors), so a retriever has to
weigh the combination of words, not find one rare word.
"""

from __future__ import annotations

import io
import random
import textwrap
from dataclasses import dataclass

_SYLLABLES = (
    "ka ro mi tel van dor pe lin su gra bo nex fa ril tu mon sa ver chi lo dan ke pri sto "
    "ul ba zen ho fir tra qua le mos ni dre vo har pel"
)
SYLLABLES = _SYLLABLES.split()

_COMMON = (
    "the of and to in that is was for it with as on by this be at from which are or an "
    "were but not have had their also its one all been more has when than into other some "
    "report committee system water council annual figure table section method results data "
    "design process value review market model plan budget school north river city station"
)
COMMON = _COMMON.split()


@dataclass(frozen=True)
class Fact:
    page: int
    sentence: str
    question: str
    answer: str  # a phrase the right passage contains


_FACTS = [
    (
        "The harbour master of Velmora keeps the ledger key in a blue copper box.",
        "Where does the harbour master of Velmora keep the ledger key?",
        "blue copper box",
    ),
    (
        "The Quillon bridge was repainted in 1987 with a green anti-rust coating.",
        "When was the Quillon bridge repainted?",
        "1987",
    ),
    (
        "Professor Anneke Dorsal measured the lake depth at 212 metres.",
        "What lake depth did Professor Anneke Dorsal measure?",
        "212 metres",
    ),
    (
        "The Marrow valve fails when the boiler pressure exceeds 14 bar.",
        "At what boiler pressure does the Marrow valve fail?",
        "14 bar",
    ),
    (
        "The Ostrava committee approved a budget of 4.2 million for the tram extension.",
        "What budget did the Ostrava committee approve for the tram extension?",
        "4.2 million",
    ),
    (
        "Our survey found that 63 percent of Tarnwick residents cycle to work.",
        "What share of Tarnwick residents cycle to work?",
        "63 percent",
    ),
    (
        "The Halvard lighthouse lamp is replaced every eleven months.",
        "How often is the Halvard lighthouse lamp replaced?",
        "eleven months",
    ),
    (
        "The recipe for Brenna cake calls for three spoons of cardamom.",
        "How much cardamom goes into Brenna cake?",
        "three spoons",
    ),
    (
        "The Selkirk telescope mirror has a diameter of 4.1 metres.",
        "What is the diameter of the Selkirk telescope mirror?",
        "4.1 metres",
    ),
    (
        "Captain Oriel Fenn sailed the Gannet from Lisbon to Recife in 19 days.",
        "How long did Captain Oriel Fenn take to sail the Gannet to Recife?",
        "19 days",
    ),
    (
        "The password rotation policy of Kestrel Bank requires a change every 45 days.",
        "How often does Kestrel Bank require a password change?",
        "45 days",
    ),
    (
        "The Dunmore orchard produces mostly russet apples in October.",
        "Which apples does the Dunmore orchard produce?",
        "russet apples",
    ),
    (
        "The Pellam mine closed after the flood of 1932.",
        "Why did the Pellam mine close?",
        "flood of 1932",
    ),
    (
        "The Virel protocol encrypts each packet with a rotating 256-bit key.",
        "How does the Virel protocol encrypt packets?",
        "rotating 256-bit key",
    ),
    (
        "The mayor of Glenhollow is elected for a term of six years.",
        "How long is the term of the mayor of Glenhollow?",
        "six years",
    ),
    (
        "The Corvin choir rehearses on Thursday evenings in the old granary.",
        "Where does the Corvin choir rehearse?",
        "old granary",
    ),
    (
        "Sample batch 17 of the Ardent vaccine was stored at minus 70 degrees.",
        "At what temperature was sample batch 17 of the Ardent vaccine stored?",
        "minus 70 degrees",
    ),
    (
        "The Lorimer canal lock raises boats by 8 metres.",
        "By how much does the Lorimer canal lock raise boats?",
        "8 metres",
    ),
    (
        "The Ebbing library lends at most nine books per member.",
        "How many books does the Ebbing library lend per member?",
        "nine books",
    ),
    (
        "The Tamsin reactor coolant is a mixture of helium and argon.",
        "What coolant does the Tamsin reactor use?",
        "helium and argon",
    ),
]


def _vocabulary(rng: random.Random, size: int = 3000) -> list[str]:
    words: set[str] = set()
    while len(words) < size:
        words.add("".join(rng.choice(SYLLABLES) for _ in range(rng.randint(2, 4))))
    return COMMON + sorted(words)


def _sentence(rng: random.Random, vocab: list[str]) -> str:
    n = rng.randint(8, 18)
    # Zipf-like: low indexes (common words) come up far more often than the tail.
    words = [
        vocab[min(len(vocab) - 1, int(rng.paretovariate(1.1)) - 1)]
        if rng.random() < 0.5
        else rng.choice(vocab)
        for _ in range(n)
    ]
    return " ".join(words).capitalize() + "."


def _distractor(rng: random.Random, vocab: list[str], fact: str) -> str:
    """A filler sentence that borrows two or three of the fact's longer words."""
    borrowed = [w.strip(".,") for w in fact.split() if len(w) > 5]
    words = _sentence(rng, vocab).rstrip(".").split()
    for w in rng.sample(borrowed, min(len(borrowed), rng.randint(2, 3))):
        words.insert(rng.randrange(len(words) + 1), w)
    return " ".join(words) + "."


def document(
    pages: int = 2000, words_per_page: int = 250, seed: int = 7
) -> tuple[list[str], list[Fact]]:
    """`pages` pages of filler with the 20 facts planted on spread-out pages (and distractors)."""
    rng = random.Random(seed)
    vocab = _vocabulary(rng)
    facts: list[Fact] = []
    spots = {}
    for i, (sentence, question, answer) in enumerate(_FACTS):
        spread = pages // len(_FACTS)  # one fact in each stretch of pages: never two on one
        page = 1 + i * spread + (37 + i * 13) % spread
        spots[page] = sentence
        facts.append(Fact(page, sentence, question, answer))
    decoys: dict[int, list[str]] = {}
    for fact in facts:
        for _ in range(6):
            decoys.setdefault(rng.randrange(1, pages + 1), []).append(fact.sentence)
    out = []
    for number in range(1, pages + 1):
        sentences: list[str] = []
        size = 0
        while size < words_per_page:
            s = _sentence(rng, vocab)
            sentences.append(s)
            size += s.count(" ") + 1
        for source in decoys.get(number, []):
            sentences.insert(rng.randrange(len(sentences) + 1), _distractor(rng, vocab, source))
        if number in spots:
            sentences.insert(rng.randrange(len(sentences) + 1), spots[number])
        paragraphs = [" ".join(sentences[i : i + 5]) for i in range(0, len(sentences), 5)]
        out.append("\n\n".join(paragraphs))
    return out, facts


def to_pdf(pages: list[str]) -> bytes:
    """The pages as a PDF with a text layer, one document page per page (reportlab: fast)."""
    from reportlab.lib.pagesizes import A4
    from reportlab.pdfgen import canvas

    buf = io.BytesIO()
    c = canvas.Canvas(buf, pagesize=A4)
    for text in pages:
        c.setFont("Helvetica", 8)
        y = 810
        for paragraph in text.split("\n\n"):
            for line in textwrap.wrap(paragraph, 120):
                c.drawString(40, y, line)
                y -= 10
            y -= 6
        c.showPage()
    c.save()
    return buf.getvalue()
