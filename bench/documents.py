"""The documents the scenarios fetch, generated here (nothing is downloaded or committed).

`article()` is a realistic news page of a given size: a head with scripts and meta tags,
navigation, breadcrumbs, the article itself (headings, paragraphs with inline links, a list,
a table, a quote), a sidebar, comments and a footer full of links — the boilerplate that
main-content extraction must drop. PDFs come from the test suite's generator, built once per
run and kept in the run's temp dir (a 2,000-page one takes ~10 s to build).
"""

from __future__ import annotations

import io
import random
from html import escape
from pathlib import Path

_WORDS = (  # noqa: SIM905 (a list literal of 56 words would read worse)
    "city council heat summer street tree shade roof asphalt budget planning resident health "
    "temperature night neighbourhood building code insulation ventilation policy research data "
    "programme cost benefit climate water energy transport park district survey report analysis "
    "engineer designer official community measure result effect evidence risk warning network "
    "infrastructure maintenance funding target decade season campaign school hospital market"
).split()


def _sentence(rng: random.Random, words: int) -> str:
    text = " ".join(rng.choice(_WORDS) for _ in range(words))
    return text[0].upper() + text[1:] + "."


def _paragraph(rng: random.Random, sentences: int, link_base: str) -> str:
    parts = []
    for _ in range(sentences):
        s = escape(_sentence(rng, rng.randint(9, 24)))
        if rng.random() < 0.15:
            word = rng.choice(_WORDS)
            s += f' See <a href="{link_base}/{word}-{rng.randint(1, 999)}">the {word} story</a>.'
        parts.append(s)
    return "<p>" + " ".join(parts) + "</p>"


def _boilerplate_links(rng: random.Random, n: int, prefix: str) -> str:
    return "".join(
        f'<li><a href="/{prefix}/{rng.choice(_WORDS)}-{i}">'
        f"{escape(_sentence(rng, rng.randint(3, 8)))}</a></li>"
        for i in range(n)
    )


def article(size: int = 100_000, seed: int = 1) -> bytes:
    """An HTML article page of about `size` bytes (within a few per cent)."""
    rng = random.Random(seed)
    title = "How Cities Are Rethinking Urban Heat"
    head = (
        '<!DOCTYPE html>\n<html lang="en">\n<head>\n<meta charset="utf-8">\n'
        f"<title>{title} | The Daily Example</title>\n"
        f'<meta name="description" content="{escape(_sentence(rng, 20))}">\n'
        f'<meta property="og:title" content="{title}">\n'
        '<meta property="og:type" content="article">\n'
        '<link rel="stylesheet" href="/static/site.css">\n'
        "<script>window.dataLayer=window.dataLayer||[];function gtag(){dataLayer.push(arguments)}"
        "gtag('js',new Date());gtag('config','G-EXAMPLE');</script>\n"
        '<script type="application/ld+json">{"@context":"https://schema.org","@type":'
        f'"NewsArticle","headline":"{title}","author":{{"@type":"Person","name":"Maria Lopez"}},'
        '"datePublished":"2026-06-14"}</script>\n</head>\n<body>\n'
    )
    nav = (
        '<header class="site-header"><a class="logo" href="/">The Daily Example</a>'
        f'<nav class="main-nav"><ul>{_boilerplate_links(rng, 40, "section")}</ul></nav>'
        '<div class="ad ad-banner"><a href="/ads/click?id=42">Summer sale on air conditioners. '
        "Buy now!</a></div>"
        '<ol class="breadcrumbs"><li><a href="/">Home</a></li><li><a href="/cities">Cities</a>'
        "</li><li>Urban heat</li></ol></header>\n"
    )
    tail_parts = [
        '</article></main>\n<aside class="sidebar"><div class="ad"><p>Sponsored: premium '
        "sunscreen, 50% off.</p></div><h3>Most read</h3>"
        f"<ol>{_boilerplate_links(rng, 25, 'a')}</ol>"
        '<div class="newsletter"><h3>Stay informed</h3><form action="/subscribe">'
        '<input type="email" name="email"><button>Sign up</button></form></div></aside>\n'
        '<section id="comments"><h3>Comments</h3>'
    ]
    for i in range(12):
        tail_parts.append(
            f'<div class="comment"><p class="author">reader{i}</p>'
            f"<p>{escape(_sentence(rng, rng.randint(8, 30)))}</p></div>"
        )
    tail_parts.append(
        '</section>\n<footer class="site-footer">'
        f"<ul>{_boilerplate_links(rng, 60, 'footer')}</ul>"
        "<p>© 2026 The Daily Example. All rights reserved.</p></footer>\n"
        '<script src="/static/analytics.js"></script>\n</body>\n</html>\n'
    )
    tail = "".join(tail_parts)
    rows = "".join(
        f"<tr><td>{escape(rng.choice(_WORDS).title())}</td><td>{rng.choice(_WORDS)}</td>"
        f"<td>{rng.uniform(0.5, 4):.1f}</td><td>${rng.randint(1, 60)}</td></tr>"
        for _ in range(12)
    )
    body = [
        '<main><article class="post">'
        f"<h1>{title}</h1>"
        '<p class="byline">By <a href="/authors/maria-lopez">Maria Lopez</a> · '
        '<time datetime="2026-06-14">14 June 2026</time></p>'
    ]
    used = len(head) + len(nav) + len(tail) + len(body[0])
    section = 0
    while used < size:
        section += 1
        parts = [f"<h2>{escape(_sentence(rng, 5)[:-1])}</h2>"]
        parts += [_paragraph(rng, rng.randint(3, 7), "/cities") for _ in range(rng.randint(3, 6))]
        if section % 3 == 1:
            items = "".join(f"<li>{escape(_sentence(rng, 10))}</li>" for _ in range(5))
            parts.append(f"<ul>{items}</ul>")
        if section == 2:
            parts.append(
                "<table><thead><tr><th>Measure</th><th>City</th><th>Cooling (°C)</th>"
                f"<th>Cost per m²</th></tr></thead><tbody>{rows}</tbody></table>"
            )
        if section % 4 == 3:
            parts.append(f"<blockquote><p>{escape(_sentence(rng, 16))}</p></blockquote>")
        chunk = "".join(parts)
        body.append(chunk)
        used += len(chunk.encode())
    return (head + nav + "".join(body) + tail).encode()


