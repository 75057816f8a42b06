"""An answer's `usage`: what the site says about automated use of the page (robots.txt's
`Content-Signal`, `X-Robots-Tag`, `<meta name="robots">`), from the facts the fetch gathered
(`steps/usage.py`)."""

from __future__ import annotations

from sift.core.envelope import RobotsRule, Usage
from sift.core.types import PageFacts
from sift.fetch.robots import AGENT

FLAGS = ("noai", "noimageai", "noindex", "nofollow", "none")


def usage(facts: PageFacts, mode: str) -> Usage:
    """The answer's `usage`: what the site says, and under `report`/`respect` the robots.txt
    rule that decides the URL for sift."""
    flags = _flags(facts)
    robots = mode != "ignore" and facts.robots_read
    return Usage(
        content_signal=dict(facts.content_signal) if facts.content_signal else None,
        x_robots_tag=facts.x_robots_tag or None,
        meta_robots=facts.meta_robots or None,
        noai="noai" in flags,
        noimageai="noimageai" in flags,
        nofollow="nofollow" in flags,
        noindex="noindex" in flags,
        none="none" in flags,
        robots_txt=RobotsRule(facts.robots_allowed, facts.robots_rule) if robots else None,
    )


def _flags(facts: PageFacts) -> set[str]:
    """The directives among FLAGS that apply to sift: unscoped, or scoped to `sift:`."""
    found = set()
    for said in (facts.x_robots_tag, facts.meta_robots):
        for part in (said or "").lower().split(","):
            scope, sep, directive = part.rpartition(":")
            if sep and scope.strip() not in (AGENT, "*"):
                continue
            if directive.strip() in FLAGS:
                found.add(directive.strip())
    return found
