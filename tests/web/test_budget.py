"""Token budgets and continuation on every door: `/v1/fetch` (`max_tokens`, `offset`, `next`),
`/r/` (query), MCP (`max_tokens`, `start_index`, both transports) and the CLI (`--max-tokens`,
`--offset`). A long page read to its end by continuation is its whole text exactly once, cut
only between blocks, from one download; bad values are a 400 naming the field."""

from __future__ import annotations

import json
import re
import subprocess
import sys
import warnings
from collections.abc import Callable
from typing import Any
from urllib.parse import urlsplit

import pytest
from mcp import Client

from sift.documents import tokens
from tests.support.long_page import cuts_are_clean, long_article
from tests.support.mcp_client import http_client, run, stdio_client, text
from tests.support.sift_server import FLEET_TOKEN, SiftServer

BUDGET = 300
CONTINUE_R = re.compile(r"\n\n\[continue: (\S+)\]\n$")
CONTINUE_MCP = re.compile(r"\n\n\[continue: call fetch again with start_index=(\d+)\]$")
FACTS_MCP = re.compile(r"\n\n\[content_hash: [^\n]*\]$")  # the answer's facts, last


def _whole(sift: SiftServer, url: str, **fields: Any) -> str:
    env = sift.fetch(url, **fields).json
    assert env["success"] and not env["truncated"] and "next" not in env, env
    return str(env["content"])


def _ends(pieces: list[str]) -> list[int]:
    """Where each cut fell in the pieces laid end to end."""
    ends, at = [], 0
    for piece in pieces[:-1]:
        at += len(piece)
        ends.append(at)
    return ends


def _read_http(sift: SiftServer, url: str, **fields: Any) -> tuple[list[str], list[int]]:
    """Every piece of `url` read by following `next`, and where each cut fell."""
    pieces: list[str] = []
    ends: list[int] = []
    offset = None
    while True:
        asked = {**fields, **({"offset": offset} if offset is not None else {})}
        env = sift.fetch(url, **asked).json
        assert env["success"], env
        assert env["tokens"] <= fields["max_tokens"], env["tokens"]
        pieces.append(env["content"])
        if "next" not in env:
            assert env["truncated"] is False
            return pieces, ends
        assert env["truncated"] is True and isinstance(env["next"], int), env["next"]
        offset = env["next"]
        ends.append(offset)
        assert len(pieces) < 500


def test_read_to_the_end_by_offset_over_http(sift: SiftServer, origin: Any) -> None:
    origin.set("/budget/http", long_article())
    url = origin.url("/budget/http")
    pieces, ends = _read_http(sift, url, context=False, max_tokens=BUDGET, offset=0)
    whole = _whole(sift, url, context=False)
    assert len(pieces) > 10 and "".join(pieces) == whole  # no gap, no overlap
    cuts_are_clean(whole, ends)
    assert origin.count("/budget/http") == 1  # every continuation from the cache
    # the answer's size is counted by the named tokenizer, the same rule as the cut
    env = sift.fetch(url, max_tokens=BUDGET).json
    with warnings.catch_warnings():  # its Python layer warns as it loads (Python 3.11)
        warnings.simplefilter("ignore", DeprecationWarning)
        import bpe_openai

        o200k = bpe_openai.get_encoding("o200k_base")
    assert env["tokens"] == len(o200k.encode_ordinary(env["content"])) <= BUDGET
    assert env["content"].startswith("# Budgets and continuation\nSource: ")  # the header


def test_a_budget_alone_cuts_and_every_answer_has_tokens(sift: SiftServer, origin: Any) -> None:
    origin.set("/budget/alone", long_article(6))
    url = origin.url("/budget/alone")
    whole = sift.fetch(url).json
    assert whole["tokens"] > 1_000 and "next" not in whole
    first = sift.fetch(url, max_tokens=BUDGET).json
    assert first["truncated"] is True and first["tokens"] <= BUDGET
    rest = sift.fetch(url, offset=first["next"]).json
    assert not rest["content"].startswith("# ")  # a continuation has no second header
    assert first["content"] + rest["content"] == whole["content"]


