"""5c. Office files and e-books: sift's conversion (its child, as the service runs it: a spare
started ahead, readers imported, refilled between files) against markitdown called directly
in this process, warm, on the same files (`bench/office.py`: DOCX, PPTX, XLSX, EPUB and CSV
made at bench time, their own text known). One row per format on time (target: sift not
slower), and one on text recall against the document's own words (target: ≥ markitdown's).

markitdown 0.1.9 fails on every DOCX on this stack (its math pre-processing, through
BeautifulSoup 4.15's XML parser, loses the body: "Could not find the body element"), so its
DOCX baseline here skips that step: mammoth and its markdownify, as it converts otherwise.
"""

from __future__ import annotations

import io
import time
from typing import Any

from bench import office
from bench.context import Ctx
from bench.results import Row

NAME = "office"
TITLE = "5c office conversion"
SPARE_READY = 2.0  # seconds between files: a refilled spare imports its readers meanwhile


def _markitdown() -> Any:
    import markitdown.converters._docx_converter as docx_converter
    from markitdown import MarkItDown

    vars(docx_converter)["pre_process_docx"] = lambda docx: docx  # typed or not, as installed
    return MarkItDown()


def run(ctx: Ctx) -> list[Row]:
    from markitdown import StreamInfo

    from sift.documents.children import kill_all
    from sift.documents.office.runner import refill_office, run_office

    md = _markitdown()
    rows: list[Row] = []
    recall_sift, recall_md, detail = [], [], {}
    for fmt, (data, own) in office.documents().items():
        info = StreamInfo(extension=f".{fmt}")
        md.convert_stream(io.BytesIO(data), stream_info=info)  # warm: imports, first use
        ms_sift, ms_md = [], []
        for _ in range(ctx.runs(7, 3)):
            refill_office(1)
            time.sleep(SPARE_READY)
            started = time.perf_counter()
            ex = run_office(data, fmt, spares=1)
            ms_sift.append((time.perf_counter() - started) * 1000)
            started = time.perf_counter()
            theirs = md.convert_stream(io.BytesIO(data), stream_info=info).markdown
            ms_md.append((time.perf_counter() - started) * 1000)
        mine = office.recall(own, "\n".join(ex.texts))
        recall_sift.append(mine)
        recall_md.append(office.recall(own, theirs))
        detail[fmt] = {"sift": round(mine, 4), "markitdown": round(recall_md[-1], 4)}
        ctx.log(f"{fmt}: recall sift {mine:.3f}, markitdown {recall_md[-1]:.3f}")
        rows.append(
            Row(
                f"{TITLE}, {fmt} ({len(data) // 1024} KB)",
                "conversion, ms",
                ms_sift,
                ms_md,
                "markitdown in-process, warm",
                target=("ratio", "<=", 1.0),
                note="sift: its child (spare), as served",
            )
        )
    kill_all()  # the last spare
    rows.append(
        Row(
            TITLE,
            "text recall (docx, pptx, xlsx, epub, csv)",
            recall_sift,
            recall_md,
            "markitdown",
            target=("ratio", ">=", 1.0),
            note="words of the document's own text found in the markdown",
            detail=detail,
        )
    )
    return rows
