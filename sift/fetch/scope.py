"""Which discovered URLs a map or a crawl keeps: same site (or its subdomains), include and
exclude path patterns (RE2, as Firecrawl), a search word, no duplicates; and how a crawl's
targets grow from the links of its pages (`Crawl`, a `sift.batch.scheduler.Frontier`)."""

from __future__ import annotations

import urllib.parse
from collections.abc import Iterable, Iterator
from dataclasses import dataclass, field

import msgspec
import re2

from sift.core.errors import BadRequest
from sift.core.request import FetchParams, ScrapeTarget
from sift.fetch.robots import Robots


def host_of(url: str) -> str:
    return (urllib.parse.urlsplit(url).hostname or "").lower()


def same_site(url: str, base_host: str, subdomains: bool) -> bool:
    host = host_of(url)
    if host == base_host:
        return True
    bare = base_host.removeprefix("www.")
    return host in (bare, f"www.{bare}") or (subdomains and host.endswith(f".{bare}"))


def normal(url: str, query: bool = True) -> str:
    """A URL as a key: no fragment (nor query, unless `query`); the scheme and host as
    given, lower-cased."""
    parts = urllib.parse.urlsplit(urllib.parse.urldefrag(url).url)
    return urllib.parse.urlunsplit(
        parts._replace(
            scheme=parts.scheme.lower(),
            netloc=parts.netloc.lower(),
            query=parts.query if query else "",
        )
    )


def patterns(raw: object, name: str) -> tuple[str, ...]:
    """A list of RE2 patterns from a request; a bad one is a 400 that names it."""
    if raw is None:
        return ()
    if not isinstance(raw, list) or not all(isinstance(p, str) for p in raw):
        raise BadRequest(f"invalid request: `{name}` must be a list of regular expressions")
    for p in raw:
        try:
            re2.compile(p)
        except re2.error as exc:
            raise BadRequest(f"invalid request: `{name}` pattern {p!r}: {exc}") from None
    return tuple(raw)


@dataclass(frozen=True)
class Scope:
    """The URLs a job may reach from `base`. Patterns match the path (with its query).
    `below`: a path the URLs must be at or under (a crawl's start path), "" for anywhere.
    `external`: other sites too (a crawl's `allowExternalLinks`; the guard checks each host
    when it is fetched); the start path binds only the start site."""

    base_host: str
    subdomains: bool = False
    include: tuple[str, ...] = ()
    exclude: tuple[str, ...] = ()
    below: str = ""
    external: bool = False
    _inc: list[re2._Regexp] = field(default_factory=list, compare=False, repr=False)
    _exc: list[re2._Regexp] = field(default_factory=list, compare=False, repr=False)

    def __post_init__(self) -> None:
        self._inc.extend(re2.compile(p) for p in self.include)
        self._exc.extend(re2.compile(p) for p in self.exclude)

    def keeps(self, url: str) -> bool:
        if not url.startswith(("http://", "https://")):
            return False
        home = same_site(url, self.base_host, self.subdomains)
        if not home and not self.external:
            return False
        parts = urllib.parse.urlsplit(url)
        path = parts.path or "/"
        if home and not under(path, self.below):
            return False
        if parts.query:
            path += f"?{parts.query}"
        if any(r.search(path) for r in self._exc):
            return False
        return not self._inc or any(r.search(path) for r in self._inc)


def under(path: str, base: str) -> bool:
    """`path` is `base` or below it, segment by segment (`/docs` holds `/docs/a`, never
    `/docsearch`)."""
    return not base or path == base or path.startswith(base if base.endswith("/") else base + "/")


def unique(urls: Iterable[str], seen: set[str], query: bool = True) -> Iterator[str]:
    """`urls` not seen before (by `normal`), in order; `seen` grows."""
    for url in urls:
        key = normal(url, query)
        if key not in seen:
            seen.add(key)
            yield url