@pytest.mark.parametrize("path", ["/article", "/json", "/text"])
def test_a_budget_smaller_than_the_header_is_still_kept(
    sift: SiftServer, origin: Any, path: str
) -> None:
    """`max_tokens` caps the whole content, the context header with it: a budget the header
    alone would fill answers the text without it, within the budget, and reads on."""
    url = origin.url(path)
    header = sift.fetch(url, max_tokens=10_000).json["content"].split("\n\n", 1)[0] + "\n\n"
    assert "Source: " in header
    small = tokens.count(header) - 2
    env = sift.fetch(url, max_tokens=small).json
    assert env["truncated"] is True and env["tokens"] <= small, env
    assert "Source: " not in env["content"] and env["tokens"] == tokens.count(env["content"])
    rest = sift.fetch(url, offset=env["next"], context=False).json
    whole = sift.fetch(url, context=False).json["content"]
    assert env["content"] + rest["content"] == whole
    roomy = sift.fetch(url, max_tokens=tokens.count(header) + 40).json  # room left: the header
    assert roomy["content"].startswith(header) and roomy["tokens"] <= tokens.count(header) + 40


def test_a_long_pages_map_reports_its_exact_tokens_and_its_size_estimated(
    sift: SiftServer, origin: Any
) -> None:
    """A page over the output cap answers its map: the answer's `tokens` is the exact count of
    its content (counted beside the rendering, the header on the loop), and the map's `~T
    tokens` is the page's size estimated on a sample, within 5 % of the count of its text."""
    origin.set("/budget/map-size", long_article(120))
    url = origin.url("/budget/map-size")
    env = sift.fetch(url).json
    assert env["sections"]["map"] is True, env.get("sections")
    assert env["tokens"] == tokens.count(env["content"])
    size = re.search(r"· ~([\d,]+) tokens", env["content"])
    assert size is not None
    said = int(size.group(1).replace(",", ""))
    pieces, _ = _read_http(sift, url, context=False, max_tokens=10_000_000, offset=0)
    exact = tokens.count("".join(pieces))  # its text, read on by `offset` (no section markers)
    assert abs(said - exact) <= 0.05 * exact, (said, exact)


def test_reader_url_reads_on_by_its_continue_line(sift: SiftServer, origin: Any) -> None:
    origin.set("/budget/reader", long_article(30))
    url = origin.url("/budget/reader")
    whole = _whole(sift, url)
    path = f"/r/{url}?max_tokens={BUDGET}"
    pieces = []
    while path:
        r = sift.request("GET", path)
        assert r.status == 200, r.body
        body = r.body.decode()
        found = CONTINUE_R.search(body)
        pieces.append(body[: found.start()] if found else body)
        path = ""
        if found:
            nxt = urlsplit(found.group(1))
            path = f"{nxt.path}?{nxt.query}"
            assert "offset=" in nxt.query and f"max_tokens={BUDGET}" in nxt.query
        assert len(pieces) < 500
    assert len(pieces) > 10 and "".join(pieces).rstrip("\n") == whole.rstrip("\n")
    cuts_are_clean(whole, _ends(pieces))
    assert origin.count("/budget/reader") == 1


def _mcp_reader(url: str, whole: str) -> Callable[[Client], Any]:
    async def scenario(client: Client) -> None:
        tools = {t.name: t for t in (await client.list_tools()).tools}
        fetch = tools["fetch"]
        assert {"max_tokens", "start_index"} <= set(fetch.input_schema["properties"])
        assert "start_index" in (fetch.description or "")
        mapped = await client.call_tool("fetch", {"url": url, "max_tokens": BUDGET})
        assert "[continue: call fetch again with pages=" in text(mapped), text(mapped)
        pieces, start = [], 0  # from the start, as the reference fetch server's default
        while True:
            args = {"url": url, "max_tokens": BUDGET, "start_index": start}
            r = await client.call_tool("fetch", args)
            assert not r.is_error, text(r)
            said = FACTS_MCP.sub("", text(r))
            found = CONTINUE_MCP.search(said)
            pieces.append(said[: found.start()] if found else said)
            if not found:
                break
            start = int(found.group(1))
            assert len(pieces) < 500
        assert len(pieces) > 10 and "".join(pieces) == whole
        cuts_are_clean(whole, _ends(pieces))
        bad = await client.call_tool("fetch", {"url": url, "start_index": -1})
        assert bad.is_error and "`start_index`" in text(bad), text(bad)
        bad = await client.call_tool("fetch", {"url": url, "max_tokens": 0})
        assert bad.is_error and "`max_tokens`" in text(bad), text(bad)

    return scenario


