"""robots.txt read from its text (no network): the `Sitemap:` lines, whether sift may fetch a
URL and the line that says so, the `Crawl-delay` a crawl waits between pages (at most
`MAX_CRAWL_DELAY`: a larger one would park the crawl), and the `Content-Signal` the site gives
sift (search, ai-input, ai-train). Protego does the rules as RFC 9309 reads them (the most
specific rule wins, `*` and `$` are patterns; the standard library's parser takes the first
rule that matches); a missing or unreadable robots.txt allows everything, as crawlers treat
it."""

from __future__ import annotations

from typing import Any

AGENT = "sift"
MAX_CHARS = 512 * 1024  # Google reads the first 500 KiB; the rest is ignored
MAX_SIGNALS = 16  # Content-Signal keys kept: a hostile file may list more
MAX_CRAWL_DELAY = 60.0  # seconds, as a crawl's own `delay` at most


class Robots:
    """The rules of one robots.txt for sift's user agent."""

    def __init__(self, text: str = "") -> None:
        from protego import Protego  # late: `sift extract` needs no robots.txt

        self.text = text[:MAX_CHARS]  # kept: a stored crawl reads its rules again from it
        self._parser = Protego.parse(self.text)
        self.sitemaps: list[str] = list(self._parser.sitemaps)
        self.content_signal: dict[str, str] | None = _content_signal(self.text)
        asked = self._parser.crawl_delay(AGENT)  # sift's group, else `*`'s
        self.crawl_delay = min(float(asked or 0), MAX_CRAWL_DELAY)

    def allowed(self, url: str) -> bool:
        return bool(self._parser.can_fetch(url, AGENT))

    def rule(self, url: str) -> str | None:
        """The line that decides `url` for sift (`Disallow: /private`), if one does: the first
        of its group's rules that matches, in the order Protego's own `can_fetch` tries them
        (most specific first, `Allow` before `Disallow` of the same length)."""
        # Protego's own rule set (not public API: pinned in pyproject; a change of it names no
        # rule rather than failing the answer): sift's group, else `*`'s.
        try:
            from protego import _utils

            group: Any = self._parser._get_matching_rule_set(AGENT)
            path = _utils._quote_path(url)
            for found in getattr(group, "_rules", ()):
                if found.value.match(path):
                    return f"{found.field.capitalize()}: {found.value._pattern}"
        except (ImportError, AttributeError):
            pass
        return None


def _content_signal(text: str) -> dict[str, str] | None:
    """`Content-Signal: search=yes, ai-train=no` of the group for sift, else of `*`, else one
    outside any group; None when the file gives none."""
    groups: dict[str, dict[str, str]] = {}
    agents: list[str] = []
    in_agents = False
    for raw in text.splitlines():
        line = raw.split("#", 1)[0].strip()
        name, sep, value = line.partition(":")
        if not sep:
            continue
        name, value = name.strip().lower(), value.strip()
        if name == "user-agent":
            agents = [*agents, value.lower()] if in_agents else [value.lower()]
            in_agents = True
            continue
        in_agents = False
        if name != "content-signal":
            continue
        for agent in agents or [""]:
            said = groups.setdefault(agent, {})
            for part in value.split(","):
                key, eq, flag = part.partition("=")
                if eq and len(said) < MAX_SIGNALS:
                    said[key.strip().lower()[:40]] = flag.strip().lower()[:20]
    mine = next((g for a, g in groups.items() if a and a != "*" and a in AGENT), None)
    return mine or groups.get("*") or groups.get("") or None