def seen_keys(crawl: object, targets: Iterable[FetchParams]) -> set[str]:
    """The keys of a job's targets (`normal`), as its crawl (if any) tells pages apart."""
    query = not (isinstance(crawl, Crawl) and crawl.no_query)
    return {normal(p.url, query) for p in targets}


@dataclass(frozen=True)
class Crawl:
    """A crawl's bounds: its targets grow from the links of the pages it scrapes, within
    `scope`, allowed by `robots` (the start site's), at most `limit` pages and `max_depth`
    hops from the start; each new page a scrape of `template`'s options (the start URL's).
    `no_query`: one page per path (`ignoreQueryParameters`); `delay`: seconds between pages;
    `origin` and `options`: the start URL and the crawl's options, as asked (listed by
    `/v2/crawl/active`). All of it is stored with the job, so a restart keeps it."""

    scope: Scope
    robots: Robots
    limit: int
    max_depth: int | None
    template: ScrapeTarget
    no_query: bool = False
    delay: float = 0.0
    origin: str = ""
    options: dict[str, object] = field(default_factory=dict, compare=False)

    def grow(
        self, parent: FetchParams, links: tuple[str, ...], seen: set[str], room: int
    ) -> tuple[list[FetchParams], list[str]]:
        """The new targets a crawl page's links give (in page order, never a URL seen before,
        at most `room`), and the ones robots.txt disallows (never fetched)."""
        depth = (parent.depth if isinstance(parent, ScrapeTarget) else 0) + 1
        if room <= 0 or (self.max_depth is not None and depth > self.max_depth):
            return [], []
        new: list[FetchParams] = []
        blocked: list[str] = []
        kept = (u for u in links if self.scope.keeps(u))
        for url in unique(kept, seen, not self.no_query):
            home = same_site(url, self.scope.base_host, self.scope.subdomains)
            if home and not self.robots.allowed(url):
                blocked.append(url)
                continue
            new.append(msgspec.structs.replace(self.template, url=url, depth=depth, discover=True))
            if len(new) >= room:
                break
        return new, blocked

    def encode(self) -> bytes:
        """The crawl's bounds as JSON, stored with its job: a crawl resumed after a restart
        or a takeover grows within the same scope (its start path too), robots.txt, limit,
        depth and options."""
        s = self.scope
        return msgspec.json.encode(
            {
                "host": s.base_host,
                "subdomains": s.subdomains,
                "include": s.include,
                "exclude": s.exclude,
                "below": s.below,
                "external": s.external,
                "robots": self.robots.text,
                "limit": self.limit,
                "max_depth": self.max_depth,
                "formats": self.template.formats,
                "template": self.template,
                "no_query": self.no_query,
                "delay": self.delay,
                "origin": self.origin,
                "options": self.options,
            }
        )

    @classmethod
    def decode(cls, spec: bytes) -> Crawl:
        """A stored crawl's bounds (`encode`); raises ValueError if they cannot be read."""
        try:
            d = msgspec.json.decode(spec, type=_CrawlSpec)
            scope = Scope(d.host, d.subdomains, d.include, d.exclude, d.below, d.external)
        except (msgspec.DecodeError, re2.error) as exc:
            raise ValueError(f"its crawl bounds cannot be read ({exc})") from None
        # Bounds stored before the scrape options were: the formats alone.
        template = d.template or ScrapeTarget(url="", context=False, formats=d.formats)
        return cls(
            scope,
            Robots(d.robots),
            d.limit,
            d.max_depth,
            template,
            d.no_query,
            d.delay,
            d.origin,
            d.options,
        )


class _CrawlSpec(msgspec.Struct, frozen=True):
    host: str
    subdomains: bool
    include: tuple[str, ...]
    exclude: tuple[str, ...]
    robots: str
    limit: int
    max_depth: int | None
    formats: tuple[str, ...]
    below: str = ""  # absent in bounds stored before crawls kept to their start path
    external: bool = False  # absent (as the rest below) in bounds stored before it was kept
    template: ScrapeTarget | None = None
    no_query: bool = False
    delay: float = 0.0
    origin: str = ""
    options: dict[str, object] = {}
