"""Rendering `PagedText`, a long document's pages (a PDF's) or sections (an HTML page's):
markers, the map, page ranges, grep (RE2), HTML sections."""

from __future__ import annotations

import re

import pytest

from sift.core.errors import BadRequest
from sift.core.types import OutlineItem
from sift.documents.grep import GREP_MAX_HITS, compile_grep
from sift.documents.map import MAP_WINDOW, outline_lines
from sift.documents.pages import PagedText, parse_pages, with_markers
from sift.documents.render import render
from sift.documents.sections import html_document, split_sections

PAGES = (
    "Page 1 opens here.\nThe alpha kestrel opening is on page 1.",
    "Page 2 opens here.\nThe quantum marmalade theorem is on page 2.\nIt closes page 2.",
    "Page 3 opens here.\nThe final zephyr summary is on page 3.",
)
OUTLINE = (OutlineItem("1 Opening", 1, 1), OutlineItem("2 Theorem", 2, 1))
THREE = PagedText(pages=PAGES, title="Three Page Test", outline=OUTLINE)


def big_doc(pages: int = 300, outline: int = 30, page_chars: int = 3000) -> PagedText:
    body = "lorem ipsum dolor sit amet " * (page_chars // 27)
    texts = tuple(f"Page {n} marker-{n}.\n{body}" for n in range(1, pages + 1))
    items = tuple(
        OutlineItem(f"Chapter {i} of a rather long book", i * 3 + 1, 1 + i % 3)
        for i in range(outline)
    )
    return PagedText(pages=texts, title="A Long Report", outline=items)


def test_markers_go_between_pages() -> None:
    text = with_markers(["one", "two", "three"], [1, 2, 3])
    assert text == "one\n\n--- page 2 ---\n\ntwo\n\n--- page 3 ---\n\nthree"
    assert with_markers(["x", "y"], [41, 42]).startswith("--- page 41 ---\n\nx")


def test_whole_text_when_it_fits() -> None:
    r = render(THREE, out_cap=50_000)
    assert not r.map and not r.truncated and r.returned == (1, 3)
    assert "--- page 2 ---" in r.content and "--- page 3 ---" in r.content
    assert "--- page 1 ---" not in r.content


def test_map_over_the_cap() -> None:
    doc = big_doc()
    r = render(doc, out_cap=50_000)
    assert r.map and r.truncated and len(r.content) <= 50_000
    head = r.content[:MAP_WINDOW]
    assert head.startswith("# A Long Report\npages 300 · ~")
    assert "- Chapter 1 of a rather long book (p. 4)" in head
    assert 'pages="a-b"' in head and "grep=" in head
    assert r.returned is not None and r.returned[0] == 1
    assert "Page 1 marker-1." in r.content
    lead = r.content[r.content.index("Page 1 marker-1.") :]
    assert len(lead) <= 50_000 // 4


def test_huge_outline_is_trimmed_into_the_first_10k() -> None:
    doc = big_doc(pages=2000, outline=1500)
    r = render(doc, out_cap=200_000)
    assert r.map and len(r.content) <= 200_000
    head = r.content[:MAP_WINDOW]
    assert "omitted" in head or "more outline entries" in head
    assert 'pages="a-b"' in head and "grep=" in head


def test_outline_loses_deep_levels_first() -> None:
    items = tuple(OutlineItem(f"t{i}", i + 1, 1 if i % 4 == 0 else 2) for i in range(200))
    lines = outline_lines(items, 1200)
    assert lines[-1] == "- … 150 entries below level 1 omitted (use grep)"
    assert all(not line.startswith("  ") for line in lines)
    assert sum(len(x) + 1 for x in lines) <= 1200


def test_map_with_a_small_cap_stays_within_it() -> None:
    for cap in (300, 1000, 5000):
        r = render(big_doc(), out_cap=cap)
        assert len(r.content) <= cap and r.map


def test_pages_range_exact() -> None:
    r = render(THREE, out_cap=50_000, pages="2-3")
    assert r.returned == (2, 3) and not r.truncated
    assert r.content.startswith("--- page 2 ---\n\nPage 2 opens here.")
    assert "Page 1" not in r.content and "--- page 3 ---" in r.content


@pytest.mark.parametrize("spec", ["0-1", "5-4", "999", "0", "4-"])
def test_pages_out_of_range(spec: str) -> None:
    with pytest.raises(BadRequest, match=r"pages out of range \(1–3\)") as err:
        render(THREE, out_cap=50_000, pages=spec)
    assert err.value.status == 400


@pytest.mark.parametrize("spec", ["", "abc", "1-2-3", "-3", "1,2", "1..2"])
def test_pages_malformed_names_the_field(spec: str) -> None:
    with pytest.raises(BadRequest, match="`pages`"):
        parse_pages(spec, 10)


def test_pages_forms() -> None:
    assert parse_pages("2", 10) == (2, 2)
    assert parse_pages("3-", 10) == (3, 10)
    assert parse_pages(" 4 - 6 ", 10) == (4, 6)
    assert parse_pages("4–6", 10) == (4, 6)
    assert parse_pages("8-99", 10) == (8, 10)  # the end is clamped


def test_pages_capped_at_100_with_a_note() -> None:
    doc = big_doc(pages=300, page_chars=100)
    r = render(doc, out_cap=1_000_000, pages="1-300")
    assert r.returned == (1, 100) and r.truncated
    assert 'pages="101-300"' in r.content and "--- page 100 ---" in r.content
    assert "--- page 101 ---" not in r.content


def test_pages_capped_by_out_cap() -> None:
    doc = big_doc(pages=50)
    r = render(doc, out_cap=10_000, pages="1-50")
    assert len(r.content) <= 10_000 and r.truncated
    assert r.returned is not None and r.returned[1] < 50
    assert f'pages="{r.returned[1] + 1}-50"' in r.content


def test_grep_finds_the_phrase_on_page_2() -> None:
    r = render(THREE, out_cap=50_000, grep="marmalade theorem")
    assert r.grep_hits == 1
    assert "p. 2: The quantum marmalade theorem is on page 2." in r.content
    assert "Page 2 opens here." in r.content  # one line of context each side
    assert "It closes page 2." in r.content


def test_grep_case_rules() -> None:
    assert render(THREE, out_cap=50_000, grep="MARMALADE").grep_hits == 0
    assert render(THREE, out_cap=50_000, grep="Marmalade").grep_hits == 0
    assert render(THREE, out_cap=50_000, grep="marmalade").grep_hits == 1
    assert render(THREE, out_cap=50_000, grep=r"page\s2").grep_hits == 3  # \s is not upper


def test_grep_within_pages() -> None:
    r = render(THREE, out_cap=50_000, grep="opens here", pages="2-3")
    assert r.grep_hits == 2 and "p. 1:" not in r.content and r.returned == (2, 3)


def test_grep_pattern_limits() -> None:
    with pytest.raises(BadRequest, match="over 200 bytes"):
        render(THREE, out_cap=50_000, grep="a" * 201)
    render(THREE, out_cap=50_000, grep="a" * 200)
    with pytest.raises(BadRequest, match="invalid grep pattern"):
        compile_grep("(unclosed")
    with pytest.raises(BadRequest, match="invalid grep pattern"):
        compile_grep(r"(a)\1")  # backreferences: not RE2


def test_grep_is_linear_time() -> None:
    """`(a+)+$` on a line of 1 MB of `a` and a `b` ends: RE2 has no catastrophic backtracking
    (a backtracking engine tries 2^1,000,000 splits of that line and never answers)."""
    doc = PagedText(pages=("a" * 1_000_000 + "b\n" + "a" * 1000,))
    r = render(doc, out_cap=50_000, grep="(a+)+$")
    assert r.grep_hits == 1 and len(r.content) < 2000


def test_grep_shows_100_matches() -> None:
    doc = PagedText(
        pages=tuple("\n".join(f"needle {n}.{i}" for i in range(30)) for n in range(1, 11))
    )
    r = render(doc, out_cap=1_000_000, grep="needle")
    assert r.grep_hits == 300 and r.truncated
    assert len(re.findall(r"^p\. \d+: needle", r.content, re.M)) == GREP_MAX_HITS
    assert "showing 100 of 300" in r.content


def test_grep_no_match() -> None:
    r = render(THREE, out_cap=50_000, grep="nowhere")
    assert r.grep_hits == 0 and "no line matches" in r.content


def test_warnings_surface() -> None:
    doc = PagedText(pages=PAGES, warnings={2: "text may be garbled (font without Unicode map)"})
    r = render(doc, out_cap=50_000)
    assert "--- page 2 ---\n\n[warning: text may be garbled" in r.content
    r = render(doc, out_cap=50_000, pages="2")
    assert r.note is not None and "pages 2: text may be garbled" in r.note
    r = render(doc, out_cap=50_000, grep="page 2")
    assert "[warning: pages 2:" in r.content
    big = big_doc()
    flagged = PagedText(pages=big.pages, warnings={5: "text may be garbled (control characters)"})
    r = render(flagged, out_cap=20_000)
    assert r.map and "[warning: pages 5: text may be garbled" in r.content[:MAP_WINDOW]


def test_extracted_part_is_said() -> None:
    doc = PagedText(pages=PAGES, total=2100)
    assert "pages 1–3 of 2100 extracted" in render(doc, out_cap=50_000).content
    big = big_doc()
    r = render(PagedText(pages=big.pages, total=2100), out_cap=20_000)
    assert "pages 1–300 of 2100 extracted" in r.content


MARKDOWN = "\n".join(
    [
        "Intro paragraph before any heading.",
        "# Title",
        "Short.",
        "## Part A",
        *(["A paragraph of part A. " * 20, ""] * 10),
        "```",
        "# not a heading inside a fence",
        "```",
        "## Part B",
        "tiny",
        "### B.1",
        *(["B one text. " * 40, ""] * 30),
    ]
)


def test_split_sections() -> None:
    sections = split_sections(MARKDOWN)
    assert len(sections) > 2
    assert "".join(sections).replace("\n", "") == MARKDOWN.replace("\n", "")
    assert all(len(s) <= 8_000 for s in sections)
    assert not any(s.startswith("# not a heading") for s in sections)


def test_html_document_gets_the_same_treatment() -> None:
    doc = html_document(MARKDOWN, title="Long page")
    assert doc.kind == "html"
    titles = [(o.title, o.level) for o in doc.outline]
    assert titles[:3] == [("Title", 1), ("Part A", 2), ("Part B", 2)]
    assert all(1 <= o.page <= doc.count for o in doc.outline)
    r = render(doc, out_cap=5_000)
    assert r.map and "sections" in r.content and "(s. " in r.content
    r = render(doc, out_cap=1_000_000, pages="2")
    assert r.content.startswith("--- section 2 ---")
    r = render(doc, out_cap=1_000_000)
    assert "--- section" not in r.content  # an HTML page that fits reads as it was
