"""Cached documents as MCP resources: `sift://doc/{hash}{?pages,grep}`.

A tool answer about a document (fetch, batch_result) carries a `resource_link` to it, named by
its content hash. Reading that URI (with `pages` or `grep` to pick a part) answers from sift's
cache through the same `/v1/fetch` as the tool, so a client re-reads a part without calling a
tool; the answer must still be that version of the document, else the read is an error saying
to fetch the URL again. This server remembers which URL each hash it handed out stands for, per
client (over HTTP, per token: a hash one client was given names nothing for another).
"""

from __future__ import annotations

import re
from collections import OrderedDict
from typing import Any

from mcp.server.mcpserver import Context
from mcp.server.mcpserver.exceptions import ResourceNotFoundError
from mcp.shared.exceptions import MCPError
from mcp.types import INTERNAL_ERROR, INVALID_PARAMS, Resource, ResourceLink

from sift.core.envelope import Envelope
from sift.mcp.upstream import SiftRefused, Upstream

TEMPLATE = "sift://doc/{hash}{?pages,grep}"
MIME = "text/markdown"
REMEMBERED = 4096  # documents remembered in all (the oldest forgotten first)
LISTED = 100  # the most recent documents resources/list names
_HASH = re.compile(r"[0-9a-f]{16,128}")

DESCRIPTION = """\
A document sift has cached, by the content hash a tool answer's resource link gave: its text \
(a long one's map), or `pages` ("41-60") or `grep` (an RE2 regex) of it, read from sift's \
cache without fetching again."""


def uri(content_hash: str) -> str:
    return f"sift://doc/{content_hash}"


class Documents:
    """The documents this server has linked, and reading them back."""

    def __init__(self, upstream: Upstream) -> None:
        self.upstream = upstream
        # (client, hash) -> (url, title); least recently used first
        self._known: OrderedDict[tuple[str, str], tuple[str, str]] = OrderedDict()

    def link(self, ctx: Context, answer: Envelope) -> ResourceLink | None:
        """The resource link for the document of `answer`, remembered for this client; None
        when the answer names no cached version (a partial read, a private fetch)."""
        content_hash = answer.content_hash
        if not _HASH.fullmatch(content_hash) or not answer.url:
            return None
        title = answer.title or answer.final_url or answer.url
        key = (self.upstream.client(ctx.headers), content_hash)
        self._known[key] = (answer.url, title)
        self._known.move_to_end(key)
        while len(self._known) > REMEMBERED:
            self._known.popitem(last=False)
        return ResourceLink(
            type="resource_link",
            uri=uri(content_hash),
            name=title[:200],
            mime_type=MIME,
            description="this document in sift's cache: read it with pages or grep "
            f"({uri(content_hash)}?pages=2-3)",
        )

    def listed(self, headers: Any) -> list[Resource]:
        """The documents linked to this client, most recent first."""
        client = self.upstream.client(headers)
        mine = [(h, t) for (c, h), (_, t) in reversed(self._known.items()) if c == client]
        return [Resource(uri=uri(h), name=t[:200], mime_type=MIME) for h, t in mine[:LISTED]]

    async def read(
        self, ctx: Context, content_hash: str, pages: str | None, grep: str | None
    ) -> str:
        """The document's text (or the pages or grep hits asked for), from sift's cache."""
        found = self._known.get((self.upstream.client(ctx.headers), content_hash))
        if found is None:
            raise ResourceNotFoundError(
                f"{uri(content_hash)} is not a document sift answered this client; "
                "fetch its URL first (the answer links it)"
            )
        body: dict[str, Any] = {"url": found[0]}
        body.update({k: v for k, v in (("pages", pages), ("grep", grep)) if v})
        try:
            answer = await self.upstream.fetch(ctx, body)
        except SiftRefused as exc:
            code = INVALID_PARAMS if 400 <= exc.status < 500 else INTERNAL_ERROR
            raise MCPError(code=code, message=str(exc), data={"uri": uri(content_hash)}) from None
        if answer.content_hash != content_hash:
            raise ResourceNotFoundError(
                f"{uri(content_hash)}: sift no longer has that version of the document (it "
                "changed); fetch its URL again"
            )
        return answer.content
