"""HTML → the page's main content as markdown, with trafilatura and three measured fixes.

trafilatura gives the best main-content F1 of the Python extractors with its default settings
(measured: `favor_precision` loses half the text on forums and listings), so it is called with
those: markdown output, tables, formatting and links on,
images and comments off, and it is handed a parsed tree so that it never fetches anything.
Its fast mode (no comparison with readability and justext) is kept only where the page's
article element vouches for it (`_main`); elsewhere the full cascade runs.
Its flaws are fixed here: link targets are percent-encoded before extraction (it wraps them
in `<…>` otherwise) and resolved after it against the page URL or `<base href>` (it resolves
them against the site root), and links into the page itself keep only their text; markup it
misreads is rewritten first (`repair.py`); it reads the page as served, hidden text marked and
cut from its answer (`marked.py`); tables are
rewritten as valid GFM (`tables.py`); the source's indentation and whitespace-only lines,
which it keeps and which render as code blocks, are dropped (`tidy`); a page it answers
(almost) empty for goes through a fallback cascade, flagged `fallback`; and a page whose
main content keeps well under half of its `<article>` text gets a recall-oriented pass where
that covers the article better, and a `coverage` figure where it stays low. A page that is
nearly empty but mostly script gets `hint="browser"`.
"""

from __future__ import annotations

import functools
import logging
import math
import re
from collections import Counter
from collections.abc import Callable
from typing import Any

import lxml.etree
import lxml.html
import msgspec
import trafilatura
from lxml.html import HtmlElement

from sift.clean import code, combine, honest, kinds, marked, meta, repair, signals, tables
from sift.clean.markdown_links import base_url, resolve_markdown_links
from sift.clean.parsing import parse, utf8_safe
from sift.clean.protocol import CleanResult
from sift.clean.text import script_only, visible_text

log = logging.getLogger("sift.clean")

# trafilatura and its helpers log the page URL on ordinary outcomes ("discarding data: <url>");
# sift's logs must not carry URLs of restricted callers, and these lines are not actionable.
for _name in ("trafilatura", "htmldate", "courlan", "justext", "readability"):
    logging.getLogger(_name).setLevel(logging.CRITICAL)

_FENCE = re.compile(r"^ {0,3}(`{3,}|~{3,})")
_LIST_ITEM = re.compile(r"^ *(?:[-*+]|\d{1,9}[.)])(?: |$)")
_BARE_ITEM = re.compile(r"^ *(?:[-*+]|\d{1,9}[.)])$")
_WORD = re.compile(r"\w+")
# Main content under this many words is "almost nothing": the fallback cascade runs.
FEW_WORDS = 10
# Main content keeping less of the article's words than this is reported as `coverage`.
LOW_COVERAGE = 0.5
_CLEARLY_KEPT = 0.8  # a main content with this share of the article's word count is not judged
_TEASER = 5  # an article element with under 1/_TEASER of the page's paragraph words is a teaser
# (what the HTML must contain, where the article is): the search skips a walk of the tree.
# (`//article` is every `<article>` of the document: found by a walk in C, as XPath is slower.)
_ARTICLES: tuple[tuple[str, Callable[[HtmlElement], list[HtmlElement]]], ...] = (
    ("articleBody", lxml.etree.XPath("//@itemprop[. = 'articleBody']/..")),
    ("<article", lambda tree: list(tree.getroottree().getroot().iter("article"))),
    ("<main", lambda tree: list(tree.getroottree().getroot().iter("main"))),
)
_ARTICLES_MAX = 20
_SERIES = 2  # an article element with under 1/_SERIES of the words of all of them is one of many
# Plain strings: lxml's default "smart" ones each keep a link to their parent, at a cost.
_PARA_TEXT = lxml.etree.XPath(".//p//text()", smart_strings=False)
_ALL_PARA_TEXT = lxml.etree.XPath("//p//text()", smart_strings=False)
# The page's words are those of its body's text less those in scripts, styles and noscripts:
# the few texts in these are found first, where asking each text for such an ancestor cost more.
_BODY_TEXT = lxml.etree.XPath("//body//text()", smart_strings=False)
_UNREAD_TEXT = lxml.etree.XPath(
    "//*[self::script or self::style or self::noscript]//text()[ancestor::body]",
    smart_strings=False,
)
_READABLE = lxml.etree.XPath(
    "descendant::text()[not(ancestor::script or ancestor::style or ancestor::noscript)]",
    smart_strings=False,
)
_SHARE = 20  # an article element with under 1/_SHARE of the page's words is not its main content
Extract = Callable[..., str]  # (favor_recall=False, fast=False) → the main content
# How sift calls trafilatura (bench/ calls it the same way for its baseline).
EXTRACT_OPTIONS: dict[str, Any] = {
    "output_format": "markdown",
    "include_tables": True,
    "include_formatting": True,
    "include_links": True,
    "include_images": False,
    "include_comments": False,
    "with_metadata": False,
}


