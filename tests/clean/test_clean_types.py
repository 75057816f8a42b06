"""Pages that are not articles, cleaned as well as the extractor reads them directly (issue
22, item 7): shop cards, manuals, service pages. Each page is a small copy of the structure of
a page of the WCXB benchmark where sift lost words that trafilatura kept."""

from __future__ import annotations

from pathlib import Path
from typing import Any

PAGES = Path(__file__).resolve().parents[1] / "pages"


def _content(sift, origin, path: str, html: str) -> str:
    origin.set(path, html)
    r = sift.fetch(origin.url(path), context=False)
    assert r.status == 200, r.body
    env: dict[str, Any] = r.json
    assert env["page"] == "content"
    return str(env["content"])


CARDS = """<html><head><title>Portable power stations</title></head><body>
<main><div class="container"><ul class="grid" role="list">
<li><div class="card"><p class="card__title">
<a href="/p/weekender-80">Weekender 80W 88Wh Portable Power Station</a></p>
<div class="price"><s class="price__was"><span class="money">$179.99</span></s>
<div class="unit-price" hidden><span>Unit price</span><span> / </span></div>
<div class="price__no-variant" hidden><strong>Unavailable</strong></div></div>
<div class="inventory">In stock (165 units)</div></div></li>
<li><div class="card"><p class="card__vendor">ROCKSOLAR</p><p class="card__title">
<a href="/p/max-pro-250">Weekender MAX PRO 250W 277.5 Wh Portable Power Station</a></p>
<div class="price"><strong class="price__current"><span class="money">$189.99</span></strong>
<s class="price__was"><span class="money">$399.99</span></s></div>
<div class="inventory">In stock (186 units)</div></div></li>
</ul></div></main></body></html>"""


def test_hidden_notes_in_a_card_do_not_change_what_is_kept(sift, origin):
    """The extractor weighs each card's text against its links: taking the card's hidden
    notes out made it a link farm and lost every price. It sees them; the answer does not."""
    text = _content(sift, origin, "/types/cards", CARDS)
    assert "In stock (165 units)" in text and "$189.99" in text and "$399.99" in text
    assert "Unavailable" not in text and "Unit price" not in text


def test_an_anchor_without_text_does_not_cost_the_paragraph_after_it(sift, origin):
    """A chapter of the PostgreSQL manual, as served (its whitespace counts)."""
    manual = (PAGES / "manual-anchor.html").read_text()
    text = _content(sift, origin, "/types/manual", manual)
    assert "Indexes are a common way to enhance database performance" in text


CODE = """<html><head><title>Module ngx_http_rewrite_module</title></head><body>
<div id="content"><h1>Module ngx_http_rewrite_module</h1>
<p>The <code>ngx_http_rewrite_module</code> module is used to change request URIs using
regular expressions, return redirects, and select configurations.</p>
<p>The specified <code><i>condition</i></code> is evaluated. If true, the request is assigned
the configuration inside the <code>if</code> directive.</p>
<p>See also the <code><a href="/docs/error_page">error_page</a></code> directive for the codes
it returns.</p></div></body></html>"""


def test_code_with_markup_inside_keeps_the_words_after_it(sift, origin):
    text = _content(sift, origin, "/types/code", CODE)
    assert "The specified `condition` is evaluated. If true," in " ".join(text.split())
    assert "[`error_page`](" in text and "directive for the codes" in text


def test_an_article_whose_paragraphs_are_its_small_part_keeps_the_rest(sift, origin):
    """A city department's page (as served, menus cut short): two paragraphs, then the table
    of the providers it funds, all in its `<article>`. The fast extraction keeps the
    paragraphs only; with under half of the article's words, it does not vouch for itself."""
    page = (PAGES / "department-table.html").read_text()
    text = _content(sift, origin, "/types/department", page)
    assert "Workforce Solutions Capital Area" in text and "Jail to Jobs" in text
    assert "does not award funds to creatives" in text


def _shop_page() -> str:
    clothes = "All Products,T-Shirts & Tops,Hoodies & Sweatshirts,Joggers & Sweatpants,Pants"
    clothes += ",Tracksuits,Long Sleeve Tops,Jackets,Outerwear,Base Layers,Underwear & Basics"
    groups = [
        clothes.split(","),
        ["Shorts Guide", "Running Guide", "Your Edit", "Loyalty", "Bond Street store"],
        ["All Accessories", "All Socks"],
    ]
    menu = "".join(
        "<li><ul>"
        + "".join(f"<li><a href='/c/{i}-{j}'>{name}</a></li>" for j, name in enumerate(group))
        + "</ul></li>"
        for i, group in enumerate(groups)
    )
    return (
        "<html lang='en-US'><head><title>Arrival T-Shirt - Black</title></head><body><div>"
        "<div class='header_wrapper'><header class='header_header'><div class='navigation'>"
        f"<section class='menu-item'><div class='sub-categories'><ul>{menu}</ul></div>"
        "</section></div></header></div><main><div class='pdp_main'><div class='gallery'>"
        "</div><div class='productInformation'><section class='accordion'><div><div "
        "class='sheet'><aside class='sheet_aside'><div class='sheet-content'><div>"
        "<p>The Arrival T-Shirt is your admission to a new, purposeful approach to training. "
        "Made to help you aspire more, perform more and achieve more, this gym top has the "
        "performance fabric you need, with sweat-wicking technology and a lightweight "
        "material that moves with you.</p></div></div></aside></div></div></section></div>"
        "</div><div class='content'><div id='reviews'></div></div></main></div></body></html>"
    )


