"""PDFs generated at test time (nothing binary is committed), cached once per session.

Plain functions build each fixture's bytes; the session fixture `pdfs` writes them to a tmp
dir on first use and hands out the bytes. Import it into a test module:
`from tests.pdfs import pdfs_fixture  # noqa: F401`, then ask for `pdfs`.
"""

from __future__ import annotations

import io
import random
from collections.abc import Callable
from pathlib import Path

import pytest

# A phrase known to be on each page of the 3-page fixture, and its outline.
PHRASES = {1: "alpha kestrel opening", 2: "quantum marmalade theorem", 3: "final zephyr summary"}
THREE_TITLE = "Three Page Test"
THREE_OUTLINE = [("1 Opening", 1, 1), ("2 Theorem", 2, 1), ("2.1 Proof", 2, 2), ("3 Summary", 3, 1)]
BIG_PAGES = 2100
_TTF_CANDIDATES = [
    "/usr/share/fonts/truetype/dejavu/DejaVuSans.ttf",
    "/usr/share/fonts/TTF/DejaVuSans.ttf",
    "/usr/share/fonts/dejavu/DejaVuSans.ttf",
]


def _fpdf():  # type: ignore[no-untyped-def]
    from fpdf import FPDF

    pdf = FPDF()
    pdf.set_font("helvetica", size=12)
    return pdf


def three_page_pdf() -> bytes:
    """3 pages, a title, a two-level outline, and PHRASES[n] on page n."""
    pdf = _fpdf()
    pdf.set_title(THREE_TITLE)
    outline = iter(THREE_OUTLINE)
    for n in (1, 2, 3):
        pdf.add_page()
        for title, page, level in THREE_OUTLINE:
            if page == n:
                next(outline)
                pdf.start_section(title, level=level - 1)
                pdf.multi_cell(0, 8, f"Heading {title}", new_x="LMARGIN", new_y="NEXT")
        text = f"Page {n} opens here.\nThe {PHRASES[n]} is on page {n}.\nIt closes page {n}."
        pdf.multi_cell(0, 8, text, new_x="LMARGIN", new_y="NEXT")
    return bytes(pdf.output())


def scanned_pdf() -> bytes:
    """Two pages that hold only an image: no text layer."""
    from PIL import Image, ImageDraw

    pdf = _fpdf()
    for n in (1, 2):
        img = Image.new("L", (400, 500), 255)
        draw = ImageDraw.Draw(img)
        for y in range(40, 460, 24):
            draw.rectangle((30, y, 30 + (y * 7 + n * 50) % 340, y + 10), fill=0)
        pdf.add_page()
        pdf.image(img, x=10, y=10, w=150)
    return bytes(pdf.output())


def _encrypted(user_password: str) -> bytes:
    from fpdf.enums import EncryptionMethod

    pdf = _fpdf()
    pdf.set_encryption(owner_password="owner-secret", user_password=user_password,
                       encryption_method=EncryptionMethod.RC4)  # fmt: skip
    pdf.add_page()
    pdf.multi_cell(0, 8, f"Encrypted page. The {PHRASES[1]} is here.")
    return bytes(pdf.output())


def user_password_pdf() -> bytes:
    """Needs the user password to open."""
    return _encrypted("user-secret")


def owner_only_pdf() -> bytes:
    """Encrypted with an owner password only: opens with the empty user password."""
    return _encrypted("")


