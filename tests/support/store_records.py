"""Records as a store keeps them, with defaults a test overrides: a page's content, a PDF, a
batch job and its targets (the store contract and the store's faults both write them)."""

from __future__ import annotations

from typing import Any

from sift.core.types import BatchJob, Content, PdfDoc


def doc(url: str = "http://127.0.0.1/a", cls: str = "fleet", text: str = "hello", **kw):
    fields: dict[str, Any] = dict(
        url=url,
        caller_class=cls,
        final_url=url,
        kind="html",
        content_type="text/html",
        title="T",
        text=text,
        body=b"<p>" + text.encode() + b"</p>",
        hint=None,
        fallback=False,
        etag='"e1"',
        last_modified=None,
        content_hash="h-" + text,
        fetched_at=1000.0,
        coverage=0.25,
        page="content",
        served=None,
        hidden_removed=12,
        warning="text addressed to an AI",
    )
    fields.update(kw)
    return Content(**fields)


def pdf(url: str = "http://127.0.0.1/d.pdf", content_hash: str = "p1") -> PdfDoc:
    return PdfDoc(
        url, "fleet", url, "application/pdf", content_hash, None, "Mon", {"pages": 3}, 1000.0
    )


def job(job_id: str, caller: str = "agent", key: str = "k", now: float = 1000.0, n: int = 3):
    return BatchJob(job_id, caller, "fleet", key, "queued", None, n, 0, now, now, 0)


def targets(n: int = 3):
    return [(f"http://127.0.0.1/{i}", b'{"url": "x"}') for i in range(n)]
