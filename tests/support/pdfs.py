"""PDFs generated at test time (nothing binary is committed), cached once per session.

Plain functions build each fixture's bytes; the session fixture `pdfs` (registered in
tests/conftest.py: a test asks for it by name) writes them to a tmp dir on first use and hands
out the bytes.
"""

from __future__ import annotations

import io
import random
import textwrap
import unicodedata
from collections.abc import Callable
from pathlib import Path
from typing import Any

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


def _fpdf():
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
    pdf.set_encryption(
        owner_password="owner-secret",
        user_password=user_password,
        encryption_method=EncryptionMethod.RC4,
    )
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


# Text in the two CJK pages of cjk_unmapped_pdf, and the legacy CMap that encodes each.
CJK_LINES = {
    "EUC-H": (
        "Japan1",
        "HeiseiMin-W3",
        "euc_jp",
        [
            "すべての人間は、生まれながらにして自由であり、",
            "かつ、尊厳と権利とについて平等である。",
        ],
    ),
    "KSC-EUC-H": (
        "Korea1",
        "HYSMyeongJo-Medium",
        "euc_kr",
        ["모든 인간은 태어날 때부터 자유로우며", "그 존엄과 권리에 있어 동등하다."],
    ),
}
PERSIAN = (
    "تمام افراد بشر آزاد به دنیا می‌آیند و از لحاظ حیثیت و حقوق با هم برابرند. "
    "همه دارای عقل و وجدان هستند و باید در برابر یکدیگر با روح برادری رفتار کنند. "
    "این متن از اعلامیه جهانی حقوق بشر است و برای آزمایش به کار می‌رود."
)
# Two control characters in a line of prose: too few to call the page garbled.
CONTROL_LINE = (
    "A line of plain prose\x00 with a NUL in it, a tab\there, a bell\x07 and then it goes on "
    "quietly about the weather, the harvest and the long road home."
)


def _raw_pdf(pages: list[bytes], font: bytes, descendant: bytes = b"") -> bytes:
    """A PDF written by hand: one font, one content stream per page, a classic xref."""
    n = len(pages)
    objs = [
        b"<< /Type /Catalog /Pages 2 0 R >>",
        b"<< /Type /Pages /Kids [%s] /Count %d >>"
        % (b" ".join(b"%d 0 R" % (5 + 2 * i) for i in range(n)), n),
        font,
        descendant or b"<< >>",
    ]
    for i, content in enumerate(pages):
        objs.append(
            b"<< /Type /Page /Parent 2 0 R /MediaBox [0 0 595 842] "
            b"/Resources << /Font << /F1 3 0 R >> >> /Contents %d 0 R >>" % (6 + 2 * i)
        )
        objs.append(b"<< /Length %d >>\nstream\n%s\nendstream" % (len(content), content))
    out = bytearray(b"%PDF-1.4\n")
    offsets = []
    for i, obj in enumerate(objs, 1):
        offsets.append(len(out))
        out += b"%d 0 obj\n%s\nendobj\n" % (i, obj)
    xref = len(out)
    out += b"xref\n0 %d\n0000000000 65535 f \n" % (len(objs) + 1)
    out += b"".join(b"%010d 00000 n \n" % o for o in offsets)
    out += b"trailer\n<< /Size %d /Root 1 0 R >>\n" % (len(objs) + 1)
    out += b"startxref\n%d\n%%%%EOF\n" % xref
    return bytes(out)


def cjk_unmapped_pdf() -> bytes:
    """CJK text in fonts with no Unicode map: no /ToUnicode, a legacy CMap (EUC) over CIDs.

    Page 1 Japanese (EUC-H), page 2 Korean (KSC-EUC-H), in standard CJK fonts a reader
    supplies itself. pdfium maps the codes through its CID tables; pypdf does not know these
    CMaps and answers Yi syllables and Hangul.
    """
    from pypdf import PdfReader, PdfWriter

    writer = PdfWriter()
    for encoding in CJK_LINES:
        writer.append(PdfReader(io.BytesIO(_cjk_page(encoding))))
    buf = io.BytesIO()
    writer.write(buf)
    return buf.getvalue()


def _cjk_page(encoding: str) -> bytes:
    ordering, base, codec, lines = CJK_LINES[encoding]
    name = base.encode()
    font = (
        b"<< /Type /Font /Subtype /Type0 /BaseFont /%s /Encoding /%s "
        b"/DescendantFonts [4 0 R] >>" % (name, encoding.encode())
    )
    cid = (
        b"<< /Type /Font /Subtype /CIDFontType0 /BaseFont /%s /CIDSystemInfo << /Registry "
        b"(Adobe) /Ordering (%s) /Supplement 2 >> /DW 1000 >>" % (name, ordering.encode())
    )
    text = b"".join(b"<%s> Tj T*\n" % line.encode(codec).hex().encode() for line in lines)
    return _raw_pdf([b"BT /F1 14 Tf 72 760 Td 20 TL\n" + text + b"ET"], font, cid)


