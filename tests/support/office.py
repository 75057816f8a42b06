"""Office files and e-books made at test (and bench) time with the writer libraries, each with
the phrases it holds; and the two attacks every zip of XML must survive: a zip bomb and a
billion-laughs document."""

from __future__ import annotations

import io
import zipfile
from collections.abc import Callable

PHRASE = "quokka lantern"  # in the second part of every document, for grep
MEDIA = {
    "docx": "application/vnd.openxmlformats-officedocument.wordprocessingml.document",
    "pptx": "application/vnd.openxmlformats-officedocument.presentationml.presentation",
    "xlsx": "application/vnd.openxmlformats-officedocument.spreadsheetml.sheet",
    "odt": "application/vnd.oasis.opendocument.text",
    "ods": "application/vnd.oasis.opendocument.spreadsheet",
    "odp": "application/vnd.oasis.opendocument.presentation",
    "epub": "application/epub+zip",
    "rtf": "application/rtf",
    "csv": "text/csv",
    "tsv": "text/tab-separated-values",
}
FILLER = " ".join(["The committee reviewed the figures and agreed on the plan."] * 40)


def docx(sections: int = 3) -> bytes:
    import docx as python_docx

    d = python_docx.Document()
    d.core_properties.title = "Annual Report"
    for n in range(1, sections + 1):
        d.add_heading(f"Chapter {n} Overview", 1)
        if n == 2:
            d.add_paragraph(f"The {PHRASE} stays lit.")
            d.add_paragraph("first point", style="List Bullet")
            d.add_paragraph("second point", style="List Bullet")
            t = d.add_table(rows=2, cols=2)
            for (r, c), v in zip([(0, 0), (0, 1), (1, 0), (1, 1)], "abcd", strict=True):
                t.cell(r, c).text = f"cell {v}"
        d.add_paragraph(FILLER)
    return _saved(d)


def pptx(slides: int = 3) -> bytes:
    from pptx import Presentation

    prs = Presentation()
    for n in range(1, slides + 1):
        slide = prs.slides.add_slide(prs.slide_layouts[1])
        slide.shapes.title.text = f"Slide title {n}"
        slide.placeholders[1].text_frame.text = PHRASE if n == 2 else f"body of slide {n}"
        slide.notes_slide.notes_text_frame.text = f"speaker note {n}"
    return _saved(prs)


def xlsx(sheets: int = 3) -> bytes:
    import openpyxl

    wb = openpyxl.Workbook()
    for n in range(1, sheets + 1):
        ws = wb.active if n == 1 else wb.create_sheet()
        ws.title = f"Data{n}"
        ws.append(["name", "value"])
        for i in range(5):
            ws.append([PHRASE if (n == 2 and i == 3) else f"row {i}", i * n])
    return _saved(wb)


def _odf(kind: str) -> bytes:
    from odf import draw, opendocument, presentation, style, table, text

    if kind == "odt":
        doc = opendocument.OpenDocumentText()
        for n in range(1, 4):
            doc.text.addElement(text.H(outlinelevel=1, text=f"Chapter {n} Overview"))
            if n == 2:
                doc.text.addElement(text.P(text=f"The {PHRASE} stays lit."))
            doc.text.addElement(text.P(text=FILLER))
    elif kind == "ods":
        doc = opendocument.OpenDocumentSpreadsheet()
        for n in range(1, 4):
            t = table.Table(name=f"Data{n}")
            for i in range(4):
                row = table.TableRow()
                for v in ("name" if i == 0 else PHRASE if n == 2 else f"row {i}", str(i)):
                    c = table.TableCell()
                    c.addElement(text.P(text=v))
                    row.addElement(c)
                t.addElement(row)
            doc.spreadsheet.addElement(t)
    else:
        doc = opendocument.OpenDocumentPresentation()
        layout = style.PageLayout(name="L")
        doc.automaticstyles.addElement(layout)
        master = style.MasterPage(name="M", pagelayoutname=layout)
        doc.masterstyles.addElement(master)
        for n in range(1, 4):
            page = draw.Page(masterpagename=master, name=f"page{n}")
            title = draw.Frame(width="20cm", height="3cm", x="1cm", y="1cm")
            title.setAttrNS(presentation.PRESENTATIONNS, "class", "title")
            box = draw.TextBox()
            box.addElement(text.P(text=f"Slide title {n}"))
            title.addElement(box)
            page.addElement(title)
            body = draw.Frame(width="20cm", height="10cm", x="1cm", y="5cm")
            box = draw.TextBox()
            box.addElement(text.P(text=PHRASE if n == 2 else f"body of slide {n}"))
            body.addElement(box)
            page.addElement(body)
            notes = presentation.Notes()
            frame = draw.Frame(width="20cm", height="5cm", x="1cm", y="1cm")
            box = draw.TextBox()
            box.addElement(text.P(text=f"speaker note {n}"))
            frame.addElement(box)
            notes.addElement(frame)
            page.addElement(notes)
            doc.presentation.addElement(page)
    out = io.BytesIO()
    doc.save(out)
    return out.getvalue()


