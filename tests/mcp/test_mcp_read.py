"""The `read` and `verify` tools over both transports (issue 36): five sources, one budget,
citations in `structuredContent` that `verify` confirms, the blocked source's error, a
cut source read on with `fetch`'s `start_index`, a near-miss never found."""

from __future__ import annotations

import re
from contextlib import AbstractAsyncContextManager
from typing import Any

import pytest
from mcp import Client

from sift.documents import tokens
from tests.support.mcp_client import http_client, mcp_listen, run, stdio_client, text
from tests.support.read_corpus import BLOCKED, FACTS, QUESTION, install
from tests.support.sift_server import FLEET_TOKEN


def whole_text(sift: Any, url: str) -> str:
    parts, offset = [], 0
    while offset is not None:
        env = sift.fetch(url, offset=offset, context=False).json
        parts.append(env["content"])
        offset = env.get("next")
    return "".join(parts)


async def read_and_check(client: Client, sift: Any, urls: list[str]) -> None:
    tools = {t.name: t for t in (await client.list_tools()).tools}
    assert tools["read"].output_schema and tools["verify"].output_schema
    r = await client.call_tool("read", {"urls": urls, "question": QUESTION, "max_tokens": 3000})
    assert not r.is_error, text(r)
    said = r.structured_content
    assert said is not None and said["tokens"] <= 3000
    assert tokens.count(text(r)) <= 3000
    blocked = next(s for s in said["sources"] if s["url"] == BLOCKED)
    assert blocked["status"] == "error" and blocked["code"] == 403
    assert blocked["error"].startswith("blocked: ")
    for planted in FACTS:
        p = next(p for p in said["passages"] if planted.fact in p["text"])
        v = await client.call_tool(
            "verify", {"url": p["url"], "quote": p["text"], "content_hash": p["content_hash"]}
        )
        assert not v.is_error, text(v)
        found = v.structured_content
        assert found is not None and found["found"] and found["changed"] is False
        assert (found["start"], found["end"]) == (p["start"], p["end"])
    cut = next(s for s in said["sources"] if s["status"] == "cut")
    start = cut["next_start_index"]
    r = await client.call_tool("fetch", {"url": cut["url"], "start_index": start})
    assert not r.is_error, text(r)
    expected = whole_text(sift, cut["url"])[start : start + 500]
    if start == 0:  # the title once: the text's opening heading says it, under the header
        heading, _, expected = expected.partition("\n\n")
        assert heading == "# Harbour" and heading not in text(r).split("\n\n", 1)[1]
    assert expected in text(r)
    near = FACTS[1].fact.replace("teal", "blue")
    v = await client.call_tool("verify", {"url": urls[1], "quote": near})
    assert not v.is_error and v.structured_content is not None
    assert v.structured_content["found"] is False and text(v).startswith("not found in ")
    r = await client.call_tool("read", {"urls": [BLOCKED]})
    assert r.is_error and "blocked: " in text(r)


@pytest.mark.parametrize("transport", ["stdio", "http"])
def test_read_and_verify_over_mcp(sift, origin, tmp_path, transport):
    urls = install(origin)
    if transport == "stdio":
        client: AbstractAsyncContextManager[Client] = stdio_client(sift.url)
        run(client, lambda c: read_and_check(c, sift, urls))
        return
    with mcp_listen(sift.url, tmp_path / "mcp.log") as url:
        run(http_client(url, FLEET_TOKEN), lambda c: read_and_check(c, sift, urls))


def test_a_cut_source_read_in_a_page_range_is_read_on_in_that_range(sift, origin):
    """A source read with `pages` is cut in that range's text: its continuation names the
    pages to fetch with the start_index, in the data and in the text."""
    pdf = install(origin)[-1]

    async def scenario(client: Client) -> None:
        asked = {"urls": [pdf], "pages": "20-30", "question": QUESTION, "max_tokens": 300}
        r = await client.call_tool("read", asked)
        assert not r.is_error and r.structured_content is not None, text(r)
        cut = r.structured_content["sources"][0]
        assert cut["status"] == "cut" and cut["next_pages"] == "20-30", cut
        assert f"read on at offset {cut['next_start_index']} in pages 20-30" in text(r), text(r)
        rest = await client.call_tool(
            "fetch",
            {"url": pdf, "pages": cut["next_pages"], "start_index": cut["next_start_index"]},
        )
        pages = {int(n) for n in re.findall(r"^--- page (\d+) ---$", text(rest), re.MULTILINE)}
        assert pages and pages <= set(range(20, 31)), sorted(pages)

    run(stdio_client(sift.url), scenario)