def clean_html(body: bytes, content_type: str, url: str, input_cap: int) -> CleanResult:
    """The main content of an HTML page as markdown, with its title.

    Args:
        body: the page as fetched; only its first `input_cap` bytes are read.
        content_type: the response's Content-Type, for its charset.
        url: the final URL of the page, against which relative links are resolved.
        input_cap: how many bytes of `body` to read at most.

    Returns:
        A CleanResult with `fallback=True` when main-content extraction found (almost) nothing
        and the text comes from a later step of the cascade (`_fallback`), `coverage` when the
        main content keeps well under half of the page's article text, and `hint="browser"`
        for script-only pages.
    """
    html, raw = utf8_safe(kinds.decode(body[:input_cap], content_type))
    tree = parse(html, raw)
    if tree is None:  # not even a fragment lxml can read: strip the tags
        text = " ".join(re.sub(r"<[^>]*>", " ", html).split())
        return CleanResult(title="", text=text, fallback=True)  # (flagged, even when empty)
    alternate, robots = signals.head(tree, base_url(tree, url))
    removed = honest.prepare(tree)
    result = clean_tree(tree, html, url, meta.page_title(tree), removed)
    said = meta.page_meta(tree, url) or None
    return msgspec.structs.replace(result, markdown_link=alternate, meta_robots=robots, meta=said)


def clean_tree(
    tree: HtmlElement,
    html: str,
    url: str,
    title: str,
    removed: honest.Removed,
    keep_tree: bool = False,
) -> CleanResult:
    """`clean_html` on a parsed page (`html` its markup) that `honest.prepare` has seen
    (`removed`: what it took out); the tree is changed, and left as the extractor reads it
    only with `keep_tree` (else it may not have been read whole)."""
    base = base_url(tree, url)
    split = removed.split or marked.Split(0, tree, Counter())
    repair.for_extraction(split.source)

    # The page without its hidden text is repaired for the extractor only where it falls back
    # to it (rare); its text is read as it is (the repairs change little but spaces).
    @functools.cache
    def stripped() -> HtmlElement:
        return repair.for_extraction(tree) if split.source is not tree else tree

    code.structure(tree, split.source)
    with code.set_aside(split.source, tree) as stash:
        if keep_tree:
            stripped()
        extract = _extractor(tree, split, stripped)
        paras, article_words = article_text(tree, html)
        (markdown, judged), fallback = _main(tree, paras, article_words, extract), False
        coverage = None
        if _words(markdown, FEW_WORDS) < FEW_WORDS:
            markdown, fallback = _fallback(stripped(), markdown, title, extract)
        elif not judged:
            markdown, coverage = _check_coverage(paras, markdown, extract)
    markdown = tidy(tables.normalise(code.put_back(markdown, stash)))
    if not fallback:  # (an article element that vouches for trafilatura's answer: it stands)
        markdown = combine.main_content(tree, html, markdown, vouched=judged)
    markdown = resolve_markdown_links(markdown, base, url)
    hint = "browser" if script_only(tree, len(html), markdown) else None
    fallback = fallback or not markdown.strip()  # nothing at all: flagged too, never unmarked
    result = CleanResult(
        title=title, text=markdown, hint=hint, fallback=fallback, coverage=coverage
    )
    return honest.finish(result, html, tree, removed)


