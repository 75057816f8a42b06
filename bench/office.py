"""Office documents for the office row, made at bench time with the writer libraries (no
network), each with the words it holds: headings, paragraphs with links and bold, lists,
tables, speaker notes, sheets. Text recall is measured against those words."""

from __future__ import annotations

import io
import random
import re
from collections import Counter
from collections.abc import Callable

_VOCAB = [
    "river",
    "harbor",
    "signal",
    "lattice",
    "meadow",
    "copper",
    "violet",
    "engine",
    "garden",
    "summit",
    "thunder",
    "orbit",
    "canvas",
    "willow",
    "marble",
    "falcon",
    "ember",
    "quartz",
    "prairie",
    "beacon",
    "glacier",
    "saddle",
    "lantern",
    "cobalt",
    "tundra",
    "velvet",
    "anchor",
    "meteor",
    "cedar",
    "walnut",
    "basalt",
    "comet",
    "ridge",
    "plume",
    "cascade",
    "dune",
    "atlas",
]
_WORD = re.compile(r"[a-z]+")


def _words(rng: random.Random, n: int) -> str:
    return " ".join(rng.choice(_VOCAB) for _ in range(n))


def docx(rng: random.Random, words: list[str]) -> bytes:
    import docx as python_docx

    d = python_docx.Document()
    for s in range(40):
        head = _words(rng, 4)
        d.add_heading(head, 1 + s % 2)
        words.append(head)
        for _ in range(4):
            text = _words(rng, 60)
            p = d.add_paragraph(text[:200])
            r = p.add_run(" " + text[200:])
            r.bold = True
            words.append(text)
        for _ in range(3):
            item = _words(rng, 8)
            d.add_paragraph(item, style="List Bullet")
            words.append(item)
        cells = [[_words(rng, 2) for _ in range(3)] for _ in range(4)]
        t = d.add_table(rows=4, cols=3)
        for i, row in enumerate(cells):
            for j, v in enumerate(row):
                t.cell(i, j).text = v
                words.append(v)
    return _saved(d)


def pptx(rng: random.Random, words: list[str]) -> bytes:
    from pptx import Presentation
    from pptx.util import Inches

    prs = Presentation()
    for _ in range(40):
        slide = prs.slides.add_slide(prs.slide_layouts[1])
        title = _words(rng, 4)
        slide.shapes.title.text = title
        words.append(title)
        body = slide.placeholders[1].text_frame
        body.text = _words(rng, 10)
        words.append(body.text)
        for level in (1, 1, 2):
            p = body.add_paragraph()
            p.text, p.level = _words(rng, 8), level
            words.append(p.text)
        shape = slide.shapes.add_table(3, 3, Inches(1), Inches(5), Inches(6), Inches(1))
        for row in shape.table.rows:
            for c in row.cells:
                c.text = _words(rng, 2)
                words.append(c.text)
        note = _words(rng, 20)
        slide.notes_slide.notes_text_frame.text = note
        words.append(note)
    return _saved(prs)


def xlsx(rng: random.Random, words: list[str]) -> bytes:
    import openpyxl

    wb = openpyxl.Workbook()
    for n in range(4):
        ws = wb.active if n == 0 else wb.create_sheet()
        ws.title = f"sheet{n}"
        for _ in range(1500):
            row = [_words(rng, 2), _words(rng, 1), rng.randint(0, 999), _words(rng, 3)]
            ws.append(row)
            words.extend(str(v) for v in row)
    return _saved(wb)


def epub(rng: random.Random, words: list[str]) -> bytes:
    from ebooklib import epub as writer

    book = writer.EpubBook()
    book.set_identifier("bench")
    book.set_title("Bench Book")
    book.set_language("en")
    chapters = []
    for n in range(20):
        head = _words(rng, 3)
        paras = [_words(rng, 80) for _ in range(6)]
        words.extend([head, *paras])
        ch = writer.EpubHtml(title=head, file_name=f"c{n}.xhtml", lang="en")
        ch.content = f"<h1>{head}</h1>" + "".join(f"<p>{p}</p>" for p in paras)
        book.add_item(ch)
        chapters.append(ch)
    book.toc = chapters
    book.add_item(writer.EpubNcx())
    book.add_item(writer.EpubNav())
    book.spine = chapters
    out = io.BytesIO()
    writer.write_epub(out, book)
    return out.getvalue()


def csv(rng: random.Random, words: list[str]) -> bytes:
    lines = []
    for _ in range(5000):
        row = [_words(rng, 2), str(rng.randint(0, 9999)), _words(rng, 2)]
        words.extend(row)
        lines.append(",".join(row))
    return "\n".join(lines).encode()


MAKERS: dict[str, Callable[[random.Random, list[str]], bytes]] = {
    "docx": docx,
    "pptx": pptx,
    "xlsx": xlsx,
    "epub": epub,
    "csv": csv,
}


def documents() -> dict[str, tuple[bytes, list[str]]]:
    """Each format's document and the texts written into it."""
    out = {}
    for fmt, make in MAKERS.items():
        words: list[str] = []
        out[fmt] = (make(random.Random(fmt), words), words)
    return out


def recall(own: list[str], text: str) -> float:
    """The share of the document's own words (counted with repeats) found in `text`."""
    want = Counter(w for t in own for w in _WORD.findall(t.lower()))
    got = Counter(_WORD.findall(text.lower()))
    total = sum(want.values())
    return sum(min(n, got[w]) for w, n in want.items()) / total if total else 1.0


def _saved(doc: object) -> bytes:
    out = io.BytesIO()
    doc.save(out)  # type: ignore[attr-defined]
    return out.getvalue()
