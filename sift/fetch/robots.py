"""robots.txt read from its text (no network): the `Sitemap:` lines, and whether sift may
fetch a URL. The standard library's parser does the rules; a missing or unreadable robots.txt
allows everything, as crawlers treat it."""

from __future__ import annotations

import urllib.robotparser

AGENT = "sift"
MAX_CHARS = 512 * 1024  # Google reads the first 500 KiB; the rest is ignored


class Robots:
    """The rules of one robots.txt for sift's user agent."""

    def __init__(self, text: str = "") -> None:
        self.text = text[:MAX_CHARS]  # kept: a stored crawl reads its rules again from it
        self._parser = urllib.robotparser.RobotFileParser()
        self._parser.parse(self.text.splitlines())
        self.sitemaps: list[str] = list(self._parser.site_maps() or [])

    def allowed(self, url: str) -> bool:
        return self._parser.can_fetch(AGENT, url)