def control_chars_pdf() -> bytes:
    """Helvetica text whose strings carry NUL, BEL, ESC and VT among ordinary words."""
    font = b"<< /Type /Font /Subtype /Type1 /BaseFont /Helvetica /Encoding /WinAnsiEncoding >>"
    line = CONTROL_LINE.encode("latin-1").replace(b"\\", b"\\\\")
    line = line.replace(b"(", b"\\(").replace(b")", b"\\)")
    content = b"BT /F1 12 Tf 72 760 Td 16 TL\n" + b"(%s) Tj T*\n" % line * 6 + b"ET"
    return _raw_pdf([content], font)


def _arabic_forms() -> dict[str, dict[str, str]]:
    """Each Arabic letter's presentation forms (isolated, final, initial, medial), by Unicode."""
    forms: dict[str, dict[str, str]] = {}
    for cp in [*range(0xFB50, 0xFE00), *range(0xFE70, 0xFEFF)]:
        d = unicodedata.decomposition(chr(cp)).split()
        if len(d) == 2 and d[0] in ("<isolated>", "<final>", "<initial>", "<medial>"):
            forms.setdefault(chr(int(d[1], 16)), {})[d[0][1:-1]] = chr(cp)
    return forms


def _shape(word: str, forms: dict[str, dict[str, str]]) -> str:
    """A word in presentation forms, joined as a shaping engine would (enough for the tests)."""
    out = []
    for i, ch in enumerate(word):
        f = forms.get(ch)
        if not f:
            out.append(ch)
            continue
        after = i > 0 and "initial" in forms.get(word[i - 1], {})  # the one before joins on
        before = i + 1 < len(word) and word[i + 1] in forms and "initial" in f
        kind = ("isolated", "initial", "final", "medial")[2 * after + before]
        out.append(f.get(kind) or f.get("isolated") or ch)
    return "".join(out)


def persian_pdf(order: str) -> bytes:
    """PERSIAN set in DejaVu Sans, right-aligned, as producers write it.

    `visual-shaped`: presentation-form glyphs laid out left to right in visual order (what
    most Persian PDFs hold; pypdf answers the presentation forms, pdfium the letters).
    `logical`: unshaped letters in logical order drawn left to right (a naive producer; both
    engines answer the words reversed). `spaced`: the letters one by one between spaces.
    """
    path = ttf_path()
    if path is None or "DejaVu" not in path:
        pytest.skip("no DejaVu Sans (Arabic glyphs) on this machine")
    from reportlab.pdfbase import pdfmetrics
    from reportlab.pdfbase.ttfonts import TTFont
    from reportlab.pdfgen import canvas

    forms = _arabic_forms()
    lines = textwrap.wrap(PERSIAN, 60)
    if order == "visual-shaped":
        lines = [" ".join(_shape(w, forms)[::-1] for w in ln.split()[::-1]) for ln in lines]
    elif order == "spaced":
        lines = [" ".join(ln.replace(" ", "")) for ln in lines]
    pdfmetrics.registerFont(TTFont("DejaVuSans", path))
    buf = io.BytesIO()
    c = canvas.Canvas(buf)
    c.setFont("DejaVuSans", 14)
    for i, line in enumerate(lines):
        c.drawRightString(540, 780 - 22 * i, line)
    c.showPage()
    c.save()
    return buf.getvalue()


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
    cjk_unmapped = property(lambda self: self._get("cjk_unmapped", cjk_unmapped_pdf))
    control_chars = property(lambda self: self._get("control_chars", control_chars_pdf))
    persian_shaped = property(
        lambda self: self._get("persian_shaped", lambda: persian_pdf("visual-shaped"))
    )
    persian_reversed = property(
        lambda self: self._get("persian_reversed", lambda: persian_pdf("logical"))
    )
    persian_spaced = property(
        lambda self: self._get("persian_spaced", lambda: persian_pdf("spaced"))
    )


@pytest.fixture(scope="session", name="pdfs")
def pdfs_fixture(tmp_path_factory: pytest.TempPathFactory) -> PdfSet:
    return PdfSet(tmp_path_factory.mktemp("pdfs"))


def pdf_extractions(sift: Any) -> float:
    """PDF extractions so far (`sift_pdf_extract_total`): a cached answer adds none."""
    from tests.support.uploads import metric

    return metric(sift, "sift_pdf_extract_total")
