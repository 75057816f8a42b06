"""Office files and e-books: which format a body is, by its media type, its signature and, for
a zip container, its manifest.

A zip is only called a document when its manifest says which: the `mimetype` entry of ODF and
EPUB, or the main part named in OOXML's `[Content_Types].xml` (each read with a small bound;
`zipfile` reads the central directory, never the other entries). A `.docx` served
as `application/octet-stream` is a DOCX; a plain zip is nothing sift reads. The conversion
itself runs in a child (`sift.documents.office`), never here.
"""

from __future__ import annotations

import contextlib
import io
from typing import TYPE_CHECKING, Literal

if TYPE_CHECKING:
    import zipfile

Format = Literal["docx", "pptx", "xlsx", "odt", "ods", "odp", "rtf", "epub", "csv", "tsv"]
FORMATS: tuple[Format, ...] = (
    "docx", "pptx", "xlsx", "odt", "ods", "odp", "rtf", "epub", "csv", "tsv",
)  # fmt: skip

_OOXML = "application/vnd.openxmlformats-officedocument."
_ODF = "application/vnd.oasis.opendocument."
# Media types (and the OOXML main parts' content types, which `[Content_Types].xml` names).
MEDIA_TYPES: dict[str, Format] = {
    f"{_OOXML}wordprocessingml.document": "docx",
    f"{_OOXML}presentationml.presentation": "pptx",
    f"{_OOXML}spreadsheetml.sheet": "xlsx",
    f"{_ODF}text": "odt",
    f"{_ODF}spreadsheet": "ods",
    f"{_ODF}presentation": "odp",
    "application/epub+zip": "epub",
    "application/rtf": "rtf",
    "text/rtf": "rtf",
    "text/csv": "csv",
    "text/tab-separated-values": "tsv",
}
# The main part of each OOXML package, as `[Content_Types].xml` names it (macro-enabled and
# template variants read the same).
_MAIN_PARTS: tuple[tuple[str, Format], ...] = (
    ("wordprocessingml.document.main+xml", "docx"),
    ("wordprocessingml.template.main+xml", "docx"),
    ("ms-word.document.macroenabled.main+xml", "docx"),
    ("presentationml.presentation.main+xml", "pptx"),
    ("presentationml.slideshow.main+xml", "pptx"),
    ("ms-powerpoint.presentation.macroenabled.main+xml", "pptx"),
    ("spreadsheetml.sheet.main+xml", "xlsx"),
    ("spreadsheetml.template.main+xml", "xlsx"),
    ("ms-excel.sheet.macroenabled.main+xml", "xlsx"),
)
ZIP_MAGIC = b"PK\x03\x04"
RTF_MAGIC = b"{\\rtf"
_MANIFEST_CAP = 256 * 1024  # `[Content_Types].xml` is a few KB; more is not a document


def by_media_type(media_type: str) -> Format | None:
    return MEDIA_TYPES.get(media_type)


def sniff(body: bytes) -> Format | None:
    """The format the bytes say (signature, then the zip's manifest), or None."""
    if body.startswith(RTF_MAGIC):
        return "rtf"
    if not body.startswith(ZIP_MAGIC):
        return None
    import zipfile  # late: only a zip's bytes need it (`sift extract` starts without it)

    broken = (zipfile.BadZipFile, OSError, KeyError, ValueError, RuntimeError, EOFError)
    with contextlib.suppress(*broken), zipfile.ZipFile(io.BytesIO(body)) as zf:
        names = set(zf.namelist())
        if "mimetype" in names:  # ODF and EPUB: the media type itself
            return MEDIA_TYPES.get(_small(zf, "mimetype").strip())
        if "[Content_Types].xml" in names:  # OOXML: the main part's content type
            manifest = _small(zf, "[Content_Types].xml").lower()
            return next((fmt for part, fmt in _MAIN_PARTS if part in manifest), None)
    return None


def _small(zf: zipfile.ZipFile, name: str) -> str:
    """A manifest entry's text; one over the bound is no manifest."""
    info = zf.getinfo(name)
    if info.file_size > _MANIFEST_CAP:
        return ""
    with zf.open(info) as f:
        return f.read(_MANIFEST_CAP).decode("utf-8", "replace")
