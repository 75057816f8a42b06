"""HTML answers through /v1/fetch are never empty and never mangled (issue 13, item 5): the
fallback cascade and its flag, source indentation, link targets, and the coverage figure."""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
from typing import Any

PROSE = [
    "The committee met on Tuesday to discuss the new budget for the public library system.",
    "Several members argued that the reading rooms needed longer opening hours in winter.",
    "After a long debate the proposal passed with a comfortable majority of the votes cast.",
    "The new hours start next month, and the library will publish them on its notice board.",
]


def _fetch(sift, origin, path: str, html: str) -> dict[str, Any]:
    origin.set(path, html)
    r = sift.fetch(origin.url(path), context=False)
    assert r.status == 200, r.body
    return r.json


def _code_lines(markdown: str) -> list[str]:
    """Lines a markdown renderer shows as an indented code block (outside fences)."""
    found, fence, blank = [], False, True
    for line in markdown.split("\n"):
        if line.lstrip().startswith("```"):
            fence = not fence
        elif not fence and blank and re.match(r"( {4,}|\t)\S", line):
            found.append(line)
        blank = not line.strip()
    return found


def test_a_page_with_only_a_title_and_description_answers_them_flagged(sift, origin):
    html = (
        "<html><head><title>Opening hours</title>"
        '<meta property="og:description" content="The library opens at nine on weekdays '
        'and at ten on Saturdays.">'
        "</head><body></body></html>"
    )
    env = _fetch(sift, origin, "/quality/meta-only", html)
    assert "opens at nine on weekdays" in env["content"]
    assert "Opening hours" in env["content"]
    assert env["extraction"] == "fallback"
    assert "main content not found" in env["warning"]


def test_visible_text_trafilatura_drops_is_answered_flagged(sift, origin):
    # All of it is page chrome to trafilatura (a footer), in every pass.
    footer = "".join(f"<p>{p}</p>" for p in PROSE[:2])
    html = f"<html><head><title>T</title></head><body><footer>{footer}</footer></body></html>"
    env = _fetch(sift, origin, "/quality/footer-only", html)
    assert PROSE[0] in env["content"] and PROSE[1] in env["content"]
    assert env["extraction"] == "fallback"


def test_a_page_with_no_text_at_all_is_flagged_not_passed_off_as_its_content(sift, origin):
    """An empty body, or a page of nothing but an image, has no text to fall back to: its
    empty answer is still flagged as the fallback it is, never an unmarked empty page."""
    for path, html in (("/quality/empty", ""), ("/quality/image", '<img src="a.png" alt="">')):
        env = _fetch(sift, origin, path, html)
        assert env["content"] == ""
        assert env["extraction"] == "fallback", (path, env)
        assert "main content not found" in env["warning"]


def test_a_data_or_javascript_base_href_leaves_links_resolved_against_the_page(sift, origin):
    """As HTML reads a document's base URL: a `<base href>` whose scheme is `data` or
    `javascript` is set aside for the page's own URL (links never left relative)."""
    prose = "".join(f"<p>{p}</p>" for p in PROSE)
    link = '<p>See <a href="hours.html">the opening hours</a> of the library this month.</p>'
    for i, base in enumerate(("javascript:alert(1)//", "data:text/html,x/")):
        html = (
            f'<html><head><title>T</title><base href="{base}"></head>'
            f"<body><article>{prose}{link}</article></body></html>"
        )
        env = _fetch(sift, origin, f"/quality/base{i}/page", html)
        expected = origin.url(f"/quality/base{i}/hours.html")
        assert f"[the opening hours]({expected})" in env["content"], (base, env["content"])


def _pad(n: int) -> str:
    return "\n" + " " * 24 + "\n" + " " * n


