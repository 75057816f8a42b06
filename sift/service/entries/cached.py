"""`sift extract` of a PDF already in the page cache, answered without starting the actors:
the file's hash (remembered by its `stat` while it is unchanged: `store.stamps`), one read of
`cache.db`, the same rendering and envelope as the pipeline (`pdf.local_pdf` → `recall` →
`render`). Imports only what that needs, so a chunk read costs little more than the
interpreter's start. Anything else is None: the caller runs the full
path, which answers it (and repairs, migrates or extracts) as always."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import msgspec

from sift.core.config import Config
from sift.core.envelope import Envelope
from sift.core.errors import SiftError
from sift.core.request import FetchParams
from sift.documents.pages import from_rows, page_spec
from sift.documents.pdf import scans
from sift.documents.render import render as render_text
from sift.service.answer import findings
from sift.service.answer.budget import next_of
from sift.service.answer.envelope import (
    About,
    Shown,
    Text,
    compose,
    envelope,
    frame,
    warning_line,
)
from sift.service.document import Document
from sift.service.params import parse_params
from sift.service.steps import local
from sift.service.steps.content import content
from sift.store.peek import cached_pdf


class Printed(msgspec.Struct, frozen=True):
    """What `sift extract` prints of an answer without `--json`: its text, its warning and
    where a cut one goes on. No envelope, so no `tokens`: none is printed, and loading the
    tokenizer to count them costs more than the rest of the command."""

    content: str
    warning: str | None
    next: int | str | None
    unchanged: bool | None = None
    changes: str | None = None
    content_hash: str = ""


def extract(
    cfg: Config,
    path: Path,
    name: str,
    body: dict[str, Any],
    whole: bool = True,
    data: bytes | None = None,
) -> tuple[int, Envelope | Printed | dict[str, Any]] | None:
    """(status, envelope or error body) of `sift extract` on the file at `path` (absolute),
    named `name`, with request `body`, when its pages are in the SQLite page cache; else
    None. Its bytes are read only when its hash is not remembered, unless given (`data`: a
    pipe's). Not asked for the `whole` envelope (a caller that prints the text alone), what
    it prints (`Printed`). Raises OSError when the file cannot be read."""
    content_type = local.content_type(name)
    if content_type != "application/pdf" or not cfg.store.url.startswith("sqlite:"):
        return None  # sniffed types and PostgreSQL: the full path
    try:
        p: FetchParams | None = parse_params(body)
        refused = None
    except SiftError as exc:
        p, refused = None, exc
    if p is not None and (p.effective_mode != "clean" or p.offset or p.max_tokens):
        return None  # a digest, a budget, a continuation: the full path
    # a page range reads only its own pages; grep and the map read them all
    window = page_spec(p.pages) if p is not None and p.pages and not p.grep else None
    digest = local.content_hash(data) if data is not None else local.file_hash(cfg.state_path, path)
    found = cached_pdf(cfg.state_path, local.pdf_key(digest), local.LOCAL, digest, window)
    if found is None:
        return None
    if p is None:  # refused, as the full path refuses it before any work
        assert refused is not None
        return refused.status, refused.to_body()
    meta, rows, count = found
    title = meta.get("title", "")
    base = content(p.url, local.LOCAL, p.url, "pdf", content_type, title=title, content_hash=digest)
    paged = from_rows(meta, rows, count)
    if scans.wanted(paged, p.pages, cfg.ocr.lead_pages):
        return None  # image-only pages to OCR first: the full path
    if paged.count <= 1 and not (p.pages or p.grep):
        return None  # one page: its text, cut by the full path's window
    doc = Document(base, cached=True, pages=paged)
    try:
        framed = frame(cfg.out_cap, p, doc)
        shown = render_text(paged, out_cap=framed.room, pages=p.pages, grep=p.grep, url=p.url)
    except SiftError as exc:
        return exc.status, exc.to_body()
    said = compose(p, doc, framed, shown.content)
    scanned = findings.scan(findings.page_parts(Shown(shown, paged)))
    about = About(framed.cap, shown=Shown(shown, paged), found=scanned)
    if not whole:
        return 200, Printed(said, warning_line(doc, about), next_of(shown.next))
    from sift.documents import tokens
    from sift.service.answer.citations import with_citations

    cut = shown.truncated or shown.map
    text = Text(said, cut, next_of(shown.next), tokens.count(said))
    answer = envelope(p, doc, text, about)
    return 200, with_citations(p, doc, answer, paged)  # as the full path's `render`