def test_mcp_reads_on_by_start_index_on_both_transports(
    sift_small: SiftServer,
    mcp_http: str,
    origin: Any,
) -> None:
    """From start_index 0 to the end, over stdio and over streamable HTTP; the page is longer
    than the 20k answer cap, so without start_index it answers its map, which names the
    pages to read on with."""
    origin.set("/budget/mcp", long_article(40))
    url = origin.url("/budget/mcp")
    assert sift_small.fetch(url).json["hint"] == "pages"  # over the cap: the map
    whole = "".join(_read_http(sift_small, url, max_tokens=10_000, offset=0)[0])
    run(stdio_client(sift_small.url), _mcp_reader(url, whole))
    run(http_client(mcp_http, FLEET_TOKEN), _mcp_reader(url, whole))
    assert origin.count("/budget/mcp") == 1


def test_cli_reads_on_by_offset(sift: SiftServer, origin: Any) -> None:
    origin.set("/budget/cli", long_article(12))
    url = origin.url("/budget/cli")
    whole = _whole(sift, url)
    env = {"SIFT_TOKEN": FLEET_TOKEN, "SIFT_CONFIG": "", "PATH": "/usr/bin:/bin"}
    base = [sys.executable, "-m", "sift", "fetch", "--server", sift.url, "--max-tokens", "1200"]
    pieces: list[str] = []
    offset: int | None = None
    while True:
        more: list[str] = ["--offset", str(offset)] if offset is not None else []
        out = subprocess.run(
            [*base, *more, url], capture_output=True, text=True, env=env, timeout=120
        )
        assert out.returncode == 0, out.stderr
        pieces.append(out.stdout)
        found = re.search(r"^sift: cut; the rest with --offset (\d+)$", out.stderr, re.M)
        if not found:
            break
        offset = int(found.group(1))
        assert len(pieces) < 20
    assert len(pieces) > 2 and "".join(pieces).rstrip("\n") == whole.rstrip("\n")
    cuts_are_clean(whole, _ends(pieces))
    bad = subprocess.run(
        [*base, "--offset", "-1", url], capture_output=True, text=True, env=env, timeout=120
    )
    assert bad.returncode == 1 and "`offset` must be 0 or more" in bad.stderr
    assert origin.count("/budget/cli") == 1


def test_a_cut_json_answer_continues(sift: SiftServer, origin: Any) -> None:
    items = [{"id": i, "name": f"item number {i}", "tags": ["a", "b"]} for i in range(200)]
    origin.set("/budget/data.json", json.dumps({"items": items}), "application/json")
    url = origin.url("/budget/data.json")
    for fields in ({}, {"jq": ".items[50:]"}):
        whole = _whole(sift, url, context=False, **fields)
        pieces, _ = _read_http(sift, url, context=False, max_tokens=200, **fields)
        assert len(pieces) > 3 and "".join(pieces) == whole
        assert json.loads(whole)
    assert origin.count("/budget/data.json") == 1


def test_a_code_block_is_never_cut_when_it_fits(sift: SiftServer, origin: Any) -> None:
    """A fence with blank lines inside is one block: the cut falls before or after it."""
    fence = "```python\ndef f():\n\n    return 1\n\n\nprint(f())\n```\n"
    doc = "".join(f"Paragraph {i} of the notes.\n\n{fence}\n" for i in range(60))
    origin.set("/budget/notes.txt", doc, "text/plain")
    url = origin.url("/budget/notes.txt")
    whole = _whole(sift, url, context=False)
    pieces, ends = _read_http(sift, url, context=False, max_tokens=40)
    assert "".join(pieces) == whole and len(pieces) > 20
    cuts_are_clean(whole, ends)
    assert all(p.count("```") % 2 == 0 for p in pieces)