def test_indented_source_stays_prose(sift, origin):
    # A teaser list as a CMS indents it: trafilatura keeps the whitespace-only lines and the
    # indentation after them, which a markdown renderer shows as code blocks.
    items = "".join(
        f"<li>{_pad(40)}<a href='/story/{i}'><figure><img src='/i{i}.png'></figure></a>"
        f"{_pad(4)}<div class='headlines'>{_pad(32)}<h3>{_pad(36)}<a href='/story/{i}'>"
        f"{_pad(40)}{p[:30]}{_pad(36)}</a>{_pad(32)}</h3>{_pad(36)}<h4>{p}</h4>{_pad(24)}"
        f"</div>{_pad(24)}</li>"
        for i, p in enumerate(PROSE)
    )
    html = (
        "<html><body><article>"
        f"<p>{PROSE[0]} {PROSE[1]}</p>\n<ul>{items}</ul>\n\t\t<p>\n\t\t{PROSE[2]}</p>"
        "</article></body></html>"
    )
    text = _fetch(sift, origin, "/quality/indented", html)["content"]
    assert f"#### {PROSE[3]}" in text
    assert _code_lines(text) == []
    assert not any(line and not line.strip() for line in text.split("\n"))
    assert "\t" not in text


def test_a_url_with_spaces_and_parentheses_is_a_valid_markdown_link(sift, origin):
    body = "".join(f"<p>{p}</p>" for p in PROSE[:3])
    link = "<p>The minutes are in <a href='/files/minutes (final) v2.html'>the minutes</a>, "
    link += "and <a href='https://127.0.0.1/a b/<c>.html'>the annex</a> too.</p>"
    html = f"<html><body><article>{body}{link}</article></body></html>"
    env = _fetch(sift, origin, "/quality/links/page.html", html)
    text = env["content"]
    assert "](<" not in text
    assert f"[the minutes]({origin.url('/files/minutes%20%28final%29%20v2.html')})" in text
    assert "extraction" not in env and "coverage" not in env  # the main content, whole
    assert "[the annex](https://127.0.0.1/a%20b/%3Cc%3E.html)" in text


def test_low_coverage_of_the_article_is_reported(sift, origin):
    kept = "".join(f"<p>{p}</p>" for p in PROSE)
    # Paragraphs of the article in a box trafilatura prunes as boilerplate, in every pass.
    lost = "".join(f"<p>{p.upper()} {p}</p>" for p in PROSE)
    html = (
        f"<html><body><article>{kept}<div class='footer'>{lost}{lost}</div></article></body></html>"
    )
    env = _fetch(sift, origin, "/quality/coverage", html)
    assert PROSE[0] in env["content"]
    assert 0 < env["coverage"] < 0.5
    assert "of the page's article text" in env["warning"]


def test_an_article_the_page_marks_comes_without_the_text_beside_it(sift, origin):
    # The article element vouches for trafilatura's own pick; the full cascade's comparison
    # with readability would take the longer page text, the promotion beside it included.
    article = "".join(f"<p>{p}</p>" for p in PROSE)
    promo = "Subscribe to our newsletter and follow us for more stories from the region. " * 25
    html = (
        f"<html><head><title>Library hours</title></head><body>"
        f"<article>{article}</article><div>{promo}</div></body></html>"
    )
    env = _fetch(sift, origin, "/quality/article-beside", html)
    assert all(p in env["content"] for p in PROSE)
    assert "newsletter" not in env["content"]


def test_a_local_file_is_flagged_as_the_same_page_fetched(tmp_path, sift, origin):
    """`sift extract` of an HTML file builds its document as a fetch does: the fallback flag
    and the coverage figure come with the text."""
    html = (
        "<html><head><title>Opening hours</title>"
        '<meta property="og:description" content="The library opens at nine on weekdays '
        'and at ten on Saturdays.">'
        "</head><body></body></html>"
    )
    fetched = _fetch(sift, origin, "/quality/local-twin", html)
    page = tmp_path / "hours.html"
    page.write_text(html)
    cfg = tmp_path / "sift.toml"
    cfg.write_text(f'state_dir = "{tmp_path / "state"}"\n')
    env = {k: v for k, v in os.environ.items() if not k.startswith("SIFT_")}
    out = subprocess.run(
        [sys.executable, "-m", "sift", "--config", str(cfg), "extract", "--json", str(page)],
        capture_output=True,
        text=True,
        env=env,
        timeout=60,
    )
    assert out.returncode == 0, out.stderr
    local = json.loads(out.stdout)
    assert local["extraction"] == fetched["extraction"] == "fallback"
    assert local["warning"] == fetched["warning"]


