"""The answer's envelope around a rendered text, and its size bound: the part of rendering
that needs no actor, shared by the pipeline (`render.py`) and the cached `sift extract`
(`cached.py`), so both answer the same bytes."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from sift.clean.kinds import OFFICE
from sift.core.errors import BadRequest
from sift.core.fence import one_line
from sift.documents.map import outline_entries
from sift.documents.pages import UNITS, Rendered, warning_note
from sift.documents.pdf import scans
from sift.documents.render import header, iso
from sift.service.answer.usage import usage

if TYPE_CHECKING:
    from sift.core.request import FetchParams
    from sift.core.types import Content
    from sift.documents.pages import PagedText
    from sift.service.document import Document


# An answer's size: `content` is at most the cap; the `pdf`/`sections` outline at most
# `outline_budget(cap)` characters of JSON (entries beyond are counted in `outline_more`);
# titles at most TITLE_CAP characters each. So the JSON of an answer is within
# `answer_bound(cap)` characters plus the two URLs (the asked one and the final one, which the
# caller and the redirects chose).
TITLE_CAP = 1_000
ANSWER_ALLOWANCE = 8_192  # the other fields: names, numbers, hint, warning, digest facts


def outline_budget(cap: int) -> int:
    """A tenth of the cap, and at least 4,000 characters (some 60 entries) for small caps."""
    return max(cap // 10, 4_000)


def answer_bound(cap: int) -> int:
    """The most characters an answer's JSON has for output cap `cap`, URLs aside."""
    return cap + outline_budget(cap) + 2 * TITLE_CAP + ANSWER_ALLOWANCE


def frame(out_cap: int, p: FetchParams, doc: Document) -> tuple[int, str, int]:
    """(cap, context header, room for the text) of an answer, after the checks every mode
    shares (a 400 for `pages`/`grep` on a document without pages, `raw` on a PDF)."""
    c = doc.content
    cap = min(out_cap, p.max_chars or out_cap)
    pages = doc.pages.size if doc.pages is not None else None
    # a continuation (`offset`) goes on from a text the reader has the header of
    head = header(c.title, c.final_url, c.fetched_at, pages) if p.context and not p.offset else ""
    room = max(0, cap - len(head))
    if p.max_chars:  # the caller's cap is on the content; the short header comes on top
        room = min(p.max_chars, max(0, out_cap - len(head)))
    paged_kind = c.kind in ("pdf", "image") or c.kind in OFFICE
    if (p.pages or p.grep) and not paged_kind and c.kind != "html":
        raise BadRequest(
            f"`pages` and `grep` need a PDF, HTML, image or office document; this one is {c.kind}"
        )
    if p.effective_mode == "raw" and paged_kind:
        raise BadRequest(
            f"mode `raw` is for HTML, JSON and text; a {c.kind} document comes back as its text"
        )
    return cap, head, room


def envelope(
    p: FetchParams,
    doc: Document,
    framed: tuple[int, str, int],
    text: str,
    truncated: bool,
    shown: Rendered | None = None,
    paged: PagedText | None = None,
    digested: tuple[dict[str, Any], str | None] | None = None,
    robots: str = "ignore",
) -> dict[str, Any]:
    """The answer: `text` under its header within the cap, and the facts about it. `shown` is
    the rendering of `paged` when the text is pages, a map or grep hits; `digested` the digest's
    envelope and warning; `robots` the `[fetch] robots` mode (what `usage` says of robots.txt)."""
    c = doc.content
    cap, head, room = framed
    notice = not_content_notice(c, doc.status, doc.reason)
    content = (f"{notice}\n\n" if notice else "") + (head + text)[: len(head) + room]
    if not p.max_chars:
        content = content[:cap]  # the whole answer within the output cap
    env: dict[str, Any] = {
        "success": True,
        "url": p.url,
        "final_url": c.final_url,
        "status": doc.status,
        "kind": c.kind,
        "content_type": c.content_type,
        "title": c.title[:TITLE_CAP],
        "content": content,
        "chars": len(content),
        "truncated": truncated,
        "cached": doc.cached,
        "stale": doc.stale,
        "fetched_at": iso(c.fetched_at),
        "hint": c.hint,
        "page": c.page,
        "hidden_removed": c.hidden_removed,
        "content_hash": c.content_hash,  # names this version (`if_none_match`, `sift://doc/…`)
        "usage": usage(c.facts, robots),
    }
    note = _pages(env, c.kind, shown, paged, cap)
    if c.facts.source is not None:
        env["source"] = c.facts.source
    if doc.rendered:
        env["rendered"] = True
    if doc.screenshot is not None:
        env["screenshot"] = f"data:image/png;base64,{doc.screenshot}"
    warnings = [w for w in (notice, doc.warning, note, c.warning) if w] + _extraction(env, c)
    if digested is not None:
        env["digest"], digest_warning = digested
        if digest_warning:
            warnings.append(digest_warning)
    if warnings:
        env["warning"] = one_line("; ".join(warnings))  # a line of its own on /r/ and MCP
    return env


