"""A loopback site that speaks to agents, for the site's-own-markdown, change and usage tests:
a page that answers markdown on request (`Vary: Accept`), a page with a `<link
rel="alternate" type="text/markdown">`, an unrelated alternate, an alternate that is the site
index, a site that answers one markdown to every path (no `Vary`), `llms.txt` and
`llms-full.txt`, a page whose text the test changes (`change`), pages with `X-Robots-Tag`
and `<meta name="robots">`, and a robots.txt with `Content-Signal` that disallows
`/private/`. Each `AgentSite` is its own Origin (its own port: its own site for robots.txt)."""

from __future__ import annotations

import random
from collections.abc import Iterator

import pytest

from tests.support.origin import Origin, OriginHandler

MARKDOWN = "text/markdown; charset=utf-8"
ROBOTS = (
    "User-agent: *\n"
    "Content-Signal: search=yes, ai-input=yes, ai-train=no\n"
    "Disallow: /private/\n"
    "Allow: /\n"
)
_COMMON_TEXT = (
    "this guide is about the way you do it and what to know when it goes well with some care "
    "for every season because most people find that small changes make a real difference over "
    "time so keep notes then check them again after each week"
)
_COMMON = _COMMON_TEXT.split()


def prose(topic: str, n: int = 40) -> str:
    """`n` sentences of common words and `topic`, in an order drawn from `topic`: unrelated
    topics share words, not text."""
    pick = random.Random(topic)
    out = []
    for _ in range(n):
        words = [pick.choice(_COMMON) for _ in range(8)] + [topic]
        pick.shuffle(words)
        out.append(" ".join(words).capitalize() + ".")
    return " ".join(out)


def page(title: str, body: str, head: str = "") -> str:
    return (
        f"<html><head><title>{title}</title>{head}</head><body><nav>Home · About</nav>"
        f"<article><h1>{title}</h1><p>{body}</p></article><footer>© site</footer></body></html>"
    )


class AgentSite:
    def __init__(self) -> None:
        self.origin = Origin("127.0.0.1").start()
        self.version = 1
        o = self.origin
        guide = prose("gardening")
        self.guide_md = (
            f"# Garden guide\n\n**Site markdown** of the guide.\n\n{guide}\n\n"
            "See [the tagged page](/tagged).\n"
        )
        o.route("/negotiated", self._negotiated)
        o.set("/alternate", page("Garden guide", guide, _alt("/alternate.md")))
        o.set("/alternate.md", self.guide_md, MARKDOWN)
        o.set("/unrelated", page("Boat guide", prose("sailing"), _alt("/other.md")))
        o.set("/other.md", f"# Cooking\n\n{prose('cooking')}\n", MARKDOWN)
        o.set("/indexed", page("Bird guide", prose("birding"), _alt("/llms.txt")))
        o.route("/everything", self._everything)
        o.set("/llms.txt", "# Garden site\n\n- [Guide](/alternate.md)\n", MARKDOWN)
        o.set("/llms-full.txt", self.guide_md, "text/plain")
        o.route("/changing", self._changing)
        o.set("/tagged", page("Tagged", prose("tagging")), headers={"X-Robots-Tag": "noai"})
        meta = '<meta name="robots" content="noindex, noai">'
        o.set("/meta", page("Meta", prose("meta"), meta))
        o.set("/private/page", page("Private", prose("privacy")))
        o.set("/robots.txt", ROBOTS, "text/plain")

    def url(self, path: str) -> str:
        return self.origin.url(path)

    def change(self) -> None:
        """The next fetch of `/changing` sees a new version (one paragraph added)."""
        self.version += 1

    def stop(self) -> None:
        self.origin.stop()

    async def _negotiated(self, h: OriginHandler) -> None:
        h.set_header("Vary", "Accept")
        if h.request.headers.get("Accept", "").startswith("text/markdown"):
            await h.send(self.guide_md.encode(), MARKDOWN)
        else:
            await h.send(page("Garden guide", prose("gardening")).encode())

    async def _everything(self, h: OriginHandler) -> None:
        """One markdown for every path to a markdown-first Accept, and no `Vary`."""
        if h.request.headers.get("Accept", "").startswith("text/markdown"):
            await h.send(b"# Welcome, agents\n\nThis site has a markdown front door.\n", MARKDOWN)
        else:
            await h.send(page("Orchid care", prose("orchids")).encode())

    async def _changing(self, h: OriginHandler) -> None:
        added = "".join(
            f"<p>Update {v}: the orchid bloomed again.</p>" for v in range(2, self.version + 1)
        )
        body = f"<p>{prose('orchids')}</p>{added}"
        await h.send(page("Orchid diary", "", "").replace("<p></p>", body).encode())


def _alt(href: str) -> str:
    return f'<link rel="alternate" type="text/markdown" href="{href}">'


@pytest.fixture(name="site")
def site_fixture() -> Iterator[AgentSite]:
    """An `AgentSite` of the test's own (a fresh robots.txt cache key and counts)."""
    s = AgentSite()
    yield s
    s.stop()
