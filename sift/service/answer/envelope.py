"""The answer around a rendered text, built once (a `core.envelope.Envelope`) from what
everything that adds to it found first (the text within its budget, the pages shown, the
digest, the change since `if_none_match`), and its size bound: the part of rendering that
needs no actor, shared by the pipeline (`render.py`) and the cached `sift extract`
(`cached.py`), so both answer the same bytes."""

from __future__ import annotations

import re
from typing import TYPE_CHECKING

import msgspec

from sift.clean import injection_scan
from sift.clean.kinds import OFFICE
from sift.core.envelope import DigestFacts, Envelope, PagesFacts, Stated
from sift.core.errors import BadRequest
from sift.core.fence import one_line
from sift.documents.map import outline_entries
from sift.documents.pages import UNITS, Rendered, warning_note
from sift.documents.pdf import scans
from sift.documents.render import header, iso
from sift.service.answer.usage import usage

if TYPE_CHECKING:
    from sift.clean.injection_scan import Found
    from sift.core.request import FetchParams
    from sift.core.types import Content
    from sift.documents.pages import PagedText
    from sift.service.answer.digest import DigestAnswer
    from sift.service.document import Change, Document


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


class Framed(msgspec.Struct, frozen=True):
    """The frame of an answer's text: the cap, the context header, the room for the text."""

    cap: int
    head: str
    room: int


class Shown(msgspec.Struct, frozen=True):
    """A text that is pages, a map or grep hits: its rendering, and the pages it came from."""

    rendered: Rendered
    paged: PagedText


class Text(msgspec.Struct, frozen=True):
    """The answer's text as the caller reads it, and where a cut one goes on."""

    content: str
    truncated: bool
    next: int | str | None
    tokens: int


# compiled on first use (`re` keeps them): only a text that opens with a heading asks
_WORD = r"\w+"
_SITE_NAME = r"\s[|\u2013\u2014\u00b7\u2022-]\s|:\s"  # "Page | Site", "Page – Site"


class About(msgspec.Struct, frozen=True):
    """What the answer says beside its text: the cap its outline is cut to, the `[fetch]
    robots` mode (what `usage` says of robots.txt), the pages `shown`, the digest, and how
    it compares with the version `if_none_match` named."""

    cap: int
    robots: str = "ignore"
    shown: Shown | None = None
    digested: DigestAnswer | None = None
    change: Change | None = None
    found: Found | None = None  # what addresses an AI reader or is invisible


def frame(out_cap: int, p: FetchParams, doc: Document) -> Framed:
    """The frame of an answer, after the checks every mode shares (a 400 for `pages`/`grep`
    on a document without pages, `raw` on a PDF)."""
    c = doc.content
    cap = min(out_cap, p.max_chars or out_cap)
    pages = doc.pages.size if doc.pages is not None else None
    unit = UNITS[doc.pages.kind][0] if doc.pages is not None else "page"
    # a continuation (`offset`) goes on from a text the reader has the header of
    head = (
        header(c.title, c.final_url, c.fetched_at, pages, unit)
        if p.context and not p.offset
        else ""
    )
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
    return Framed(cap, head, room)


def compose(p: FetchParams, doc: Document, framed: Framed, text: str) -> str:
    """The answer's content: `text` under its header (and the notice of a page that is not
    the content) within the cap."""
    notice = not_content_notice(doc.content, doc.status, doc.reason)
    head, room = framed.head, framed.room
    if head and repeats_title(text, doc.content.title):  # the title once: the header's
        text = text.split("\n", 1)[1].lstrip("\n") if "\n" in text else ""
    content = (f"{notice}\n\n" if notice else "") + (head + text)[: len(head) + room]
    if not p.max_chars:
        content = content[: framed.cap]  # the whole answer within the output cap
    return content


def _words(text: str) -> list[str]:
    return re.findall(_WORD, text.lower())


def repeats_title(text: str, title: str) -> bool:
    """Whether `text` opens with a heading that says `title`, or its part before a site's
    name ("Page | Site"), words compared: the context header above it says it already."""
    first = text.split("\n", 1)[0]
    if not title or not first.startswith("#"):
        return False
    heading = _words(first.lstrip("#"))
    return bool(heading) and heading in (_words(title), _words(re.split(_SITE_NAME, title)[0]))


