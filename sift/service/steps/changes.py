"""Has it changed? An answer compared with an earlier version of the document.

`if_none_match` (`/v1/fetch`, MCP `fetch`, the CLI) names the `content_hash` of an earlier
answer: the same document answers `unchanged: true` with no content; a changed one answers in
full with `unchanged: false` and, while that version is still the cached copy a live fetch
replaced, `changes`: a unified diff of its text against the new text. Firecrawl's
`changeTracking` format is the same comparison with the cached copy before this fetch
(`tracking`). A request with the caller's own headers reads no cached copy, so it has nothing
to compare with: its document is `new`, and nothing of it is kept for a later comparison.
"""

from __future__ import annotations

import difflib
import re
from typing import TYPE_CHECKING, Any

from sift.core.fence import neutralise
from sift.documents.render import iso
from sift.service.document import Change

if TYPE_CHECKING:
    from sift.core.request import FetchParams
    from sift.core.types import Content
    from sift.service.document import Document
    from sift.service.parts.runtime import Runtime

CONTEXT_LINES = 3
_HUNK = re.compile(r"@@ -(\d+)(?:,(\d+))? \+(\d+)(?:,(\d+))? @@")


def diff_budget(cap: int) -> int:
    """The most characters of `changes`: a quarter of the cap, at least 4,000."""
    return max(cap // 4, 4_000)


def unified(old: str, new: str, old_name: str, new_name: str, budget: int) -> str:
    """A unified diff of two texts by line, cut at `budget` characters (saying so)."""
    lines = difflib.unified_diff(
        neutralise(old).split("\n"),
        neutralise(new).split("\n"),
        old_name,
        new_name,
        n=CONTEXT_LINES,
        lineterm="",
    )
    text = "\n".join(lines)
    if len(text) > budget:
        cut = text.rfind("\n", 0, budget)
        text = text[: cut if cut > 0 else budget] + f"\n[diff cut at {budget} characters]"
    return text


def _comparable(c: Content | None) -> bool:
    """A version whose text can be compared (a PDF's text is in its pages, not at hand)."""
    return c is not None and c.kind != "pdf"


async def compare(svc: Runtime, p: FetchParams, doc: Document) -> Change | None:
    """For a request with `if_none_match`: the document unchanged since that version, or
    changed, with its diff when that version is still cached; None without one."""
    if p.if_none_match is None:
        return None
    c, before = doc.content, doc.previous
    if c.content_hash == p.if_none_match:
        return Change(unchanged=True)
    if before is None or before.content_hash != p.if_none_match or not _comparable(c):
        return Change(unchanged=False)
    budget = diff_budget(min(svc.cfg.out_cap, p.max_chars or svc.cfg.out_cap))
    diff = await svc.cpu.compute(
        unified,
        before.text,
        c.text,
        f"{before.content_hash} ({iso(before.fetched_at)})",
        f"{c.content_hash} ({iso(c.fetched_at)})",
        budget,
        cost=len(before.text) + len(c.text),
    )
    return Change(unchanged=False, diff=diff)


async def tracking(svc: Runtime, doc: Document, git_diff: bool, cap: int) -> dict[str, Any]:
    """Firecrawl's `changeTracking` of a document against the copy cached before this fetch:
    `changeStatus` new / same / changed / removed, `previousScrapeAt`, `visibility` (always
    `visible`: sift keeps no history of where a URL was found), and in `git-diff` mode the
    diff as text and as parse-diff's JSON."""
    c, before = doc.content, doc.previous
    if before is None:
        return {"previousScrapeAt": None, "changeStatus": "new", "visibility": "visible"}
    out: dict[str, Any] = {"previousScrapeAt": iso(before.fetched_at), "visibility": "visible"}
    if doc.status in (404, 410):
        out["changeStatus"] = "removed"
    elif before.content_hash == c.content_hash:
        out["changeStatus"] = "same"
    else:
        out["changeStatus"] = "changed"
        if git_diff and _comparable(c) and _comparable(before):
            text = await svc.cpu.compute(
                unified,
                before.text,
                c.text,
                "previous",
                "current",
                diff_budget(cap),
                cost=len(before.text) + len(c.text),
            )
            out["diff"] = {"text": text, "json": parse_diff(text)}
    return out


def parse_diff(text: str) -> dict[str, Any]:
    """A unified diff as the `parse-diff` package reads it (Firecrawl's `diff.json`): one
    file, its chunks, each change `add` (`ln`), `del` (`ln`) or `normal` (`ln1`, `ln2`)."""
    chunks: list[dict[str, Any]] = []
    adds = dels = old = new = 0
    for line in text.splitlines():
        m = _HUNK.match(line)
        if m:
            old, new = int(m[1]), int(m[3])
            chunk = {
                "content": line,
                "changes": [],
                "oldStart": old,
                "oldLines": int(m[2] or 1),
                "newStart": new,
                "newLines": int(m[4] or 1),
            }
            chunks.append(chunk)
        elif not chunks:  # the file names, before the first hunk
            continue
        elif line.startswith("+"):
            chunks[-1]["changes"].append({"type": "add", "add": True, "ln": new, "content": line})
            new, adds = new + 1, adds + 1
        elif line.startswith("-"):
            chunks[-1]["changes"].append({"type": "del", "del": True, "ln": old, "content": line})
            old, dels = old + 1, dels + 1
        else:
            change = {"type": "normal", "normal": True, "ln1": old, "ln2": new, "content": line}
            chunks[-1]["changes"].append(change)
            old, new = old + 1, new + 1
    file = {"chunks": chunks, "deletions": dels, "additions": adds, "from": "previous"}
    return {"files": [file | {"to": "current"}] if chunks else []}
