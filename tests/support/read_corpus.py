"""Five sources for `POST /v1/read` (tests and `bench/`): three long HTML pages and a 40-page
PDF, each with one planted fact deep inside, and a blocked URL (a link-local address: the
guard refuses it before connecting, so nothing leaves the machine).

`install(origin)` serves them and answers the URLs in order; `QUESTION` asks for every fact;
`FACTS` are the sentences that answer it, as the sources hold them.
"""

from __future__ import annotations

import io
import random
from dataclasses import dataclass

from tests.support.origin import Origin

BLOCKED = "http://169.254.169.254/latest/meta-data"
PDF_PAGES = 40
FACT_PAGE = 27


@dataclass(frozen=True)
class Planted:
    path: str
    fact: str


FACTS = [
    Planted("/read/harbour", "The Vellmar bridge opened to traffic in 1887."),
    Planted("/read/flags", "The Osterlund flag is ochre with a single teal star."),
    Planted("/read/cats", "The lighthouse keeper's cat was named Bartholomew Quince."),
    Planted("/read/report.pdf", "The Kessing archive vault code is 7319."),
]
QUESTION = (
    "When did the Vellmar bridge open, what colour is the Osterlund flag, what was the "
    "lighthouse keeper's cat named, and what is the Kessing archive vault code?"
)
_WORDS = (
    "lorem ipsum dolor sit amet consectetur adipiscing elit sed do eiusmod tempor incididunt ut "
    "labore et dolore magna aliqua enim minim veniam quis nostrud exercitation ullamco laboris "
    "nisi aliquip commodo consequat duis aute irure reprehenderit voluptate velit"
)
_VOCAB = _WORDS.split()


def filler(seed: int, words: int) -> str:
    rng = random.Random(seed)
    text = " ".join(rng.choice(_VOCAB) for _ in range(words))
    return text[0].upper() + text[1:] + "."


def html_page(title: str, fact: str, seed: int, paragraphs: int = 60, at: int = 37) -> str:
    paras = [f"<p>{filler(seed * 1000 + i, 70)}</p>" for i in range(paragraphs)]
    paras.insert(at, f"<p>{filler(seed, 20)} {fact} {filler(seed + 1, 20)}</p>")
    return (
        f"<html><head><title>{title}</title></head><body><article><h1>{title}</h1>"
        + "".join(paras)
        + "</article></body></html>"
    )


def pdf_report(fact: str, pages: int = PDF_PAGES, fact_page: int = FACT_PAGE) -> bytes:
    """`pages` pages of filler lines, `fact` alone on one line of `fact_page`."""
    from reportlab.lib.pagesizes import A4
    from reportlab.pdfgen import canvas

    buf = io.BytesIO()
    c = canvas.Canvas(buf, pagesize=A4)
    c.setTitle("Archive report")
    for n in range(1, pages + 1):
        c.setFont("Helvetica", 10)
        c.drawString(72, 800, f"Archive report, page {n}.")
        for line in range(30):
            y = 786 - 14 * line
            if n == fact_page and line == 12:
                c.drawString(72, y, fact)
            else:
                c.drawString(72, y, filler(n * 100 + line, 12))
        c.showPage()
    c.save()
    return buf.getvalue()


def install(origin: Origin) -> list[str]:
    """Serve the sources; their URLs in order, the blocked one fourth."""
    urls = []
    for seed, planted in enumerate(FACTS, start=1):
        if planted.path.endswith(".pdf"):
            origin.set(planted.path, pdf_report(planted.fact), content_type="application/pdf")
        else:
            title = planted.path.rsplit("/", 1)[-1].title()
            origin.set(planted.path, html_page(title, planted.fact, seed))
        urls.append(origin.url(planted.path))
    urls.insert(3, BLOCKED)
    return urls
