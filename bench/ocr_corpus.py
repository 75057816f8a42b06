"""Text PDFs for the OCR rows, and their scans (the pages rendered, the text layer dropped).

Latin: pages of real documents where the machine has them (PDF manuals that Debian's doc
packages install), else a generated report in DejaVu Serif. Cyrillic and CJK: generated
prose set in DejaVu Serif and WenQuanYi Micro Hei (`apt-get install fonts-wqy-microhei`);
without that font the CJK figure is absent. The truth of each page is its own text layer.
"""

from __future__ import annotations

import io
import random
import re
from collections import Counter
from pathlib import Path
from typing import Any

REAL = [  # (path, first page index, pages): manuals with plain running text
    ("/usr/share/doc/shared-mime-info/shared-mime-info-spec.pdf", 0, 6),
    ("/usr/share/doc/libtasn1-doc/libtasn1.pdf", 2, 6),
]
SERIF = "/usr/share/fonts/truetype/dejavu/DejaVuSerif.ttf"
CJK_FONTS = [
    "/usr/share/fonts/truetype/wqy/wqy-microhei.ttc",
    "/usr/share/fonts/truetype/wqy/wqy-zenhei.ttc",
]
ENGLISH = (
    "The council published its annual report on river water quality. Nitrate levels fell at "
    "most monitoring stations, although two upland sites showed seasonal peaks after heavy "
    "rainfall. The authors recommend more frequent sampling, a public dashboard, and closer "
    "work with farmers on the timing of fertiliser. Funding for the programme was renewed "
    "for three years, and a review of the sampling network is planned for next spring."
)
RUSSIAN = (
    "Городской совет опубликовал ежегодный отчёт о качестве воды в реке. Уровень нитратов "
    "снизился на большинстве станций наблюдения, хотя на двух горных участках после сильных "
    "дождей отмечены сезонные пики. Авторы рекомендуют чаще отбирать пробы, открыть "
    "общедоступную панель данных и теснее работать с фермерами над сроками внесения удобрений."
)
CHINESE = (
    "市议会发布了关于河流水质的年度报告。大多数监测站的硝酸盐含量有所下降，但两个高地站点在"
    "大雨之后出现了季节性高峰。作者建议更频繁地采样，建立公开的数据看板，并与农民在施肥时间"
    "上加强合作。该项目的资金已续期三年，明年春天还将对采样网络进行审查。"
)


def words(text: str, cjk: bool = False) -> Counter[str]:
    """The words of `text` (CJK: its Han characters, which are its words' letters)."""
    if cjk:
        return Counter(re.findall(r"[\u4e00-\u9fff]", text))
    return Counter(re.findall(r"\w+", text.lower()))


def recall(truth: str, got: str, cjk: bool = False) -> float:
    want, have = words(truth, cjk), words(got, cjk)
    total = sum(want.values())
    return sum(min(n, have[w]) for w, n in want.items()) / total if total else 1.0


def latin_pdf() -> tuple[bytes, str]:
    """(a text PDF, where it came from): six pages of a real manual, else generated."""
    import pypdfium2 as pdfium

    for path, first, n in REAL:
        if Path(path).is_file():
            src = pdfium.PdfDocument(path)
            out = pdfium.PdfDocument.new()
            out.import_pages(src, list(range(first, first + n)))
            buf = io.BytesIO()
            out.save(buf)
            return buf.getvalue(), f"{Path(path).name} pp. {first + 1}–{first + n}"
    return _prose_pdf(ENGLISH, SERIF, 6), "generated English report"


def cyrillic_pdf() -> bytes:
    return _prose_pdf(RUSSIAN, SERIF, 3)


def cjk_pdf() -> bytes | None:
    font = next((f for f in CJK_FONTS if Path(f).is_file()), None)
    return _prose_pdf(CHINESE, font, 3, cjk=True) if font else None


def _prose_pdf(text: str, font: str, pages: int, cjk: bool = False) -> bytes:
    """`pages` pages of `text`'s sentences, shuffled, in 11 pt `font` (reportlab)."""
    from reportlab.lib.pagesizes import A4
    from reportlab.pdfbase import pdfmetrics
    from reportlab.pdfbase.ttfonts import TTFont
    from reportlab.pdfgen import canvas

    pdfmetrics.registerFont(TTFont("body", font, subfontIndex=0))
    sentences = re.findall(r"[^.。]+[.。]", text)
    rng = random.Random(7)
    buf = io.BytesIO()
    c = canvas.Canvas(buf, pagesize=A4)
    width = 40 if cjk else 90  # characters a line
    for _ in range(pages):
        body = ("" if cjk else " ").join(rng.choice(sentences).strip() for _ in range(24))
        lines = [body[i : i + width] for i in range(0, len(body), width)] if cjk else _wrap(body)
        y = 800
        for line in lines[:50]:
            c.setFont("body", 11)
            c.drawString(50, y, line)
            y -= 15
        c.showPage()
    c.save()
    return buf.getvalue()


def _wrap(text: str, width: int = 90) -> list[str]:
    import textwrap

    return textwrap.wrap(text, width)


def scanned(pdf: bytes, dpi: int = 150) -> tuple[bytes, list[Any]]:
    """`pdf` as a scan: each page rendered at `dpi` (grayscale) and rebuilt as an image-only
    PDF; and the page images."""
    import pypdfium2 as pdfium

    doc = pdfium.PdfDocument(pdf)
    images = [doc[i].render(scale=dpi / 72, grayscale=True).to_pil() for i in range(len(doc))]
    buf = io.BytesIO()
    images[0].save(buf, "PDF", save_all=True, append_images=images[1:], resolution=dpi)
    return buf.getvalue(), images


def text_layer(pdf: bytes) -> list[str]:
    import pypdfium2 as pdfium

    doc = pdfium.PdfDocument(pdf)
    return [doc[i].get_textpage().get_text_range() for i in range(len(doc))]