def test_a_long_document_map_continues_by_pages(make_sift: Any, origin: Any) -> None:
    """Over the cap, the answer is the map; its `next` names the pages after the leading
    ones, and following `next` reads every section once, to the last."""
    sift = make_sift({"out_cap": 6_000})
    origin.set("/budget/map", long_article(40))
    url = origin.url("/budget/map")
    env = sift.fetch(url).json
    assert env["hint"] == "pages" and env["sections"]["map"] is True
    last = env["sections"]["pages"]
    seen = (
        list(range(1, env["sections"]["returned"][1] + 1))
        if not str(env["next"]).startswith("1-")
        else []
    )
    nxt = env["next"]
    asked: dict[str, Any] = {}
    while nxt:  # a range: ask those pages; a number: the same pages from that offset
        asked = {"pages": nxt} if isinstance(nxt, str) else {**asked, "offset": nxt}
        env = sift.fetch(url, **asked).json
        assert env["success"], env
        seen += [int(n) for n in re.findall(r"^--- section (\d+) ---$", env["content"], re.M)]
        nxt = env.get("next")
    assert seen == list(range(min(seen[0], 2), last + 1)), seen
    assert origin.count("/budget/map") == 1


@pytest.mark.parametrize(
    ("fields", "says"),
    [
        ({"max_tokens": 0}, "`max_tokens` must be 1 to"),
        ({"max_tokens": -5}, "`max_tokens` must be 1 to"),
        ({"max_tokens": "many"}, "Expected `int | null`, got `str` - at `$.max_tokens`"),
        ({"max_tokens": 1.5}, "Expected `int | null`, got `float` - at `$.max_tokens`"),
        ({"offset": -1}, "`offset` must be 0 or more"),
        ({"offset": "x"}, "Expected `int | null`, got `str` - at `$.offset`"),
        ({"offset": 10**9}, "`offset` 1000000000 is past the end of the text"),
    ],
)
def test_bad_budget_values_are_a_400(
    sift: SiftServer, origin: Any, fields: dict[str, Any], says: str
) -> None:
    origin.set("/budget/bad", long_article(2))
    r = sift.fetch(origin.url("/budget/bad"), **fields)
    assert r.status == 400 and r.json["success"] is False, r.body
    assert says in r.json["error"], r.json


@pytest.mark.parametrize("query", ["offset=abc", "max_tokens=0", "offset=-3", "max_tokens=1e3"])
def test_bad_reader_budget_values_are_a_400(sift: SiftServer, origin: Any, query: str) -> None:
    origin.set("/budget/rbad", long_article(2))
    r = sift.request("GET", f"/r/{origin.url('/budget/rbad')}?{query}")
    assert r.status == 400, r.body
    name = query.partition("=")[0]
    assert r.body.startswith(b"400 invalid request: `" + name.encode()), r.body


def test_a_pdf_reads_on_by_offset_with_its_page_markers(sift: SiftServer, origin: Any) -> None:
    """A PDF's text by `offset`: its pages with their markers, laid end to end."""
    from tests.support.pdfs import big_pdf

    origin.set("/budget/doc.pdf", big_pdf(12), "application/pdf")
    url = origin.url("/budget/doc.pdf")
    whole = _whole(sift, url, context=False)
    assert "--- page 12 ---" in whole
    pieces, _ = _read_http(sift, url, context=False, max_tokens=BUDGET, offset=0)
    assert len(pieces) > 5 and "".join(pieces) == whole
    # and within a page range: `next` keeps the range
    env = sift.fetch(url, context=False, pages="3-5", max_tokens=BUDGET).json
    assert isinstance(env["next"], int) or env["next"] == "4-5", env["next"]
    assert origin.count("/budget/doc.pdf") == 1


def test_grep_hits_cut_by_a_budget_continue(sift: SiftServer, origin: Any) -> None:
    """A grep answer cut by the budget names where the next hit starts; read on by `offset`
    (with the same grep), the hits come once each, to the last."""
    origin.set("/budget/grep", long_article(40))
    url = origin.url("/budget/grep")
    whole = _whole(sift, url, context=False, grep="Paragraph")
    assert whole.startswith("40 matching lines") and "\n\n[" not in whole
    first = sift.fetch(url, context=False, grep="Paragraph", max_tokens=BUDGET).json
    assert first["truncated"] is True and first["tokens"] <= BUDGET
    shown = first["content"].rpartition("\n\n[showing ")[0]  # the note on what was left out
    rest, _ = _read_http(
        sift, url, context=False, grep="Paragraph", max_tokens=BUDGET, offset=first["next"]
    )
    assert shown + "\n\n" + "".join(rest) == whole
    assert origin.count("/budget/grep") == 1