def _pages(
    env: dict[str, Any], kind: str, shown: Rendered | None, paged: PagedText | None, cap: int
) -> str | None:
    """Put the pages' facts (`pdf`, `parts` of an office file with their `unit`, or
    `sections` for a long page) in `env` when the text is pages, a map or grep hits; the note
    on what was returned, if any."""
    if shown is None or paged is None:
        return None
    name = "pdf" if kind in ("pdf", "image") else "parts" if kind in OFFICE else "sections"
    env[name] = _pages_envelope(paged, shown, cap)
    if name == "parts":
        env[name]["unit"] = UNITS[paged.kind][0]
    read = scans.ocr_pages(paged)
    if read and shown.returned:
        read = [n for n in read if shown.returned[0] <= n <= shown.returned[1]]
    if read:
        env["ocr_pages"] = read
    if shown.map and env["hint"] is None:
        env["hint"] = "pages"
    if shown.note is None and shown.returned:
        a, b = shown.returned
        return warning_note(paged, range(a, b + 1))
    return shown.note


def _extraction(env: dict[str, Any], c: Content) -> list[str]:
    """Put how the main content was found in `env` (a fallback, its coverage); the warnings
    that say so."""
    warnings = []
    if c.fallback:  # absent: the main content, as extracted
        env["extraction"] = "fallback"
        warnings.append("main content not found; this is the page's full text or description")
    if c.coverage is not None:
        env["coverage"] = c.coverage
        warnings.append(f"the main content keeps {c.coverage:.0%} of the page's article text")
    return warnings


def not_content_notice(c: Content, status: int, reason: str) -> str | None:
    """One line for a page that is not the content, so an agent that reads only the text is
    told too (`/v2/scrape` puts it atop the markdown). The site's own error page (a 404, a
    500: answered as a page only where Firecrawl's shape wants it) is one too, unless the
    page says more of itself (a bot check answered 403)."""
    if c.page == "content" and status >= 400:
        served = f"an error page (HTTP {f'{status} {reason}'.strip()})"
        return f"[sift: this is not the page's content: the site served {served}]"
    if c.page == "content":
        return None
    what = one_line(c.served or f"a {c.page} page")
    return f"[sift: this is not the page's content: the site served {what} (page: {c.page})]"


def _pages_envelope(pages: PagedText, shown: Rendered, cap: int) -> dict[str, Any]:
    """The `pdf` / `sections` object. Its outline is cut to `outline_budget(cap)` (see
    `answer_bound`); `outline_more` says how many entries were left out."""
    outline, more = outline_entries(pages.outline, outline_budget(cap))
    env: dict[str, Any] = {
        "pages": pages.size,
        "title": pages.title[:TITLE_CAP],
        "outline": [{"title": o.title, "page": o.page, "level": o.level} for o in outline],
        "returned": list(shown.returned) if shown.returned else None,
        "map": shown.map,
        "grep_hits": shown.grep_hits,
    }
    if more:
        env["outline_more"] = more
        env["outline_note"] = (
            f"{more} more outline entries not listed; find a part with grep, or read it with pages"
        )
    return env