def envelope(p: FetchParams, doc: Document, text: Text, about: About) -> Envelope:
    """The answer: `text` and the facts about it, built once. An answer `unchanged` since
    the version `if_none_match` named has no text, nor the fields that describe it."""
    c = doc.content
    same = about.change is not None and about.change.unchanged
    kept = _described(doc, text, about, keep=not same)
    hint = "pages" if c.hint is None and about.shown and about.shown.rendered.map else c.hint
    return Envelope(
        success=True,
        url=p.url,
        final_url=c.final_url,
        status=doc.status,
        kind=c.kind,
        content_type=c.content_type,
        title=c.title[:TITLE_CAP],
        content="" if same else text.content,
        chars=0 if same else len(text.content),
        truncated=text.truncated and not same,
        cached=doc.cached,
        stale=doc.stale,
        fetched_at=iso(c.fetched_at),
        hint=None if same and hint == "pages" else hint,
        page=c.page,
        hidden_removed=c.hidden_removed,
        content_hash=c.content_hash,
        usage=usage(c.facts, about.robots),
        pdf=kept.pdf,
        parts=_pages_facts(about, "parts", c.kind),  # an unchanged answer keeps it, as ever
        sections=kept.sections,
        ocr_pages=_ocr_pages(about.shown),
        source=c.facts.source,
        metadata=msgspec.convert(c.facts.meta, Stated) if c.facts.meta else None,
        rendered=doc.rendered,
        screenshot=kept.screenshot,
        extraction="fallback" if c.fallback and not same else None,
        coverage=None if same else c.coverage,
        digest=kept.digest,
        warning=warning_line(doc, about),
        injection=tuple(about.found.kept) if about.found is not None else (),
        next=kept.next,
        tokens=0 if same else text.tokens,  # the tokens of the content it carries
        unchanged=None if about.change is None else about.change.unchanged,
        changes=None if about.change is None else about.change.diff,
    )


class _Described(msgspec.Struct, frozen=True):
    """The fields that describe an answer's text (none in an unchanged answer)."""

    pdf: PagesFacts | None = None
    sections: PagesFacts | None = None
    screenshot: str | None = None
    digest: DigestFacts | None = None
    next: int | str | None = None


def _described(doc: Document, text: Text, about: About, *, keep: bool) -> _Described:
    if not keep:
        return _Described()
    kind = doc.content.kind
    shot = doc.screenshot
    return _Described(
        pdf=_pages_facts(about, "pdf", kind),
        sections=_pages_facts(about, "sections", kind),
        screenshot=f"data:image/png;base64,{shot}" if shot is not None else None,
        digest=about.digested.facts() if about.digested is not None else None,
        next=text.next,
    )


def warning_line(doc: Document, about: About) -> str | None:
    """The answer's `warning`: its warnings on one line (as `/r/` and MCP show it)."""
    return one_line("; ".join(_warnings(doc, about))) or None


def _warnings(doc: Document, about: About) -> list[str]:
    """The answer's warnings: the notice of a page that is not the content, the document's,
    the pages', the extraction's, the digest's."""
    c = doc.content
    notice = not_content_notice(c, doc.status, doc.reason)
    note = _pages_note(about.shown)
    said = [w for w in (notice, doc.warning, note, c.warning) if w]
    if c.fallback:  # absent: the main content, as extracted
        said.append("main content not found; this is the page's full text or description")
    if c.coverage is not None:
        said.append(f"the main content keeps {c.coverage:.0%} of the page's article text")
    if about.digested is not None and about.digested.warning:
        said.append(about.digested.warning)
    if about.found is not None:  # an HTML page's own warning names its instructions already
        flagged = c.warning is not None and "addresses an AI reader" in c.warning
        found = injection_scan.warning(about.found, said_instruction=flagged)
        said += [found] if found else []
    return said


def _pages_facts(about: About, name: str, kind: str) -> PagesFacts | None:
    """The pages' facts under `name` when the text is pages, a map or grep hits of a document
    of that kind: `pdf` (a PDF, an image), `parts` (an office file, with their `unit`) or
    `sections` (a long page)."""
    if about.shown is None:
        return None
    mine = "pdf" if kind in ("pdf", "image") else "parts" if kind in OFFICE else "sections"
    if mine != name:
        return None
    paged, shown = about.shown.paged, about.shown.rendered
    unit = UNITS[paged.kind][0] if name == "parts" else None
    return _facts_of(paged, shown, about.cap, unit)


def _ocr_pages(shown: Shown | None) -> tuple[int, ...]:
    """The pages of the text that were read by OCR."""
    if shown is None:
        return ()
    read = scans.ocr_pages(shown.paged)
    returned = shown.rendered.returned
    if read and returned:
        read = [n for n in read if returned[0] <= n <= returned[1]]
    return tuple(read)


def _pages_note(shown: Shown | None) -> str | None:
    """The note on the pages returned, if any."""
    if shown is None:
        return None
    rendered = shown.rendered
    if rendered.note is None and rendered.returned:
        a, b = rendered.returned
        return warning_note(shown.paged, range(a, b + 1))
    return rendered.note


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


def _facts_of(pages: PagedText, shown: Rendered, cap: int, unit: str | None) -> PagesFacts:
    """The `pdf` / `sections` / `parts` object. Its outline is cut to `outline_budget(cap)`
    (see `answer_bound`); `outline_more` says how many entries were left out."""
    outline, more = outline_entries(pages.outline, outline_budget(cap))
    note = f"{more} more outline entries not listed; find a part with grep, or read it with pages"
    return PagesFacts(
        pages=pages.size,
        title=pages.title[:TITLE_CAP],
        outline=tuple(outline),
        returned=shown.returned or None,
        map=shown.map,
        grep_hits=shown.grep_hits,
        outline_more=more,
        outline_note=note if more else None,
        unit=unit,
    )