def epub(chapters: int = 3) -> bytes:
    from ebooklib import epub as writer

    book = writer.EpubBook()
    book.set_identifier("sift-test")
    book.set_title("A Test Book")
    book.set_language("en")
    items = []
    for n in range(1, chapters + 1):
        ch = writer.EpubHtml(title=f"Chapter {n}", file_name=f"ch{n}.xhtml", lang="en")
        words = PHRASE if n == 2 else f"words of chapter {n}"
        ch.content = f"<h1>Chapter {n}</h1><p>{words}</p><p>{FILLER}</p>"
        book.add_item(ch)
        items.append(ch)
    book.toc = items
    book.add_item(writer.EpubNcx())
    book.add_item(writer.EpubNav())
    book.spine = ["nav", *items]
    out = io.BytesIO()
    writer.write_epub(out, book)
    return out.getvalue()


def rtf() -> bytes:
    paras = ["Part 1: a short opening.", f"Part 2: {PHRASE}", f"Part 3: {FILLER}", FILLER]
    body = "".join(f"{{\\pard {p}\\par}}\n" for p in paras)
    return ("{\\rtf1\\ansi\\deff0 {\\fonttbl {\\f0 Times;}}\n" + body + "}").encode()


def delimited(sep: str) -> bytes:
    rows = [["name", "value"]] + [[PHRASE if i == 505 else f"row {i}", str(i)] for i in range(1200)]
    return "\n".join(sep.join(r) for r in rows).encode()


MAKERS: dict[str, Callable[[], bytes]] = {
    "docx": docx,
    "pptx": pptx,
    "xlsx": xlsx,
    "odt": lambda: _odf("odt"),
    "ods": lambda: _odf("ods"),
    "odp": lambda: _odf("odp"),
    "epub": epub,
    "rtf": rtf,
    "csv": lambda: delimited(","),
    "tsv": lambda: delimited("\t"),
}


def _saved(doc: object) -> bytes:
    out = io.BytesIO()
    doc.save(out)  # type: ignore[attr-defined]
    return out.getvalue()


def zip_bomb() -> bytes:
    """A DOCX-looking zip whose document inflates a thousandfold: 64 MiB of zeros in 64 KB."""
    out = io.BytesIO()
    with zipfile.ZipFile(out, "w", zipfile.ZIP_DEFLATED, compresslevel=9) as zf:
        zf.writestr("[Content_Types].xml", _TYPES)
        with zf.open("word/document.xml", "w", force_zip64=True) as f:
            block = b"\0" * (1 << 20)
            for _ in range(64):
                f.write(block)
    return out.getvalue()


def billion_laughs() -> bytes:
    """A DOCX whose document.xml expands ten entities ten times each, nine deep."""
    ents = ['<!ENTITY lol0 "lol">'] + [
        f'<!ENTITY lol{i} "{f"&lol{i - 1};" * 10}">' for i in range(1, 10)
    ]
    xml = (
        '<?xml version="1.0"?>\n<!DOCTYPE w:document [\n'
        + "\n".join(ents)
        + ']>\n<w:document xmlns:w="http://schemas.openxmlformats.org/wordprocessingml/2006/main">'
        "<w:body><w:p><w:r><w:t>&lol9;</w:t></w:r></w:p></w:body></w:document>"
    )
    good = docx(1)
    out = io.BytesIO()
    with zipfile.ZipFile(io.BytesIO(good)) as src, zipfile.ZipFile(out, "w") as dst:
        for info in src.infolist():
            data = xml.encode() if info.filename == "word/document.xml" else src.read(info)
            dst.writestr(info.filename, data)
    return out.getvalue()


_TYPES = (
    '<?xml version="1.0"?><Types xmlns="http://schemas.openxmlformats.org/package/2006/'
    'content-types"><Override PartName="/word/document.xml" ContentType="application/'
    'vnd.openxmlformats-officedocument.wordprocessingml.document.main+xml"/></Types>'
)