def test_a_product_blurb_in_an_article_does_not_stand_for_the_page(sift, origin):
    """An `<article>` holding a few lines of a page of specs and reviews is not its main
    content: the reviews stay in the answer."""
    specs = "".join(
        f"<tr><td>Spec row {i} channel</td><td>{i * 3} millivolts at the preamp</td></tr>"
        for i in range(40)
    )
    reviews = "".join(
        f"<div class='review'><div class='author'>Reviewer {i}</div><div>I recorded demo "
        f"number {i} through this interface and the preamps stayed quiet even with the gain "
        f"turned most of the way up, which surprised me for the price.</div></div>"
        for i in range(25)
    )
    menu = "".join(f"<li><a href='/c/{i}'>Department {i}</a></li>" for i in range(30))
    page = (
        f"<!DOCTYPE html><html><head><title>Scarlett 4i4</title></head><body><nav><ul>{menu}"
        f"</ul></nav><div class='product'><h1>Scarlett 4i4 audio interface</h1><article><p>A "
        f"four-in, four-out USB-C interface with two mic preamps, for recording a band or a "
        f"podcast at home; it runs from the bus and fits in a bag.</p></article>"
        f"<h2>Specifications</h2><table>{specs}</table><h2>Reviews</h2>{reviews}</div>"
        f"<footer>© Example Music</footer></body></html>"
    )
    answer = _fetch(sift, origin, "/quality/product-blurb", page)
    assert "two mic preamps" in answer["content"]
    assert "preamps stayed quiet" in answer["content"]


def test_every_post_of_a_thread_is_kept(sift, origin):
    """A thread's posts, each an `<article>`: the longest post is not the page's article, so
    an extraction of the first post alone does not pass for the whole page."""
    replies = [
        "Splitting comes from uneven watering: after a dry spell the fruit takes up water "
        "faster than the skin can stretch.",
        "A thick layer of mulch keeps the soil moisture even between rains, which helps more "
        "than anything else I have tried in my own beds.",
        "Some varieties resist cracking much better than others; the cherry types in my plot "
        "never split even in the wettest summer we had.",
        "Pick the fruit as soon as it starts to colour when a storm is forecast, and let it "
        "ripen indoors on the windowsill.",
    ]
    posts = [" ".join(PROSE[:2]), *replies]
    body = "".join(
        f"<article class='post'><div class='author'>member{i}</div><p>{post}</p>"
        f"<p>{post.upper()}</p></article>"
        for i, post in enumerate(posts)
    )
    menu = "".join(f"<li><a href='/c/{i}'>Board {i}</a></li>" for i in range(12))
    page = (
        f"<html><head><title>Thread</title></head><body><nav><ul>{menu}</ul></nav>"
        f"<main><h1>Tomatoes split after rain</h1>{body}</main><footer>Rules</footer>"
        f"</body></html>"
    )
    answer = _fetch(sift, origin, "/quality/thread", page)
    assert all(reply in answer["content"] for reply in replies)


def test_an_accordion_answer_in_a_wrapper_after_its_button_is_kept(sift, origin):
    """An answer hidden until its question is clicked, wrapped in a box right after the
    question's button, is text a person opens: it stays."""
    answers = [f"{p} Question {i} is answered here in full." for i, p in enumerate(PROSE)]
    items = "".join(
        f"<li><div role='button' aria-expanded='false'>Question {i}?</div>"
        f"<div class='box'><div class='panel'><p>{a}</p></div></div></li>"
        for i, a in enumerate(answers)
    )
    page = (
        "<html><head><title>Help</title><style>.panel{visibility:hidden;opacity:0}</style>"
        f"</head><body><main><h1>Questions about the library</h1><ul>{items}</ul></main>"
        "</body></html>"
    )
    answer = _fetch(sift, origin, "/quality/accordion-wrapped", page)
    assert all(a in answer["content"] for a in answers)