def woven(page: bytes, n: int) -> bytes:
    """`page` with the number `n` (six digits) at the end of each of its paragraphs and
    headings: for each `n` a new text of the same size and structure, so a cold fetch pays
    what a new page pays (nothing sift remembers by a text's hash, such as the token counts of
    its sections, serves it again)."""
    tag = b" %06d" % (n % 1_000_000)
    return page.replace(b"</p>", tag + b"</p>").replace(b"</h2>", tag + b"</h2>")


def filler_text(size: int, seed: int = 4) -> bytes:
    """`size` bytes of plain text (words, in lines): cheap to clean, to fill a cache with."""
    rng = random.Random(seed)
    line = " ".join(rng.choice(_WORDS) for _ in range(4000))
    lines = [line[i : i + 100] for i in range(0, len(line), 100)]
    out = "\n".join(lines[rng.randrange(len(lines))] for _ in range(size // 100 + 1))
    return out.encode()[:size]


def paper_pdf(pages: int, seed: int = 3) -> bytes:
    """`pages` pages set like a paper or a manual: two columns of ~60 lines in an embedded
    TrueType font (DejaVu, or the Vera that reportlab ships), a bold heading now and then, a
    running head with `Page N marker-N.`, a chapter in the outline every 50 pages. Real
    documents embed their fonts; the base-14 Helvetica of `tests.support.pdfs.big_pdf` is the
    easiest case for poppler (no font program to read), so the targets are measured on this one."""
    from reportlab.lib.pagesizes import A4
    from reportlab.pdfbase import pdfmetrics
    from reportlab.pdfbase.ttfonts import TTFont
    from reportlab.pdfgen import canvas

    from tests.support.pdfs import ttf_path

    font = ttf_path()
    if font is None:
        raise RuntimeError("no TrueType font for the paper-like PDF")
    bold = font.replace("DejaVuSans.ttf", "DejaVuSans-Bold.ttf").replace("Vera.ttf", "VeraBd.ttf")
    pdfmetrics.registerFont(TTFont("BenchBody", font))
    pdfmetrics.registerFont(TTFont("BenchBold", bold if Path(bold).is_file() else font))
    rng = random.Random(seed)
    buf = io.BytesIO()
    c = canvas.Canvas(buf, pagesize=A4)
    c.setTitle("A paper-like synthetic document")
    for n in range(1, pages + 1):
        if n % 50 == 1:
            c.bookmarkPage(f"p{n}")
            c.addOutlineEntry(f"Chapter {n // 50 + 1}", f"p{n}", level=0)
        c.setFont("BenchBody", 8)
        c.drawString(50, 815, f"Page {n} marker-{n}.")
        for column in (0, 1):
            x, y = 50 + column * 260, 795.0
            for line in range(60):
                if line % 20 == 0:
                    c.setFont("BenchBold", 10)
                    c.drawString(x, y, _sentence(rng, 4)[:-1])
                    c.setFont("BenchBody", 9)
                else:
                    c.drawString(x, y, " ".join(rng.choice(_WORDS) for _ in range(6)))
                y -= 12.5
        c.showPage()
    c.save()
    return buf.getvalue()


class PdfFiles:
    """Generated PDFs, built on first use and kept as files in `root`: `plain` (the test
    suite's `big_pdf`: one column, base-14 font) or `paper` (`paper_pdf`)."""

    def __init__(self, root: Path) -> None:
        self.root = root

    def path(self, pages: int, kind: str = "plain") -> Path:
        path = self.root / f"{kind}{pages}.pdf"
        if not path.exists():
            from tests.support.pdfs import big_pdf

            tmp = path.with_suffix(".tmp")
            tmp.write_bytes(paper_pdf(pages) if kind == "paper" else big_pdf(pages))
            tmp.replace(path)
        return path

    def data(self, pages: int) -> bytes:
        return self.path(pages).read_bytes()