def test_a_fast_extraction_of_as_many_words_of_the_menu_is_not_the_product(sift, origin):
    """A shop's `<main>` holds one paragraph; the fast extraction answered the menu, as long
    as that paragraph, and was taken for it by its word count."""
    text = _content(sift, origin, "/types/shop", _shop_page())
    assert "sweat-wicking technology" in text and "Hoodies & Sweatshirts" not in text


def test_panels_the_page_reveals_are_read_as_served(sift, origin):
    """A service page (as served, cut down): its sections, a carousel, and FAQ panels styled
    `display: none` that their accordion opens. Shown before extraction, the panels changed
    what the extractor pruned and the sections went; read as served, both stay."""
    page = (PAGES / "service-accordion.html").read_text()
    text = _content(sift, origin, "/types/service", page)
    assert "proactive, hands-on approach to ransomware defense" in text
    assert "Insight is vendor agnostic" in text  # a panel


def _tile(i: int) -> str:
    specs = "".join(
        f"<div><div>{name}: <div> {value} </div></div></div>"
        for name, value in (("Heel to toe drop", f"{i + 4} mm"), ("Cushioning", "Maximum"))
    )
    return f"<li><a href='/p/{i}'>Road shoe model {i}</a><div>{specs}</div></li>"


def test_the_blocks_of_a_list_item_stay_apart(sift, origin):
    """A shop's tiles: each spec a `<div>` in the item; the extractor joined them with
    nothing between ("7 mmCushioning")."""
    tiles = "".join(_tile(i) for i in range(8))
    page = (
        "<html><head><title>Running shoes</title></head><body><main><h1>Running shoes</h1>"
        "<p>Shoes for the road and the trail, from the brands runners trust most, with prices "
        f"for every budget.</p><ul>{tiles}</ul></main></body></html>"
    )
    text = " ".join(_content(sift, origin, "/types/tiles", page).split())
    assert "Road shoe model 3" in text and "7 mm Cushioning: Maximum" in text


def _spec(name: str, tip: str) -> str:
    return (
        f"<li>{name} <div><x-popover><button aria-label='Learn more'>i</button>"
        f"<div style='display:none; width: 400px'><h3>{name}</h3><div>{tip}</div></div>"
        "</x-popover></div></li>"
    )


def test_a_tooltip_in_a_list_item_stays_shut(sift, origin):
    """A shop's spec list: items with a tooltip, its panel styled `display: none` after the
    button that opens it (a person reads it only on asking). Unwrapping the item's `<div>`s
    for the extractor took that style away, and the tooltip read as the item's text."""
    specs = _spec(
        "100% authentic", "Sourced from brands and shipped from <a href='/info'>our warehouses</a>."
    ) + _spec("Try risk-free for 30 days", "Free returns apply.")
    page = (
        "<html><head><title>Almond thins</title></head><body><main><h1>Almond thins</h1>"
        "<p>Our family created these crunchy almond crisps for special occasions, a lighter "
        "version of a secret family recipe, baked in small batches from scratch.</p>"
        f"<ul>{specs}<li>First available: 09/2021</li><li>Product code: ALD-00601</li>"
        "<li>UPC: 722325006016</li></ul></main></body></html>"
    )
    text = _content(sift, origin, "/types/tooltips", page)
    assert "- 100% authentic\n" in text and "Product code: ALD-00601" in text
    assert "warehouses" not in text and "Sourced from brands" not in text


def test_showing_a_tab_does_not_cost_the_visible_one(sift, origin):
    """A shop's product (as served, cut down): an overview tab shown, with a paragraph and a
    list of highlights, and a specs tab of tables styled `display: none` that its tab opens.
    With the specs shown, the extractor kept the paragraph and the tables and dropped the
    highlights; that longer reading has less of the page, and the one as served wins."""
    page = (PAGES / "tab-specs.html").read_text()
    text = _content(sift, origin, "/types/tabs", page)
    assert "a gaming monster designed to outperform" in text
    assert "G-SYNC is groundbreaking new display technology" in text
    assert "NVIDIA GameStream technology" in text
