"""`python -m sift.documents.office.child --format F`: an office file or e-book read on stdin,
its parts written as the PDF child's JSON Lines (`sift.documents.wire`) on stdout.

The parsers here meet files from the internet, so they run as the PDF child does: in a fresh
process the parent kills at a deadline, under RLIMIT_AS, with an empty environment; this
module reads no environment variable and opens no network connection. A zip container passes
`guard.check_zip` (bounded entries and sizes, no XML entity declarations) before any library
opens it.

Started with `--spare` alone, the child imports the readers first and reads its arguments from
stdin (a JSON line before the file), as the PDF child's spares do.

Output: one `{"meta": …}` line (parts, title, outline, unit) then one `{"page": n, "text": …}`
line per part. Exit codes: 0 ok, 4 unreadable, 5 refused (`refused: <why>` on stderr).
"""

from __future__ import annotations

import argparse
import logging
import os
import re
import sys
import warnings
import zipfile
from collections.abc import Callable

from sift.core import childproc
from sift.core.types import OutlineItem
from sift.documents import wire
from sift.documents.office import guard, odf, ooxml, other
from sift.documents.office.markdown import Converted
from sift.documents.pages import OUTLINE_TITLE_CAP
from sift.documents.sections import html_document

MAX_INPUT = 200 * 1024**2
ZIPPED = frozenset({"docx", "pptx", "xlsx", "odt", "ods", "odp", "epub"})
CONVERTERS: dict[str, Callable[[bytes], Converted]] = {
    "docx": ooxml.docx,
    "pptx": ooxml.pptx,
    "xlsx": ooxml.xlsx,
    "odt": odf.odt,
    "ods": odf.ods,
    "odp": odf.odp,
    "epub": other.epub,
    "rtf": other.rtf,
    "csv": lambda data: other.delimited(data, ","),
    "tsv": lambda data: other.delimited(data, "\t"),
}
# Control characters but newline and tab never reach an answer (as for PDF pages).
_CONTROL = re.compile(r"[\x00-\x08\x0b-\x1f\x7f]")


def main(argv: list[str] | None = None) -> int:
    argv = childproc.spare_argv(argv, _prepare)
    if argv is None:
        return wire.EXIT_OK  # the parent went away before it needed this spare
    p = argparse.ArgumentParser(prog="sift officetext", description="internal: office → JSONL")
    p.add_argument("--format", choices=sorted(CONVERTERS), required=True)
    p.add_argument("--memory", type=int, default=2 * 1024**3, help="RLIMIT_AS in bytes, 0 = none")
    args = p.parse_args(argv)
    childproc.limit_memory(args.memory)
    data = sys.stdin.buffer.read(MAX_INPUT + 1)
    if len(data) > MAX_INPUT:
        return wire.EXIT_UNREADABLE
    logging.disable(logging.CRITICAL)  # libraries must not write text to stderr
    warnings.simplefilter("ignore")
    out = childproc.claim_stdout()
    try:
        converted = convert(args.format, data)
    except guard.Refused as exc:
        sys.stderr.write(f"\nrefused: {exc}\n")
        return wire.EXIT_REFUSED
    except MemoryError:
        return wire.EXIT_MEMORY
    except Exception:  # whatever a parser raises on a broken file
        return wire.EXIT_UNREADABLE
    meta, texts = document(converted)
    childproc.send(out, wire.MetaLine(meta))
    said = [p.warning for p in converted.parts] if converted.prose is None else []
    for n, text in enumerate(texts, start=1):
        warning = said[n - 1] if n <= len(said) else None
        childproc.send(out, wire.PageLine(n, text=text, warning=warning))
    return wire.EXIT_OK


def _prepare() -> None:
    """A spare (`sift.documents.children.Spares`) imports every reader first (most of a small
    file's time)."""
    import docx  # noqa: F401
    import ebooklib.epub  # noqa: F401
    import markdownify  # noqa: F401
    import odf.opendocument  # noqa: F401
    import openpyxl  # noqa: F401
    import pptx  # noqa: F401


def convert(fmt: str, data: bytes) -> Converted:
    """The document's parts, once a zip container has passed the guard."""
    if fmt in ZIPPED:
        try:
            guard.check_zip(data).close()
        except zipfile.BadZipFile:
            raise ValueError("not a zip file") from None
    return CONVERTERS[fmt](data)


def document(c: Converted) -> tuple[wire.Meta, list[str]]:
    """The meta line and the parts' texts: prose split into sections at its headings."""
    if c.prose is not None:
        paged = html_document(_CONTROL.sub("", c.prose), title=c.title)
        meta = wire.Meta(pages=paged.count, title=c.title, outline=paged.outline, unit=c.unit)
        return meta, list(paged.pages)
    outline = tuple(
        OutlineItem(" ".join(p.title.split())[:OUTLINE_TITLE_CAP], n, p.level)
        for n, p in enumerate(c.parts, start=1)
        if p.title.strip()
    )
    texts = [_CONTROL.sub("", p.text) for p in c.parts] or [""]
    meta = wire.Meta(pages=len(texts), title=c.title, outline=outline, unit=c.unit)
    return meta, texts


if __name__ == "__main__":
    code = main()
    sys.stderr.flush()  # stdout's lines were flushed one by one
    os._exit(code)  # no teardown of the readers' modules: the parent waits for the exit
