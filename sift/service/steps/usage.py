"""What a site says about automated use of a page, gathered as the page is fetched (the
answer reports it: `answer/usage.py`), and `[fetch] robots` for single fetches: robots.txt's
`Content-Signal` (search, ai-input, ai-train) and the rule for the URL, the response's
`X-Robots-Tag`, the page's `<meta name="robots">`."""

from __future__ import annotations

import asyncio
from typing import TYPE_CHECKING, Any

import msgspec

from sift.core.errors import Blocked
from sift.core.types import Content, PageFacts

if TYPE_CHECKING:
    from sift.core.callers import Caller
    from sift.fetch.robots import Robots
    from sift.fetch.transfer import FetchResult
    from sift.service.parts.runtime import Runtime


def robots_facts(rules: Robots | None, url: str) -> dict[str, Any]:
    """The `PageFacts` fields robots.txt gives for `url` (none when it could not be read)."""
    if rules is None:
        return {}
    return {
        "content_signal": rules.content_signal,
        "robots_rule": rules.rule(url),
        "robots_allowed": rules.allowed(url),
        "robots_read": True,
    }


async def robots_txt(svc: Runtime, caller: Caller, url: str, gated: bool = True) -> Robots | None:
    """The rules of `url`'s site for sift (None: its robots.txt cannot be read now), read
    through the guard and the fetch actor, and kept per site. Map and crawl read it under
    the gates like their other fetches; a single fetch reads it beside its own (`gated`
    false): one small file a site an hour, which must neither wait behind the page's own
    slot nor turn a caller away as busy."""

    async def read(there: str) -> FetchResult:
        if not gated:
            return await svc.upstream.beside(there)
        return await svc.upstream.fetch(caller.name, there)

    return await svc.robots.rules(url, read)


def reading(svc: Runtime, caller: Caller, url: str) -> asyncio.Task[Robots | None]:
    """robots.txt read beside the page's fetch (the answer reports its `Content-Signal`)."""
    return asyncio.get_running_loop().create_task(robots_txt(svc, caller, url, gated=False))


async def respected(svc: Runtime, caller: Caller, url: str) -> Robots | None:
    """Under `[fetch] robots = "respect"`, robots.txt read before the fetch, which it may
    refuse; None otherwise (read beside the fetch instead)."""
    if svc.cfg.fetch.robots != "respect":
        return None
    rules = await robots_txt(svc, caller, url, gated=False)
    refuse(svc, url, PageFacts(**robots_facts(rules, url)))
    return rules


def refuse(svc: Runtime, url: str, facts: PageFacts) -> None:
    """403 for a URL robots.txt disallows to sift, naming the rule, under `respect`."""
    if svc.cfg.fetch.robots == "respect" and not facts.robots_allowed:
        rule = f" ({facts.robots_rule})" if facts.robots_rule else ""
        raise Blocked(f"the site's robots.txt disallows this URL for sift{rule}")


def with_facts(c: Content, x_robots_tag: str | None, rules: Robots | None) -> Content:
    """`c` with the usage signals of its response and of robots.txt."""
    return msgspec.structs.replace(c, facts=signals(c.facts, c.url, x_robots_tag, rules))


def signals(
    facts: PageFacts, url: str, x_robots_tag: str | None, rules: Robots | None
) -> PageFacts:
    """`facts` with the usage signals of the response and of robots.txt."""
    said = msgspec.structs.asdict(facts) | robots_facts(rules, url)
    if x_robots_tag:
        said["x_robots_tag"] = x_robots_tag[:500]
    return PageFacts(**said)
