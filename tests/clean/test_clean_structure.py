"""Markdown that keeps a page's structure, through /v1/fetch and /v2/scrape (issue 34): code
blocks fenced with their language, tables as valid GFM with merged cells repeated, math as
LaTeX, and what the page states about itself as metadata.

The fragments (`tests/pages/structure/`) are in the markup the common generators emit (Prism,
highlight.js, Pygments, GitHub, Stack Exchange, KaTeX, MathJax, Wikipedia's MathML); see the
README there for where each comes from and its licence.
"""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

from sift.clean.tables import problems

PAGES = Path(__file__).parents[1] / "pages" / "structure"
PROSE = (
    "<p>The committee met on Tuesday to discuss the new budget for the public library system, "
    "and several members argued that the reading rooms needed longer opening hours.</p>"
)


def _page(fragment: str, title: str = "Structure test", head: str = "") -> str:
    return (
        f"<html><head><title>{title}</title>{head}</head><body><article><h1>{title}</h1>"
        f"{PROSE}{fragment}{PROSE}</article></body></html>"
    )


def _fetch(sift: Any, origin: Any, path: str, html: str, **fields: Any) -> dict[str, Any]:
    origin.set(path, html)
    fields.setdefault("context", False)
    r = sift.fetch(origin.url(path), **fields)
    assert r.status == 200, r.body
    return dict(r.json)


def _fixture(name: str) -> str:
    return (PAGES / name).read_text(encoding="utf-8")


def test_code_blocks_are_fenced_with_the_pages_language(sift, origin):
    env = _fetch(sift, origin, "/structure/code", _page(_fixture("code.html")))
    text = env["content"]
    # a one-line <pre><code>: a block, not inline code
    assert "```python\npip install sift\n```" in text
    # a bare <pre>, its indentation kept
    assert "```\nusage: sift [options]\n    --port PORT   listen here\n```" in text
    # Stack Exchange's `lang-js`, highlight.js spans joined
    assert "```js\nconst total = items.reduce((a, b) => a + b, 0);\n```" in text
    # GitHub's `highlight-source-rust`, Pygments-style spans joined, whitespace kept
    assert '```rust\nfn main() {\n    println!("hi");\n}\n```' in text
    assert "<span" not in text and "SIFTCODE" not in text


def test_tables_are_valid_gfm_with_merged_cells_repeated(sift, origin):
    env = _fetch(sift, origin, "/structure/table", _page(_fixture("table.html")))
    text = env["content"]
    assert problems(text) == []
    rows = [line for line in text.split("\n") if line.startswith("|")]
    assert rows[0] == "| Library | Library | Opening hours |"
    assert re.fullmatch(r"\|( --- \|){3}", rows[1])
    assert "| Central | Main hall | 9-17 |" in rows
    assert "| Central | Reading room | 10-16 |" in rows  # the rowspan, repeated


def test_math_is_kept_as_latex(sift, origin):
    env = _fetch(sift, origin, "/structure/math", _page(_fixture("math.html")))
    text = env["content"]
    assert "$E = mc^2$" in text  # MathJax's TeX script
    assert "$$\\int_0^1 x^2\\,dx = \\frac{1}{3}$$" in text  # display math, unescaped
    assert text.count("a^2 + b^2 = c^2") == 1  # KaTeX's source once, not its visual copy
    assert "$\\sqrt{2}$" in text  # MathML's TeX annotation


def test_metadata_the_page_states(sift, origin):
    head = (
        '<meta name="description" content="When the library opens.">'
        '<meta property="og:site_name" content="City Library">'
        '<meta name="author" content="Ann Lee">'
        '<meta property="article:published_time" content="2024-03-05T09:00:00Z">'
        '<meta property="article:modified_time" content="2024-04-01">'
        '<link rel="canonical" href="/hours">'
    )
    html = _page("", head=head).replace("<html>", '<html lang="en-GB">')
    env = _fetch(sift, origin, "/structure/meta", html)
    assert env["metadata"] == {
        "description": "When the library opens.",
        "language": "en-GB",
        "site_name": "City Library",
        "canonical": origin.url("/hours"),
        "authors": "Ann Lee",
        "published": "2024-03-05",
        "modified": "2024-04-01",
    }
    r = sift.post("/v2/scrape", {"url": origin.url("/structure/meta")})
    assert r.status == 200, r.body
    meta = r.json["data"]["metadata"]
    assert meta["description"] == "When the library opens."
    assert meta["language"] == "en-GB"
    assert meta["ogSiteName"] == "City Library"
    assert meta["publishedTime"] == "2024-03-05"


