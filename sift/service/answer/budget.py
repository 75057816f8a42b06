"""An answer within the caller's budget — `max_chars`, `max_tokens` — and where a cut one goes
on (`next`): characters into its text (`offset`), or the next `pages` of a long document's
map. Continuing reads the same cached document again, never a second download.

Tokens are counted by one rule everywhere (`sift.documents.tokens`); the count of every
answer's content is its `tokens`."""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from typing import TYPE_CHECKING

import msgspec

from sift.documents import tokens
from sift.documents.map import LEAD_MIN
from sift.documents.window import window

if TYPE_CHECKING:
    from sift.core.request import FetchParams
    from sift.documents.pages import Rendered
    from sift.service.parts.runtime import Runtime

Next = dict[str, int | str]
_RETRIES = 4  # renderings of a map or range tried at smaller caps until it fits the tokens


async def count(svc: Runtime, text: str) -> int:
    """The tokens of `text`: remembered, or counted off the event loop unless what is left to
    count, once the remembered sections are known (a map's outline around its document's
    leading sections), is short and the tokenizer loaded."""
    found = tokens.remembered(text)
    if found is not None:
        return found
    return await svc.cpu.compute(tokens.count, text, cost=tokens.cost_left(text))


async def text_budget(svc: Runtime, p: FetchParams, above: str) -> int | None:
    """The tokens left for the text under what goes `above` it (the header, a notice), or
    None without `max_tokens`. Two are kept back: tokens do not quite add up across a join."""
    if p.max_tokens is None:
        return None
    return max(1, p.max_tokens - await count(svc, above) - 2)


async def header_fits(svc: Runtime, p: FetchParams, head: str) -> bool:
    """Whether the context header leaves the text a token of `max_tokens`: the budget caps
    the whole content, the header with it, so a header that would fill it is left out."""
    if p.max_tokens is None or not head:
        return True
    return p.max_tokens - await count(svc, head) - 2 >= 1


async def windowed(
    svc: Runtime, text: str, offset: int | None, room: int, budget: int | None
) -> tuple[str, bool, Next | None]:
    """(the window of `text` from `offset` within `room` characters and `budget` tokens,
    whether it was cut, `next`)."""
    start = offset or 0
    shown = text[start : start + room]
    counted = budget is not None and not tokens.within(shown, budget)
    work = len(text) + (tokens.cost(shown) if counted else 0)
    end = await svc.cpu.compute(window, text, start, room, budget, cost=work)
    more = end < len(text)
    return text[start:end], more, ({"offset": end} if more else None)


async def fitted(
    svc: Runtime,
    shown: Rendered,
    room: int,
    budget: int | None,
    again: Callable[[int], Awaitable[Rendered]],
) -> Rendered:
    """A map or page range (`shown`, rendered within `room` characters) within `budget`
    tokens: rendered `again` at a smaller cap until it fits, cut between blocks at last."""
    if budget is None:
        return shown
    for _ in range(_RETRIES):
        if tokens.within(shown.content, budget):
            return shown
        n = await count(svc, shown.content)
        if n <= budget:
            return shown
        room = max(1, int(min(room, len(shown.content)) * budget / n * 0.9))
        shown = await again(room)
    if shown.map:  # a map cut at last shows no leading page, so its `next` names page 1
        shown = await again(min(room, 4 * LEAD_MIN - 1))
    text, cut, _ = await windowed(svc, shown.content, 0, room, budget)
    nxt = shown.next
    if cut and shown.body is not None and len(text) < shown.body:
        nxt = {"offset": len(text)}  # cut inside the pages: the same request reads on
    return msgspec.structs.replace(shown, content=text, truncated=shown.truncated or cut, next=nxt)


def next_of(nxt: Next | None) -> int | str | None:
    """The answer's `next`: the `offset` (a number) to send with the same request for the
    rest, or the `pages` (a range) to ask next from its start (`core.request.next_fields`).
    Either moves forward: a range is never the one asked again."""
    if nxt is None:
        return None
    return nxt.get("offset", nxt.get("pages"))
