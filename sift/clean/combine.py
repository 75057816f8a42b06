"""The main content as a learned combination of two extractors, decided per block.

trafilatura (precise on articles) and resiliparse (Apache-2.0, ~13× faster, better on service
and forum pages) disagree on different pages; choosing per page gains about +0.02 word F1 on
pages never seen, deciding per block more. So the page is cut into its text blocks
(`blocks.py`, the same parse the honest passes prepared), each block gets a row of features
(`features.py`: what each extractor kept of it, its text and link density, tag, depth, place,
class and id words, the page's totals), and a small gradient-boosted model (`model.py`, fitted
by `bench/fit_combiner.py` with cross-validation grouped by site) gives each the probability
that a person would call it main content.

The answer is trafilatura's markdown (its formatting, tables and code kept) with its
paragraphs that the model drops left out, and the blocks it missed that the model keeps put
back where they stand on the page, as plain text (a heading or list item as one, a `<pre>`
fenced). Page gates (`gate.py`, fitted on answers of block models that had not seen the
page) then say whether that answer replaces trafilatura's (where they predict no gain,
trafilatura's stands) and whether a more inclusive one, at a lower threshold, gains more.
"""

from __future__ import annotations

import bisect
import logging
import re
from dataclasses import dataclass

import numpy as np
import numpy.typing as npt
from lxml.html import HtmlElement
from resiliparse.extract.html2text import extract_plain_text

from sift.clean import blocks as blocks_mod
from sift.clean import code, gate, model
from sift.clean.features import Grams, rows, spans, words

log = logging.getLogger("sift.clean")
_FENCE = re.compile(r"^ {0,3}(`{3,}|~{3,})")
_TABLE_LINE = re.compile(r"^\s*\|")
# A unit of trafilatura's answer whose blocks the model keeps at this share (by words) stays.
_HITS = 3  # an n-gram in more blocks than this says nothing about where a unit stands


@dataclass
class Candidates:
    """A page's blocks, their features, and trafilatura's answer cut into units mapped to them."""

    blocks: list[blocks_mod.Block]
    tokens: list[list[str]]
    features: npt.NDArray[np.float64]  # a row per block, `features.FEATURES` its columns
    units: list[str]  # trafilatura's answer: paragraphs, whole tables and code blocks
    unit_blocks: list[list[int]]  # the blocks each unit's words came from
    in_t: npt.NDArray[np.float64]  # the features' `in_t`
    markdown: str = ""  # trafilatura's answer, whole
    other: str = ""  # resiliparse's answer
    vouched: bool = False  # the page's article element vouched for trafilatura's answer


def split_units(markdown: str) -> list[str]:
    """Markdown cut at blank lines, a fenced code block or a table kept whole."""
    units: list[str] = []
    cur: list[str] = []
    fence: str | None = None
    for line in markdown.split("\n"):
        m = _FENCE.match(line)
        if fence is not None:
            cur.append(line)
            if m and m.group(1)[0] == fence[0] and len(m.group(1)) >= len(fence):
                fence = None
            continue
        if m:
            fence = m.group(1)
        if not line.strip() and fence is None:
            if cur:
                units.append("\n".join(cur))
                cur = []
            continue
        cur.append(line)
    if cur:
        units.append("\n".join(cur))
    return units


def _map_units(grams: Grams) -> list[list[int]]:
    """For each unit (`grams`' texts after the two extractors'), the blocks that share its word
    3-grams (a unit of under three words: its 2-gram, else its words); an n-gram in more than
    `_HITS` places among the blocks' (a repeated menu's) is not counted."""
    order = np.argsort(grams.of_block, kind="stable")
    known, first, times = np.unique(grams.of_block[order], return_index=True, return_counts=True)
    units = np.arange(grams.blocks + 2, len(grams.lengths))

    def hits(which: npt.NDArray[np.intp], fewer: int) -> npt.NDArray[np.intp]:
        """(unit, block) pairs of the units `which`."""
        codes, owner, _ = grams.grams(which, fewer)
        if not len(known):
            return np.zeros((2, 0), dtype=np.intp)
        where = np.minimum(np.searchsorted(known, codes), len(known) - 1)
        hit = (known[where] == codes) & (codes >= 0) & (times[where] <= _HITS)
        where, owner = where[hit], owner[hit]
        each = spans(first[where], times[where])
        unit = which[np.repeat(owner, times[where])] - grams.blocks - 2
        return np.stack([unit, grams.owner[order[each]]])

    pairs = hits(units, 0)
    short = units[grams.lengths[units] == 2]  # a 2-word unit that matched no block: its words
    short = short[~np.isin(short - grams.blocks - 2, pairs[0])]
    if len(short):
        pairs = np.concatenate([pairs, hits(short, 1)], axis=1)
    mapped: list[list[int]] = [[] for _ in units]
    for unit, block in zip(*np.unique(pairs, axis=1).tolist(), strict=True):
        mapped[unit].append(block)
    return mapped


def candidates(tree: HtmlElement, markdown: str, other: str) -> Candidates:
    """The blocks of the prepared page `tree`, with trafilatura's answer (`markdown`) and
    resiliparse's main-content text weighed in."""
    return weigh(blocks_mod.segment(tree), markdown, other)


