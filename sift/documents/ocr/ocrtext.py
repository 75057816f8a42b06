"""`python -m sift.documents.ocr.ocrtext`: OCR pages of a PDF, or frames of an image, read on stdin.

The child of an OCR job, under the rules of `sift pdftext`: a fresh process in its own session
(the parent kills the whole group at its deadline, Tesseract included), RLIMIT_AS (inherited by
Tesseract), an empty environment, no core dumps. It renders each asked PDF page with pdfium
(grayscale, at `--dpi`) or decodes each asked frame with Pillow, and hands the image to the
system's Tesseract (`--tesseract`), one process a page, on its stdin as PGM (no encoding cost),
with one OpenMP thread: a job's pages are shared by several children, one a core, which
Tesseract's own threads would only slow down.

Output, as `sift pdftext`'s (`wire`): one `{"meta": {"pages": n}}` line (pages, or frames),
then one `{"page": n, "text"|"error": …}` line per asked page. Exit codes: 0 ok, 3 encrypted,
4 unreadable.
"""

from __future__ import annotations

import argparse
import io
import os
import subprocess
import sys
import warnings
from collections.abc import Iterator
from typing import Any

from sift.core import childproc
from sift.documents import wire
from sift.documents.pdf import plausible
from sift.documents.pdf.pdftext import MAX_INPUT, _limit

MAX_PIXELS = 80_000_000  # a larger image (a decompression bomb, or a poster) is refused
TESSERACT_ERR = 2000  # characters of Tesseract's complaint kept in a page's error


def _parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(prog="ocrtext", description="internal: OCR → JSON Lines")
    p.add_argument("--kind", choices=("pdf", "image"), default="pdf")
    p.add_argument("--pages", default="", help="comma-separated page (frame) numbers, 1-based")
    p.add_argument("--languages", default="eng")
    p.add_argument("--dpi", type=int, default=200)
    p.add_argument("--tesseract", default="/usr/bin/tesseract")
    p.add_argument("--memory", type=int, default=2 * 1024**3)
    return p


def main(argv: list[str] | None = None) -> int:
    args = _parser().parse_args(sys.argv[1:] if argv is None else argv)
    _limit(args.memory)
    data = sys.stdin.buffer.read(MAX_INPUT + 1)
    if len(data) > MAX_INPUT:
        return wire.EXIT_UNREADABLE
    out = childproc.claim_stdout()
    numbers = [int(n) for n in args.pages.split(",") if n.strip()]
    try:
        opened = _open_pdf(data, args.dpi) if args.kind == "pdf" else _open_image(data)
    except _Encrypted:
        return wire.EXIT_ENCRYPTED
    except Exception:
        return wire.EXIT_UNREADABLE
    count, images = opened
    childproc.send(out, wire.MetaLine(meta=wire.Meta(pages=count)))
    for number, image in images(n for n in numbers if 1 <= n <= count):
        childproc.send(out, _recognise(number, image, args))
    return wire.EXIT_OK


class _Encrypted(Exception):
    pass


Images = Iterator[tuple[int, bytes | Exception]]


def _open_pdf(data: bytes, dpi: int) -> tuple[int, Any]:
    """The page count, and the PGM of each asked page rendered in grayscale at `dpi`."""
    import pypdfium2 as pdfium
    import pypdfium2.raw as raw

    try:
        doc = pdfium.PdfDocument(data)
    except pdfium.PdfiumError as exc:
        if getattr(exc, "err_code", None) == raw.FPDF_ERR_PASSWORD:
            raise _Encrypted from None
        raise

    def images(numbers: Iterator[int]) -> Images:
        for n in numbers:
            try:
                bitmap = doc[n - 1].render(scale=dpi / 72, grayscale=True)
                yield n, _pgm(bitmap.to_pil())
            except Exception as exc:  # one bad page must not cost the others
                yield n, exc

    return len(doc), images


def _open_image(data: bytes) -> tuple[int, Any]:
    """The frame count, and the PGM of each asked frame (a multi-page TIFF's pages)."""
    from PIL import Image

    Image.MAX_IMAGE_PIXELS = MAX_PIXELS // 2  # Pillow refuses twice this: a bomb is an error
    warnings.simplefilter("error", Image.DecompressionBombWarning)
    img = Image.open(io.BytesIO(data))
    count = int(getattr(img, "n_frames", 1))

    def images(numbers: Iterator[int]) -> Images:
        for n in numbers:
            try:
                img.seek(n - 1)
                yield n, _pgm(img.convert("L"))
            except Exception as exc:
                yield n, exc

    return count, images


def _pgm(image: Any) -> bytes:
    buf = io.BytesIO()
    image.convert("L").save(buf, format="PPM")
    return buf.getvalue()


def _recognise(number: int, image: bytes | Exception, args: argparse.Namespace) -> wire.PageLine:
    """Page `number`'s text from Tesseract (a process of its own, in this child's group)."""
    if isinstance(image, Exception):
        return wire.PageLine(page=number, error=f"{type(image).__name__}: {str(image)[:200]}")
    argv = [args.tesseract, "stdin", "stdout", "-l", args.languages]
    try:
        done = subprocess.run(
            argv, input=image, capture_output=True, env={"OMP_THREAD_LIMIT": "1"}, check=False
        )
    except OSError as exc:
        return wire.PageLine(page=number, error=f"tesseract: {exc.strerror}")
    if done.returncode != 0 or b"Failed loading language" in done.stderr:  # `eng+xyz` reads eng
        why = done.stderr.decode("utf-8", "replace").strip()[-TESSERACT_ERR:]
        return wire.PageLine(page=number, error=f"tesseract: {why or done.returncode}")
    text = done.stdout.decode("utf-8", "replace").replace("\x0c", "")
    return wire.PageLine(page=number, text=plausible.clean(text).strip("\n"))


if __name__ == "__main__":
    code = main()
    sys.stderr.flush()
    os._exit(code)  # every line is written and flushed: skip the interpreter's teardown