def _main(tree: HtmlElement, paras: str, article: int, extract: Extract) -> tuple[str, bool]:
    """The main content: trafilatura's fast extraction where the page's article text (`paras`,
    from an element of `article` words) vouches for it, else its full cascade; and whether it
    was judged against the article text (a fast extraction kept here is one `_check_coverage`
    keeps, with no coverage figure).

    The full cascade compares its extraction with readability's and justext's, a third of its
    time, to catch the pages where its own rules pick too little or the wrong block. Where the
    page has an article element and the fast extraction keeps at least `LOW_COVERAGE` of its
    words (the words compared, not counted: a fast extraction of as many words of another block
    is no match), that comparison has nothing left to catch;
    a page without one, or a fast extraction that misses the article, gets the full cascade.
    So does a page whose article element holds under a fifth of its paragraphs' words: that
    article is a teaser or a card (a shop's, a forum's, a listing's), not the main content,
    and one whose paragraphs hold under a twentieth of the page's words (a product's blurb on a
    page of specs and reviews the fast extraction would leave out). So does a fast extraction
    with under `LOW_COVERAGE` of the article element's words: it kept the paragraphs and lost
    the lists, tables and headings around them (a department's page of services, a shop's).
    """
    words = len(paras.split())
    if (
        paras
        and _TEASER * words >= _words(" ".join(_ALL_PARA_TEXT(tree)), _TEASER * words)
        and _shares(tree, _SHARE * words)
    ):
        fast = extract(fast=True)
        enough = math.ceil(LOW_COVERAGE * article)
        if _words(fast, enough) < enough:
            return extract(), False
        if (
            _words(fast, FEW_WORDS) >= FEW_WORDS
            and _overlap(Counter(_WORD.findall(paras.lower())), fast)[0] >= LOW_COVERAGE
        ):
            return fast, True
    return extract(), False


def _shares(tree: HtmlElement, most: int) -> bool:
    """Whether the page's words (`_BODY_TEXT`'s less `_UNREAD_TEXT`'s) are at most `most`;
    those in scripts and styles are counted only where all of the body's are more."""
    body = _count(_BODY_TEXT(tree))
    return most >= body or most >= body - _count(_UNREAD_TEXT(tree))


def _count(texts: list[str]) -> int:
    """The words of `texts` (none spans two: they are joined with a space)."""
    return len(" ".join(texts).split())


def _clearly_kept(paras: str, main: str) -> bool:
    """True when `main` has `_CLEARLY_KEPT` of the article text's word count: not judged
    further (counting words is cheap; comparing them costs ~3 ms on a 100 KB article)."""
    enough = math.ceil(_CLEARLY_KEPT * len(paras.split()))
    return _words(main, enough) >= enough


def _fallback(tree: HtmlElement, main: str, title: str, extract: Extract) -> tuple[str, bool]:
    """When the main content is (almost) nothing: a recall-oriented pass, the visible text,
    then the title with the meta/OpenGraph description; the first with `FEW_WORDS` words
    wins, else the longest. `fallback` is False only when the main content stays."""
    best, fallback = main, False
    steps: tuple[Callable[[], str], ...] = (
        lambda: extract(favor_recall=True),
        lambda: visible_text(tree),
        lambda: meta.meta_text(tree, title),
    )
    for step in steps:
        text = step()
        if len(text.split()) > len(best.split()):
            best, fallback = text, True
        if len(best.split()) >= FEW_WORDS:
            break
    return best, fallback


def _check_coverage(paras: str, main: str, extract: Extract) -> tuple[str, float | None]:
    """The main content, or a recall-oriented pass where it covers the page's article text
    better; and the coverage kept when it is under `LOW_COVERAGE`, else None.

    The article text is the words of the `<p>`s in the page's `<article>` (or `<main>`,
    or an `articleBody`): cheap to read, and present on most article pages. A page without
    one is not judged, nor one whose main content has most of the article's word count.
    "Better" is the word-bag F1 against that text, so a pass that brings the missing
    paragraphs back with as much boilerplate again does not win.
    """
    if _clearly_kept(paras, main):
        return main, None
    article = Counter(_WORD.findall(paras.lower()))
    kept = _overlap(article, main)
    if kept[0] >= LOW_COVERAGE:
        return main, None
    recall = extract(favor_recall=True)
    other = _overlap(article, recall)
    if other[1] > kept[1]:
        main, kept = recall, other
    return main, (round(kept[0], 2) if kept[0] < LOW_COVERAGE else None)


def _words(text: str, most: int) -> int:
    """The words of `text`, counted up to `most`: a long text is not split whole."""
    return len(text.split(maxsplit=most))


def _overlap(article: Counter[str], text: str) -> tuple[float, float]:
    """(recall, F1) of `text`'s words against the article's."""
    words = Counter(_WORD.findall(text.lower()))
    common = sum((article & words).values())
    recall = common / sum(article.values())
    precision = common / sum(words.values()) if words else 0.0
    f1 = 2 * precision * recall / (precision + recall) if common else 0.0
    return recall, f1


