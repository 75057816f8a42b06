"""What an office file must pass before any library opens it: a zip within bounds, and XML
without entity declarations.

These formats are zip files of XML, so two old attacks apply. A zip bomb (a few KB that
inflate to gigabytes, or thousands of entries) is refused from the zip's central directory
alone, before anything is inflated: `zipfile` never inflates an entry past its declared size,
so the declared sizes bound what every library here can read. Entity expansion ("billion
laughs", and external entities that read local files) needs `<!ENTITY` in a document's
prolog, which no office format uses: an XML entry that declares one is refused. The child's
RLIMIT_AS and deadline stay the last bound.
"""

from __future__ import annotations

import codecs
import io
import zipfile

MAX_ENTRIES = 10_000
MAX_TOTAL = 256 * 1024**2  # bytes, all entries inflated
MAX_RATIO = 200  # inflated / compressed, for an entry over RATIO_FLOOR
RATIO_FLOOR = 1024**2
PROLOG = 64 * 1024  # bytes of each XML entry read for entity declarations
_XML_SUFFIXES = (".xml", ".rels", ".xhtml", ".html", ".htm", ".opf", ".ncx", ".svg", ".xht")


class Refused(Exception):
    """The file is refused before conversion; the message says why, for the caller."""


def check_zip(data: bytes) -> zipfile.ZipFile:
    """The archive, opened, once its entries are within bounds and its XML declares no entity.

    Raises:
        Refused: a zip bomb (entries, total size, ratio) or an entity declaration.
        zipfile.BadZipFile: not a zip at all.
    """
    zf = zipfile.ZipFile(io.BytesIO(data))
    infos = zf.infolist()
    if len(infos) > MAX_ENTRIES:
        raise Refused(f"zip bomb: {len(infos):,} entries (at most {MAX_ENTRIES:,})")
    total = sum(i.file_size for i in infos)
    if total > MAX_TOTAL:
        raise Refused(
            f"zip bomb: {total / 1024**2:,.0f} MiB uncompressed "
            f"(at most {MAX_TOTAL // 1024**2} MiB)"
        )
    for info in infos:
        if info.file_size > RATIO_FLOOR and info.file_size > MAX_RATIO * max(1, info.compress_size):
            raise Refused(
                f"zip bomb: {info.filename[:80]!r} inflates "
                f"{info.file_size // max(1, info.compress_size):,}× (at most {MAX_RATIO}×)"
            )
    for info in infos:
        if info.filename.lower().endswith(_XML_SUFFIXES) or info.filename == "content.xml":
            with zf.open(info) as f:
                check_xml(f.read(PROLOG), info.filename)
    return zf


def check_xml(head: bytes, name: str = "the document") -> None:
    """Refuse XML whose first bytes declare an entity (in UTF-8 or UTF-16)."""
    text = head
    if head.startswith((codecs.BOM_UTF16_LE, codecs.BOM_UTF16_BE)):
        text = head.decode("utf-16", "replace").encode("utf-8", "replace")
    elif head[:2] in (b"<\x00", b"\x00<"):  # UTF-16 without its mark
        codec = "utf-16-le" if head[:1] == b"<" else "utf-16-be"
        text = head.decode(codec, "replace").encode("utf-8", "replace")
    if b"<!ENTITY" in text:
        raise Refused(f"XML entity declarations (entity expansion) in {name[:80]!r}")
