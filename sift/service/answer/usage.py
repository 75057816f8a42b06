"""An answer's `usage`: what the site says about automated use of the page (robots.txt's
`Content-Signal`, `X-Robots-Tag`, `<meta name="robots">`), from the facts the fetch gathered
(`steps/usage.py`)."""

from __future__ import annotations

from typing import Any

from sift.core.types import PageFacts
from sift.fetch.robots import AGENT

FLAGS = ("noai", "noimageai", "noindex", "nofollow", "none")


def usage(facts: PageFacts, mode: str) -> dict[str, Any]:
    """The answer's `usage`: what the site says, and under `report`/`respect` the robots.txt
    rule that decides the URL for sift."""
    out: dict[str, Any] = {}
    if facts.content_signal:
        out["content_signal"] = dict(facts.content_signal)
    for name in ("x_robots_tag", "meta_robots"):
        if getattr(facts, name):
            out[name] = getattr(facts, name)
    for flag in _flags(facts):
        out[flag] = True
    if mode != "ignore" and facts.robots_read:
        out["robots_txt"] = {"allowed": facts.robots_allowed, "rule": facts.robots_rule}
    return out


def _flags(facts: PageFacts) -> list[str]:
    """The directives among FLAGS that apply to sift: unscoped, or scoped to `sift:`."""
    found = set()
    for said in (facts.x_robots_tag, facts.meta_robots):
        for part in (said or "").lower().split(","):
            scope, sep, directive = part.rpartition(":")
            if sep and scope.strip() not in (AGENT, "*"):
                continue
            if directive.strip() in FLAGS:
                found.add(directive.strip())
    return sorted(found)