def article_text(tree: HtmlElement, html: str) -> tuple[str, int]:
    """The text of the paragraphs in the page's article element, if any, and the words of
    that element's whole text (0 without one). The element is the longest
    `articleBody`, else the longest `<article>`, else `<main>` (the narrowest first: a wide
    one holds comments and teasers, and would make a good extraction look partial).

    One that holds under half of the words of all the page's (outermost) elements of its kind
    is one of a series, not the page's article: a forum thread's posts, a listing's cards,
    a collection's items. The wider element is looked at instead, so that an extraction of
    one post does not look complete."""
    for marker, find in _ARTICLES:
        if marker not in html:
            continue
        found = _outermost(find(tree)[:_ARTICLES_MAX])
        texts = [" ".join(_PARA_TEXT(el)) for el in found]
        best = max(range(len(texts)), key=lambda i: len(texts[i]), default=None)
        if best is None or _words(texts[best], FEW_WORDS) < FEW_WORDS:
            continue
        if _SERIES * len(texts[best].split()) >= sum(len(text.split()) for text in texts):
            return texts[best], len(" ".join(_READABLE(found[best])).split())
    return "", 0


def _outermost(elements: list[HtmlElement]) -> list[HtmlElement]:
    """`elements` but those inside another of them (a comment's `<article>` in the post's)."""
    seen = set(elements)
    return [el for el in elements if not any(a in seen for a in el.iterancestors())]


def tidy(markdown: str) -> str:
    """Whitespace that means nothing to a reader but something to a markdown renderer goes.

    trafilatura keeps the source's indentation and whitespace-only lines, and an indented line
    after a blank one renders as a code block: outside fenced code, a line keeps its leading
    spaces only when it is a (nested) list item, and a list item whose text trafilatura put
    on later lines gets it back; tabs become spaces; blank runs become one.
    """
    out: list[str] = []
    fence: str | None = None
    for line in markdown.split("\n"):
        m = _FENCE.match(line)
        if fence is not None:
            if m and m.group(1)[0] == fence[0] and len(m.group(1)) >= len(fence):
                fence = None
            out.append(line)
            continue
        if m:
            fence = m.group(1)
            out.append(line.lstrip())
            continue
        line = line.replace("\t", " ").rstrip()
        if out and _BARE_ITEM.match(out[-1]):  # a list item whose text came on later lines
            if line:
                out[-1] = f"{out[-1]} {line.lstrip()}"
            continue
        if not _LIST_ITEM.match(line):
            line = line.lstrip()
        if line or (out and out[-1]):
            out.append(line)
    return "\n".join(out).strip()


def _extractor(
    tree: HtmlElement, split: marked.Split, stripped: Callable[[], HtmlElement]
) -> Extract:
    """trafilatura on the page as served, its hidden text marked (`split.source`), that text
    cut from what it answers; on the page without it and with what it reveals shown (`tree`,
    repaired when first read: `stripped()`) where a marker is left alone. Where the answer
    keeps under half of what the page reveals, both are read and the one with more of the page
    wins (`marked.better`): the one with the revealed text (an FAQ's answers), or the one the
    page as served led to (a select's options were all it lost; a shop's highlights went when
    its specs tab was shown)."""

    def extract(favor_recall: bool = False, fast: bool = False) -> str:
        if split.source is tree:
            return _extract(tree, favor_recall, fast)
        text = marked.unmark(_extract(split.source, favor_recall, fast))
        if text is None:
            return _extract(stripped(), favor_recall, fast)
        if marked.shows(split.revealed, text):
            return text.strip()
        shown = _extract(stripped(), favor_recall, fast)
        return shown if marked.better(split.revealed, text, shown) else text.strip()

    return extract


def _extract(tree: HtmlElement, favor_recall: bool = False, fast: bool = False) -> str:
    # No url: trafilatura would resolve every link against the site root (wrongly, and at
    # ~7 % of the cleaning time); resolve_markdown_links resolves the ones it keeps.
    try:
        text = trafilatura.extract(  # works on a copy of the tree
            tree, favor_recall=favor_recall, fast=fast, **EXTRACT_OPTIONS
        )
    except Exception:  # a bug in the extractor must not cost the page: fall back
        log.warning("trafilatura failed; using the page's full text", exc_info=True)
        return ""
    return (text or "").strip()