def weigh(found: list[blocks_mod.Block], markdown: str, other: str) -> Candidates:
    """A page's blocks with trafilatura's answer and resiliparse's text weighed in."""
    tokens = [words(b.text) for b in found]
    units = split_units(markdown)
    grams = Grams(tokens, [words(markdown), words(other), *map(words, units)])
    features = rows(found, tokens, grams)
    mapped = _map_units(grams)
    return Candidates(found, tokens, features, units, mapped, features[:, 13], markdown, other)


def _block_markdown(block: blocks_mod.Block) -> str:
    """A block trafilatura left out, in markdown: a `<pre>` fenced as `code.py` fences it."""
    if block.code is not None:
        return code.fence(*block.code)
    if block.heading_level:
        return f"{'#' * block.heading_level} {block.text}"
    if block.tag == "li":
        return f"- {block.text}"
    return block.text


def assemble(c: Candidates, keep: list[bool], kept_share: float = 0.5) -> str:
    """trafilatura's units whose blocks are mostly kept (a unit mapped to no block stays), and
    the kept blocks trafilatura left out, in page order."""
    out: list[tuple[int, str]] = []  # (the block a unit stands at, text)
    anchor = -1
    kept = [_kept(c, hits, keep, kept_share) for hits in c.unit_blocks]
    for n, (unit, hits) in enumerate(zip(c.units, c.unit_blocks, strict=True)):
        if hits:
            anchor = max(anchor, hits[0])
        if kept[n] or _introduces(c.units, kept, n):
            out.append((anchor, unit))
    covered = {i for hits in c.unit_blocks for i in hits}
    anchors = [a for a, _ in out]
    added: list[tuple[int, int, str]] = []
    for i, block in enumerate(c.blocks):
        if keep[i] and i not in covered and c.in_t[i] < 0.5 and c.tokens[i]:
            added.append((bisect.bisect_right(anchors, i), i, _block_markdown(block)))
    merged: list[str] = []
    k = 0
    for pos, (_, text) in enumerate(out):
        while k < len(added) and added[k][0] <= pos:
            merged.append(added[k][2])
            k += 1
        merged.append(text)
    merged.extend(text for _, _, text in added[k:])
    return "\n\n".join(merged)


def _kept(c: Candidates, hits: list[int], keep: list[bool], kept_share: float) -> bool:
    """A unit of trafilatura's mapped to no block stays; else it goes with its blocks."""
    if not hits:
        return True
    weight = sum(len(c.tokens[i]) for i in hits) or 1
    return sum(len(c.tokens[i]) for i in hits if keep[i]) / weight >= kept_share


def _introduces(units: list[str], kept: list[bool], n: int) -> bool:
    """A heading of trafilatura's answer stays where the unit after it stays: it names what
    follows (headings nested as on the page), whatever the model says of its few words."""
    return units[n].startswith("#") and n + 1 < len(units) and kept[n + 1]


# The fitting script's tap: when a list, every page's candidates are appended to it.
TAP: list[Candidates] | None = None
_ENOUGH = 10  # an answer of fewer words than this is not preferred to trafilatura's


def resiliparse_text(html: str) -> str:
    """resiliparse's main-content text of the page (its own fast parse of the markup)."""
    try:
        return extract_plain_text(html, main_content=True, list_bullets=False)
    except Exception:  # an extractor's bug must not cost the page
        log.warning("resiliparse failed; combining without it", exc_info=True)
        return ""


def main_content(tree: HtmlElement, html: str, markdown: str, vouched: bool = False) -> str:
    """The page's main content as the model combines trafilatura's `markdown` with the page's
    blocks; trafilatura's answer where the combination would leave (almost) nothing of it,
    and where the page's article element `vouched` for it (the fitting script's tap still
    gets the page's candidates: the model is fitted on every page)."""
    if vouched and TAP is None:
        return markdown
    c = candidates(tree, markdown, resiliparse_text(html))
    c.vouched = vouched
    if TAP is not None:
        TAP.append(c)
    if vouched:
        return markdown
    try:
        trees = model.shipped()
    except FileNotFoundError:  # not fitted yet (the fitting script's first pass)
        return markdown
    return chosen(trees, c, trees.proba(c.features))


def chosen(trees: model.Trees, c: Candidates, proba: npt.NDArray[np.float64]) -> str:
    """The answer the page gates choose, from the block model's probabilities `proba`.

    The first gate, at the model's threshold, says whether the combination gains over
    trafilatura's answer at all (where it predicts no gain, trafilatura's stands); each next
    gate, at a lower threshold, whether a more inclusive answer gains more (listings and
    collections, whose blocks the model is less sure of). A model with no gate: the
    combination at its threshold."""
    if not trees.gates:
        return answer(c, [bool(p) for p in proba >= trees.threshold])
    sizes = np.array([len(t) for t in c.tokens], dtype=np.float64)
    best, text = 0.0, c.markdown
    for g in trees.gates:
        option = answer(c, [bool(p) for p in proba >= g.threshold])
        x = gate.row(c.features, sizes, proba, g.threshold, c.markdown, option)
        gain = float(g.raw([x])[0])
        if gain > best:
            best, text = gain, option
        elif not best:
            break  # the first gate predicts no gain: trafilatura's answer stands
    return text


def answer(c: Candidates, keep: list[bool]) -> str:
    """The blocks `keep` says, assembled; trafilatura's answer where that would leave (almost)
    nothing of it."""
    text = assemble(c, keep)
    have = len(text.split(maxsplit=_ENOUGH))
    if have < _ENOUGH and len(c.markdown.split(maxsplit=_ENOUGH)) > have:
        return c.markdown
    return text
