"""Cleaning as pure functions: HTML main content, GFM tables, links, fallbacks, JSON and jq."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from sift.clean import tables
from sift.clean.data import validate_jq
from sift.clean.dispatch import clean
from sift.clean.markdown_links import resolve_markdown_links
from sift.clean.protocol import CleanResult, CleanTask, task_decoder, to_error
from sift.core.childproc import frame
from sift.core.errors import BadRequest, SiftError, Unprocessable

PAGE_URL = "https://blog.example.com/posts/2024/coffee.html"
AEB = Path(__file__).resolve().parents[3] / "shared" / "bench-data" / "aeb"

ARTICLE = """<!doctype html>
<html><head><title>How to Brew Coffee | Example Blog</title>
<meta property="og:title" content="How to Brew Coffee">
<script>window.dataLayer = [];</script><style>body { color: #333 }</style></head>
<body>
<header><nav><ul><li><a href="/">Home</a></li><li><a href="/about">About us</a></li>
<li><a href="/shop">Shop our store</a></li></ul></nav></header>
<div class="ad banner">Buy cheap widgets now! Limited offer!</div>
<main><article>
<h1>How to Brew Coffee</h1>
<p>Brewing coffee at home is easier than you think. In this guide we walk through the
equipment, the ratios and the technique that give a consistently good cup every morning.
Start with the <a href="equipment.html">equipment list</a> and the
<a href="../guides/grind">grind guide</a>.</p>
<h2>Equipment</h2>
<ul><li>A burr grinder, ideally conical</li><li>A kettle with a gooseneck spout</li>
<li>A scale that reads grams</li></ul>
<h2>Ratios</h2>
<p>The ratio of coffee to water matters more than anything else you control. Use the table
below as a starting point and adjust it to your taste over a week of mornings.</p>
<table>
<tr><td>Method</td><td>Coffee (g)</td><td>Water (g)</td></tr>
<tr><td>Pour over</td><td>15</td><td>250</td></tr>
<tr><td>French press</td><td>30</td><td>500</td></tr>
</table>
<h3>A timer in Python</h3>
<pre><code>for second in range(240):
    tick(second)</code></pre>
<p>Once you have the basics, experiment with <strong>water temperature</strong> and
<em>grind size</em>; the <a href="https://other.example/coffee">coffee wiki</a> has more.</p>
<ol><li>Heat the water to 94 degrees.</li><li>Grind the coffee just before brewing.</li>
<li>Pour slowly in circles.</li></ol>
</article></main>
<aside class="sidebar"><h3>Related posts</h3><ul><li><a href="/tea">Green tea guide</a></li>
</ul></aside>
<footer><p>Copyright 2024 Example Blog. All rights reserved.</p>
<a href="/privacy">Privacy policy</a></footer>
</body></html>"""


def html_task(html: str | bytes, url: str = PAGE_URL, content_type: str = "text/html") -> CleanTask:
    body = html.encode() if isinstance(html, str) else html
    return CleanTask(kind="html", body=body, content_type=content_type, url=url)


def clean_ok(task: CleanTask) -> CleanResult:
    result = clean(task)
    assert result.error is None, result.error
    return result


# ---- HTML main content ------------------------------------------------------------------------


def test_article_keeps_structure_and_drops_chrome() -> None:
    r = clean_ok(html_task(ARTICLE))
    md = r.text
    assert r.title == "How to Brew Coffee"
    assert r.hint is None and not r.fallback
    assert "# How to Brew Coffee" in md
    assert "## Equipment" in md and "### A timer in Python" in md
    assert "- A burr grinder, ideally conical" in md
    assert "1. Heat the water to 94 degrees." in md
    assert "```\nfor second in range(240):\n    tick(second)\n```" in md
    assert "**water temperature**" in md
    for chrome in ("Buy cheap widgets", "Copyright 2024", "Shop our store", "Green tea guide"):
        assert chrome not in md
    assert "window.dataLayer" not in md and "color: #333" not in md


def test_tables_come_out_as_valid_gfm() -> None:
    md = clean_ok(html_task(ARTICLE)).text
    assert (
        "| Method | Coffee (g) | Water (g) |\n| --- | --- | --- |\n| Pour over | 15 | 250 |" in md
    )
    assert tables.problems(md) == []


def test_relative_links_resolve_against_the_page() -> None:
    md = clean_ok(html_task(ARTICLE)).text
    assert "[equipment list](https://blog.example.com/posts/2024/equipment.html)" in md
    assert "[grind guide](https://blog.example.com/posts/guides/grind)" in md
    assert "[coffee wiki](https://other.example/coffee)" in md


@pytest.mark.parametrize(
    ("base", "expected"),
    [
        ("https://cdn.example.org/docs/v2/", "https://cdn.example.org/docs/v2/intro.html"),
        ("/manual/", "https://blog.example.com/manual/intro.html"),
    ],
)
def test_links_resolve_against_base_href(base: str, expected: str) -> None:
    html = ARTICLE.replace("<head>", f'<head><base href="{base}">').replace(
        "equipment.html", "intro.html"
    )
    assert f"[equipment list]({expected})" in clean_ok(html_task(html)).text


def test_remaining_relative_markdown_links_are_resolved_outside_code() -> None:
    md = "See [a](b/c.html) and [m](mailto:a@b.c).\n\n```\nx = f[0](y)\n```"
    out = resolve_markdown_links(md, "https://h.example/d/page", "https://h.example/d/page")
    assert "[a](https://h.example/d/b/c.html)" in out
    assert "[m](mailto:a@b.c)" in out and "x = f[0](y)" in out


def test_links_into_the_page_itself_keep_only_their_text() -> None:
    html = ARTICLE.replace("<h2>Equipment</h2>", '<h2><a href="#equipment">Equipment</a></h2>')
    html = html.replace("equipment.html", PAGE_URL + "#ratios")
    md = clean_ok(html_task(html)).text
    assert "\n## Equipment\n" in md
    assert "Start with the equipment list and" in md
    assert "[grind guide](https://blog.example.com/posts/guides/grind)" in md


TABLE_SHAPES = {
    "no header cells": "<table><tr><td>a</td><td>b</td></tr><tr><td>c</td><td>d</td></tr></table>",
    "header row in the middle": (
        "<table><tr><td>a</td><td>b</td></tr><tr><th>H1</th><th>H2</th></tr>"
        "<tr><td>c</td><td>d</td></tr></table>"
    ),
    "caption and foot": (
        "<table><caption>Prices</caption><thead><tr><th>A</th><th>B</th></tr></thead>"
        "<tbody><tr><td>1|2</td><td>3</td></tr></tbody><tfoot><tr><td>t</td><td>4</td></tr>"
        "</tfoot></table>"
    ),
    "nested": (
        "<table><tr><th>A</th><th>B</th></tr><tr><td><table><tr><td>in1</td><td>in2</td></tr>"
        "</table></td><td>x</td></tr></table>"
    ),
    "spans": (
        "<table><tr><th>A</th><th>B</th><th>C</th></tr><tr><td colspan=2>wide</td><td>x</td>"
        "</tr><tr><td rowspan=2>r</td><td>1</td></tr><tr><td>2</td></tr></table>"
    ),
}


@pytest.mark.parametrize("shape", sorted(TABLE_SHAPES))
def test_every_table_shape_is_valid_gfm(shape: str) -> None:
    filler = "<p>" + "Enough article text for the extractor to take this page seriously. " * 6
    html = f"<html><body><article><h1>T</h1>{filler}</p>{TABLE_SHAPES[shape]}{filler}</p>"
    md = clean_ok(html_task(html + "</article></body></html>")).text
    assert "| --- |" in md
    assert tables.problems(md) == []


def test_normalise_fixes_each_flaw() -> None:
    broken = "Text\n  | a | b |\n| c |\n|---|---|\n| d | e | f |\nAfter"
    assert len(tables.problems(broken)) >= 4
    fixed = tables.normalise(broken)
    assert fixed == (
        "Text\n\n| a | b |  |\n| --- | --- | --- |\n| c |  |  |\n| d | e | f |\n\nAfter"
    )
    assert tables.problems(fixed) == []


def test_normalise_leaves_code_and_plain_pipes_alone() -> None:
    md = "```\n| not | a table |\n```\n\n| grammar alternative\n"
    assert tables.normalise(md) == md
    assert tables.problems(md) == []


def test_normalise_unwraps_single_column_layout_tables() -> None:
    assert tables.normalise("| one |\n| two \\| three |") == "one\n\ntwo | three"


# ---- fallbacks and hints ----------------------------------------------------------------------

LONG = "This paragraph is the only content on this page, and it is long enough to count."


def test_empty_extraction_falls_back_to_the_visible_text() -> None:
    html = f"<html><body><div id='comments' class='comments'><p>{LONG}</p></div></body></html>"
    r = clean_ok(html_task(html))
    assert r.fallback
    assert LONG in r.text


def test_fallback_of_chrome_only_page_is_never_empty() -> None:
    r = clean_ok(html_task(f"<html><body><footer><p>{LONG}</p></footer></body></html>"))
    assert r.fallback and LONG in r.text


def test_an_empty_page_is_empty_without_error() -> None:
    r = clean_ok(html_task(b""))
    assert r.text == "" and r.title == ""


def test_a_control_character_reference_in_a_link_is_dropped() -> None:
    page = ARTICLE.replace('href="equipment.html"', 'href="equip&#2;ment list.html"')
    r = clean_ok(html_task(page))
    assert "[equipment list](https://blog.example.com/posts/2024/equipment%20list.html)" in r.text


@pytest.mark.parametrize("wide", ["", "\u2014 \u4e2d"])  # Latin-1 only, and past U+00FF
@pytest.mark.parametrize("odd", ["\ufffe", "\uffff", "\x0b"])
def test_a_character_lxml_refuses_is_dropped_from_the_text(odd: str, wide: str) -> None:
    page = ARTICLE.replace("equipment", f"equip{odd}ment{wide}", 1).encode("utf-8")
    r = clean_ok(html_task(page))
    assert "equipment" in r.text and odd not in r.text


def test_script_only_pages_get_the_browser_hint() -> None:
    spa = (
        "<html><head><title>App</title><script src='/static/main.js'></script></head><body>"
        "<noscript>You need to enable JavaScript to run this app.</noscript>"
        "<div id='root'></div></body></html>"
    )
    bundle = "<html><head><script>" + "var a = 1;" * 3000 + "</script></head><body>Loading…</body>"
    assert clean_ok(html_task(spa)).hint == "browser"
    assert clean_ok(html_task(bundle)).hint == "browser"
    assert clean_ok(html_task("<html><body><p>Short but real.</p></body></html>")).hint is None
    assert clean_ok(html_task(ARTICLE)).hint is None


def test_charset_from_meta_and_title_from_title_element() -> None:
    html = (
        "<html><head><meta charset='windows-1251'><title>Новости дня</title></head><body>"
        f"<article><p>{'Привет, это длинный абзац текста для проверки кодировки. ' * 5}</p>"
        "</article></body></html>"
    ).encode("cp1251")
    r = clean_ok(html_task(html))
    assert r.title == "Новости дня"
    assert "Привет, это длинный абзац" in r.text


def test_input_is_capped() -> None:
    html = f"<html><body><article><p>{LONG}</p><p>TAIL-MARKER</p></article></body></html>"
    task = CleanTask(
        kind="html",
        body=html.encode(),
        content_type="text/html",
        url=PAGE_URL,
        input_cap=html.index("TAIL"),
    )
    r = clean_ok(task)
    assert LONG in r.text and "TAIL-MARKER" not in r.text


# ---- JSON, jq and text ------------------------------------------------------------------------


def json_task(doc: str, program: str | None = None) -> CleanTask:
    return CleanTask(
        kind="json", body=doc.encode(), content_type="application/json", url="", jq=program
    )


def test_json_is_pretty_printed() -> None:
    r = clean_ok(json_task('{"name":"café","tags":["a","b"],"n":{"x":1}}'))
    assert r.text == json.dumps(
        {"name": "café", "tags": ["a", "b"], "n": {"x": 1}}, indent=2, ensure_ascii=False
    )
    assert '  "name": "café"' in r.text


def test_jq_outputs_are_joined_by_newlines() -> None:
    r = clean_ok(json_task('{"items":[{"id":1,"t":"x"},{"id":2,"t":"y"}]}', ".items[] | .t"))
    assert r.text == '"x"\n"y"'
    r = clean_ok(json_task('{"items":[{"id":1}]}', ".items[0]"))
    assert r.text == '{\n  "id": 1\n}'


def test_invalid_jq_is_a_400() -> None:
    with pytest.raises(BadRequest) as info:
        validate_jq(".items[ | ")
    assert info.value.status == 400 and info.value.message.startswith("invalid jq: ")
    r = clean(json_task("{}", ".items[ | "))
    assert r.error is not None and isinstance(to_error(r.error), BadRequest)
    validate_jq(".items[] | select(.id > 1)")


def test_jq_on_invalid_json_is_unprocessable() -> None:
    r = clean(json_task("{not json", "."))
    assert r.error is not None
    err = to_error(r.error)
    assert isinstance(err, Unprocessable) and err.status == 422
    assert err.message.startswith("response is not valid JSON: ")


def test_jq_runtime_error_is_unprocessable() -> None:
    r = clean(json_task('{"a": 3}', ".a.b"))
    assert r.error is not None
    err = to_error(r.error)
    assert isinstance(err, Unprocessable) and err.message.startswith("jq failed: ")


def test_invalid_json_without_jq_is_returned_as_text() -> None:
    assert clean_ok(json_task("{not json")).text == "{not json"


def test_text_is_returned_as_is() -> None:
    task = CleanTask(kind="text", body=b"line 1\r\nline 2\n", content_type="text/plain", url="")
    assert clean_ok(task).text == "line 1\nline 2\n"


@pytest.mark.parametrize(
    "program",
    [
        "env",
        "$ENV.HOME",
        '"\\(env)"',
        '"a" + "\\("b\\($ENV)")"',
        "{$ENV}",
        "{env}",
        "[inputs]",
        "input_filename",
        ". as $x | debug",
        "1.2|env",
        "[..] | env",
        "# ok\nenv",
        'import "m" as m; .',
        'include "m"; .',
        "get_search_list",
        "reduce env as $e (0; 1)",
    ],
)
def test_jq_that_reads_beyond_the_document_is_refused(program: str) -> None:
    with pytest.raises(BadRequest, match="is not allowed"):
        validate_jq(program)


@pytest.mark.parametrize(
    "program",
    [
        ".env",
        '."env"',
        '"env"',
        '"$ENV"',
        '.["$ENV"]',
        '"\\(.env)"',
        "# env $ENV\n.",
        '@base64 "x\\(.input)"',
        ".environment",
        "$__loc__",
        'getpath(["env"])',
        '"a\\\\" | . + "env"',
    ],
)
def test_jq_names_in_strings_fields_and_comments_are_fine(program: str) -> None:
    validate_jq(program)


def test_a_comment_jq_would_continue_is_refused() -> None:
    with pytest.raises(BadRequest, match="comment continued"):
        validate_jq(". # a comment \\\n| .")


def test_jq_needs_json() -> None:
    r = clean(CleanTask(kind="text", body=b"x", content_type="text/plain", url="", jq="."))
    assert r.error is not None and isinstance(to_error(r.error), BadRequest)


def test_protocol_round_trip_and_unknown_errors() -> None:
    task = json_task("{}", ".")
    assert task_decoder.decode(frame(task)[4:]) == task
    err = to_error("error: KeyError")
    assert type(err) is SiftError and err.status == 500


# ---- the article-extraction benchmark's pages -------------------------------------------------


@pytest.mark.skipif(
    not (AEB / "html").is_dir(), reason=f"benchmark pages not present in {AEB}/html"
)
def test_benchmark_pages_are_never_empty_and_tables_are_valid() -> None:
    from bench.aeb import load_pages, sift_clean

    for key, html, url, _true in load_pages(AEB, limit=10):
        md = sift_clean(html, url)
        assert md.strip(), key
        assert tables.problems(md) == [], key


def test_benchmark_metric_matches_its_definition() -> None:
    from bench.aeb import metrics, page_counts, strip_links

    assert page_counts("one two three four five", "one two three four five") == (1.0, 0.0, 0.0)
    tp, fp, fn = page_counts("a b c d e", "a b c d x")  # shingles abcd, bcde vs abcd, bcdx
    assert (tp, fp, fn) == (1 / 3, 1 / 3, 1 / 3)
    assert page_counts("a b", "") == (0.0, 0.0, 1.0)
    # An empty prediction counts against recall only.
    m = metrics([(1.0, 0.0, 0.0), (0.0, 0.0, 1.0)])
    assert (m["precision"], m["recall"]) == (1.0, 0.5)
    assert strip_links(r"[the words](https://x.example/a) stay, PFF\_Browns") == (
        "the words stay, PFF_Browns"
    )