def test_the_title_once_under_the_context_header(sift, origin):
    page = _page("", title="Opening hours")
    content = _fetch(sift, origin, "/structure/title", page, context=True)["content"]
    assert content.startswith("# Opening hours\nSource: "), content
    assert content.count("Opening hours") == 1, content
    assert "The committee met on Tuesday" in content
    # a site's name after the title: the page's heading says the part before it
    page = _page("", title="Opening hours").replace(
        "<title>Opening hours", "<title>Opening hours | City"
    )
    content = _fetch(sift, origin, "/structure/title2", page, context=True)["content"]
    assert content.startswith("# Opening hours") and content.count("Opening hours") == 1
    # a heading that is not the title stays
    page = _page("").replace("<h1>Structure test</h1>", "<h1>Opening times</h1>")
    content = _fetch(sift, origin, "/structure/title3", page, context=True)["content"]
    assert "# Opening times" in content, content


def test_the_title_once_in_firecrawl_markdown(sift, origin):
    origin.set("/structure/fc-title", _page("", title="Opening hours"))
    r = sift.post("/v2/scrape", {"url": origin.url("/structure/fc-title")})
    assert r.status == 200, r.body
    markdown = r.json["data"]["markdown"]
    assert markdown.count("Opening hours") == 1, markdown
    assert r.json["data"]["metadata"]["title"] == "Opening hours"


def test_a_code_block_the_combination_puts_back_is_fenced(sift, origin):
    # trafilatura leaves a <pre> in a <form> out; the combination (the page has no article
    # element to vouch for trafilatura's answer) keeps it and puts it back, fenced as the
    # rest of sift fences code: language, indentation and blank lines kept.
    code = "def total(items):\n    return sum(items)\n\nprint(total([1, 2, 3]))"
    page = (
        "<html><head><title>Budget</title></head><body><div class='post'><h1>Budget</h1>"
        f'{PROSE}{PROSE}<form><pre class="language-python">{code}</pre></form>{PROSE}'
        "</div></body></html>"
    )
    text = _fetch(sift, origin, "/structure/combined-pre", page)["content"]
    assert f"```python\n{code}\n```" in text, text


def test_mathml_without_a_tex_source_is_written_as_latex(sift, origin):
    """MathML with no TeX annotation (hand-written, or from tools other than KaTeX) is LaTeX
    too: its scripts, fractions and roots kept, never run together as bare text (`a2`)."""
    fragment = (
        "<p>The area is <math><mi>A</mi><mo>=</mo><mi>π</mi><msup><mi>r</mi><mn>2</mn></msup>"
        "</math> for a circle.</p><p>A half: <math><mfrac><mn>1</mn><mn>2</mn></mfrac></math> "
        "and <math><msqrt><mi>x</mi></msqrt><mo>+</mo><msub><mi>y</mi><mn>10</mn></msub></math>."
        "</p>"
    )
    text = _fetch(sift, origin, "/structure/mathml", _page(fragment))["content"]
    assert "$A=\\pi r^2$" in text
    assert "$\\frac{1}{2}$" in text
    assert "$\\sqrt{x}+y_{10}$" in text


def test_a_canonical_link_no_url_parser_reads_is_left_out_not_a_500(sift, origin):
    """`<link rel="canonical" href="http://[::1">` (an unclosed IPv6 host) failed the cleaning:
    a 500 `internal error` for a page any site may serve. The page states no usable canonical
    URL: the answer leaves it out."""
    head = '<link rel="canonical" href="http://[::1"><meta name="description" content="Hours.">'
    env = _fetch(sift, origin, "/structure/bad-canonical", _page("", head=head))
    assert env["metadata"] == {"description": "Hours."}