def truncated_pdf() -> bytes:
    """The 3-page fixture cut at 60 %: no xref, no trailer."""
    data = three_page_pdf()
    return data[: len(data) * 6 // 10]


def big_pdf(pages: int = BIG_PAGES) -> bytes:
    """`pages` pages of ~40 text lines, `Page N marker-N.` on each, a chapter every 50 pages."""
    from reportlab.lib.pagesizes import A4
    from reportlab.pdfgen import canvas

    buf = io.BytesIO()
    c = canvas.Canvas(buf, pagesize=A4)
    c.setTitle("Big synthetic document")
    words = "lorem ipsum dolor sit amet consectetur adipiscing elit sed do eiusmod tempor"
    words += " incididunt ut labore et dolore magna aliqua"
    vocab = words.split()
    for n in range(1, pages + 1):
        if n % 50 == 1:
            c.bookmarkPage(f"p{n}")
            c.addOutlineEntry(f"Chapter {n // 50 + 1}", f"p{n}", level=0)
        c.setFont("Helvetica", 10)
        c.drawString(72, 800, f"Page {n} marker-{n}.")
        for line in range(40):
            text = " ".join(vocab[(line + k + n) % len(vocab)] for k in range(14))
            c.drawString(72, 786 - 14 * line, text)
        c.showPage()
    c.save()
    return buf.getvalue()


def outlined_pdf(pages: int = 200, per_page: int = 15) -> bytes:
    """`pages` short pages with `per_page` outline entries each, titles ~100 characters long."""
    from reportlab.lib.pagesizes import A4
    from reportlab.pdfgen import canvas

    buf = io.BytesIO()
    c = canvas.Canvas(buf, pagesize=A4)
    c.setTitle("A document with a huge outline")
    for n in range(1, pages + 1):
        for k in range(per_page):
            c.bookmarkPage(f"p{n}-{k}")
            title = f"Part {n}.{k} " + "of a very long table of contents entry " * 2
            c.addOutlineEntry(title, f"p{n}-{k}", level=min(k, 2))
        c.setFont("Helvetica", 10)
        c.drawString(72, 800, f"Page {n} marker-{n}.")
        c.showPage()
    c.save()
    return buf.getvalue()


def ttf_path() -> str | None:
    """A TrueType font on this machine (DejaVu), else the Vera that reportlab ships."""
    for p in _TTF_CANDIDATES:
        if Path(p).is_file():
            return p
    import reportlab

    vera = Path(reportlab.__file__).parent / "fonts" / "Vera.ttf"
    return str(vera) if vera.is_file() else None


def unmapped_font_pdf() -> bytes:
    """Text in an embedded TrueType font whose /ToUnicode maps are taken away.

    The key is renamed in place (`/ToUnicode` → `/ToUnicodX`), so every offset in the xref
    stays right: a valid PDF whose text no library can map back to Unicode.
    """
    path = ttf_path()
    if path is None:
        pytest.skip("no TrueType font on this machine")
    pdf = _fpdf()
    pdf.add_font("embedded", fname=path)
    pdf.set_font("embedded", size=12)
    for n in (1, 2):
        pdf.add_page()
        pdf.multi_cell(0, 8, f"Page {n}: the quick brown fox jumps over the lazy dog. " * 4)
    data = bytes(pdf.output())
    assert b"/ToUnicode" in data
    return data.replace(b"/ToUnicode", b"/ToUnicodX")


def mutants(base: bytes, count: int = 20, seed: int = 5) -> list[bytes]:
    """Byte-level mutants of `base`: flips, deletions, duplications, cuts, junk."""
    rng = random.Random(seed)
    out = []
    for i in range(count):
        data = bytearray(base)
        kind = i % 5
        if kind == 0:
            for _ in range(rng.randint(1, 40)):
                data[rng.randrange(len(data))] = rng.randrange(256)
        elif kind == 1:
            a = rng.randrange(len(data))
            del data[a : a + rng.randint(1, 2000)]
        elif kind == 2:
            a = rng.randrange(len(data))
            data[a:a] = data[a : a + rng.randint(1, 3000)]
        elif kind == 3:
            data = data[: rng.randrange(8, len(data))]
        else:
            a = rng.randrange(len(data))
            data[a:a] = bytes(rng.randrange(256) for _ in range(rng.randint(1, 500)))
        out.append(bytes(data))
    return out


class PdfSet:
    """Each fixture generated once per session, kept as a file, read back as bytes."""

    def __init__(self, root: Path) -> None:
        self.root = root

    def _get(self, name: str, make: Callable[[], bytes]) -> bytes:
        path = self.root / f"{name}.pdf"
        if not path.exists():
            path.write_bytes(make())
        return path.read_bytes()

    def path(self, name: str) -> Path:
        getattr(self, name)
        return self.root / f"{name}.pdf"

    three = property(lambda self: self._get("three", three_page_pdf))
    scanned = property(lambda self: self._get("scanned", scanned_pdf))
    user_password = property(lambda self: self._get("user_password", user_password_pdf))
    owner_only = property(lambda self: self._get("owner_only", owner_only_pdf))
    truncated = property(lambda self: self._get("truncated", truncated_pdf))
    big = property(lambda self: self._get("big", big_pdf))
    outlined = property(lambda self: self._get("outlined", outlined_pdf))
    unmapped_font = property(lambda self: self._get("unmapped_font", unmapped_font_pdf))


@pytest.fixture(scope="session", name="pdfs")
def pdfs_fixture(tmp_path_factory: pytest.TempPathFactory) -> PdfSet:
    return PdfSet(tmp_path_factory.mktemp("pdfs"))
