"""robots.txt read from its text (no network): the `Sitemap:` lines, whether sift may fetch a
URL and the line that says so, the `Crawl-delay` a crawl waits between pages (at most
`MAX_CRAWL_DELAY`: a larger one would park the crawl), and the `Content-Signal` the site gives
sift (search, ai-input, ai-train). The standard library's parser does the rules; a missing or
unreadable robots.txt allows everything, as crawlers treat it."""

from __future__ import annotations

import urllib.parse
from typing import Any

AGENT = "sift"
MAX_CHARS = 512 * 1024  # Google reads the first 500 KiB; the rest is ignored
MAX_SIGNALS = 16  # Content-Signal keys kept: a hostile file may list more
MAX_CRAWL_DELAY = 60.0  # seconds, as a crawl's own `delay` at most


class Robots:
    """The rules of one robots.txt for sift's user agent."""

    def __init__(self, text: str = "") -> None:
        import urllib.robotparser  # late: it imports urllib.request, which `sift extract` needs not

        self.text = text[:MAX_CHARS]  # kept: a stored crawl reads its rules again from it
        self._parser = urllib.robotparser.RobotFileParser()
        self._parser.parse(self.text.splitlines())
        self.sitemaps: list[str] = list(self._parser.site_maps() or [])
        self.content_signal: dict[str, str] | None = _content_signal(self.text)
        asked = self._parser.crawl_delay(AGENT)  # sift's group, else `*`'s; whole seconds
        self.crawl_delay = min(float(asked or 0), MAX_CRAWL_DELAY)

    def allowed(self, url: str) -> bool:
        return self._parser.can_fetch(AGENT, url)

    def rule(self, url: str) -> str | None:
        """The line that decides `url` for sift (`Disallow: /private`), if one does."""
        parsed = urllib.parse.urlparse(urllib.parse.unquote(url))
        path = urllib.parse.quote(
            urllib.parse.urlunparse(("", "", parsed.path, parsed.params, parsed.query, ""))
        )
        # The parser's own entries (not typed in typeshed): sift's group, else `*`'s.
        parser: Any = self._parser
        entries = [e for e in parser.entries if e.applies_to(AGENT)]
        entries += [parser.default_entry] if parser.default_entry else []
        for entry in entries[:1]:
            for line in entry.rulelines:
                if line.applies_to(path or "/"):
                    return str(line)
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
