"""The combination's block walk (`blocks.segment`) and class words, on pages made to show
each rule: what the model reads of the page must not move when the walk is made cheaper."""

from __future__ import annotations

import re

from lxml import html

from sift.clean import blocks

_PAGE = """<html><head><title>t</title></head><body>
<div class="main-nav"><a href="/">Home</a> <a href="/x">Docs</a></div>
<article id="post"><h2>Title here</h2>
<p>First <!-- a note -->part<script>var x = 1;</script> after script <b>bold</b> tail.</p>
<ul><li>one <a href="/o">link</a></li><li><ol><li>deep</li></ol></li></ul>
<pre class="language-python">def f():
    return 1</pre>
</article>trailing words
<footer role="contentinfo"><span class="share-bar"><i class="tags2">x</i></span></footer>
</body></html>"""


def test_the_walk_cuts_the_page_into_blocks_as_a_reader_sees_them() -> None:
    found = blocks.segment(html.fromstring(_PAGE))
    texts = [b.text for b in found]
    assert texts == [
        "Home Docs",
        "Title here",
        "First part after script bold tail.",  # a comment's and a script's tail kept
        "one link",
        "deep",
        "def f(): return 1",
        "trailing words",
        "x",
    ]
    nav, heading, para, item, deep, pre, trailing, footer = found
    assert nav.link_chars == len("HomeDocs") and nav.classes & 1  # the `nav` word
    assert heading.heading_level == 2 and heading.ancestors & 1 << blocks.ANCESTOR_TAGS.index(
        "article"
    )
    assert para.link_chars == 0 and item.link_chars == len("link")
    assert (item.list_depth, deep.list_depth) == (1, 2)
    assert pre.code is not None and pre.code[1] == "def f():\n    return 1"
    assert trailing.tag == "body" and trailing.depth == 1
    assert footer.ancestors & 1 << blocks.ANCESTOR_TAGS.index("footer")


def test_a_class_string_s_flags_are_its_words_flags() -> None:
    """The flags are read word by word (cached per word): the same as the patterns searched
    over the whole class, id and role string."""
    for words in (
        "banner-ad main-nav",
        "AD  Sidebar\tpost",
        "tags2 load-more",
        "xads ad-slot",
        "pagination  prev",
        "",
        "   ",
        "İnfo COMMENT-list",
    ):
        whole = sum(
            1 << i for i, (_, p) in enumerate(blocks.CLASS_WORDS) if re.search(p, words.lower())
        )
        assert blocks._flags_of(words) == whole, words
