"""Rendering a document into the answer: mode, jq, the output cap, the context header, the
envelope. Long documents go through `sift.docs` (maps, pages, grep)."""

from __future__ import annotations

import datetime as dt
from typing import TYPE_CHECKING, Any

from sift import kinds
from sift.clean.protocol import CleanTask
from sift.digest.service import DigestAnswer, digest
from sift.errors import BadRequest

if TYPE_CHECKING:
    from sift.pipeline import Document
    from sift.request import FetchParams
    from sift.services import Services


def iso(ts: float) -> str:
    return dt.datetime.fromtimestamp(ts, dt.UTC).strftime("%Y-%m-%dT%H:%M:%SZ")


def header(title: str, url: str, fetched_at: float, pages: int | None = None) -> str:
    """The short context header: what the reader is reading, from where, and when."""
    lines = [f"# {title}"] if title else []
    extra = f" · {pages} pages" if pages else ""
    lines.append(f"Source: {url} · fetched {iso(fetched_at)}{extra}")
    return "\n".join(lines) + "\n\n"


def cut(text: str, cap: int) -> tuple[str, bool]:
    """`text` within `cap` characters, cut at a line or word boundary, with a note when cut."""
    if len(text) <= cap:
        return text, False
    note = f"\n\n[truncated: {len(text):,} characters in all; ask for less with pages/grep]"
    room = max(0, cap - len(note))
    head = text[:room]
    for sep in ("\n\n", "\n", " "):
        i = head.rfind(sep)
        if i > room * 0.8:
            head = head[:i]
            break
    return (head + note)[:cap], True


async def render(svc: Services, p: FetchParams, doc: Document) -> dict[str, Any]:
    c = doc.content
    cap = min(svc.cfg.out_cap, p.max_chars or svc.cfg.out_cap)
    mode = p.effective_mode
    digested: DigestAnswer | None = None
    if mode == "digest":
        digested = await _digest(svc, p, doc, cap)
        text = digested.answer
    elif mode == "raw":
        body = kinds.decode(c.body or c.text.encode(), c.content_type)
        text = body
    elif p.jq is not None:
        if c.kind != "json":
            raise BadRequest(f"`jq` needs a JSON response; this one is {c.kind}")
        source = c.body if c.body is not None else c.text.encode()
        result = await svc.clean(
            CleanTask(kind="json", body=source, content_type="application/json", url=c.final_url,
                      jq=p.jq)
        )  # fmt: skip
        text = result.text
    else:
        text = c.text
    head = header(c.title, c.final_url, c.fetched_at) if p.context else ""
    content, truncated = cut(text, max(0, cap - len(head)))
    content = (head + content)[:cap]
    env: dict[str, Any] = {
        "success": True,
        "url": p.url,
        "final_url": c.final_url,
        "status": doc.status,
        "kind": c.kind,
        "content_type": c.content_type,
        "title": c.title,
        "content": content,
        "chars": len(content),
        "truncated": truncated,
        "cached": doc.cached,
        "stale": doc.stale,
        "fetched_at": iso(c.fetched_at),
        "hint": c.hint,
    }
    if doc.warning:
        env["warning"] = doc.warning
    if c.fallback:
        env["warning"] = "main content not found; this is the page's full text"
    if digested is not None:
        env["digest"] = digested.envelope()
        if digested.warning:
            env["warning"] = digested.warning
    return env


async def _digest(svc: Services, p: FetchParams, doc: Document, cap: int) -> DigestAnswer:
    """The answer to `p.question`, citing pages; the model's, or extractive without one."""
    c = doc.content
    # TODO(lead): PDFs pass their pages, long HTML its sections (sift.docs); one page for now.
    pages = [c.text]
    return await digest(
        svc, c.caller_class, content_hash=c.content_hash, pages=pages, kind=c.kind,
        title=c.title, question=p.question or "", out_cap=cap,
    )  # fmt: skip
