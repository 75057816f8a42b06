"""MCP in depth, through the SDK's real client on both transports (stdio and streamable HTTP):
the `search` tool, output schemas and structured results, cached documents as resources,
progress, logging, and the protocol's own scenarios (version negotiation, ping, errors)."""

from __future__ import annotations

import json
import re
from collections.abc import Callable, Iterator
from contextlib import AbstractAsyncContextManager
from pathlib import Path
from typing import Any

import anyio
import httpx2
import pytest
from mcp import Client
from mcp.shared.exceptions import MCPError
from mcp.types import INVALID_PARAMS

from tests.support.mcp_client import http_client, mcp_listen, run, stdio_client, text
from tests.support.pdfs import big_pdf
from tests.support.sift_server import FLEET_TOKEN, RESTRICTED_TOKEN, SiftServer

PDF = "application/pdf"
DATA_TOOLS = {"read", "verify", "batch_fetch", "batch_status", "map", "crawl", "crawl_status"}
DATA_TOOLS |= {"search"}
TEXT_TOOLS = {"fetch", "batch_result"}
Connect = Callable[..., AbstractAsyncContextManager[Client]]


@pytest.fixture(scope="module")
def long_pdf() -> bytes:
    return big_pdf(120)


@pytest.fixture
def sift_search(make_sift: Callable[..., SiftServer], searx: Any) -> SiftServer:
    """sift with a search engine (the fake SearXNG) and a 20k answer cap."""
    return make_sift({"out_cap": 20_000, "search": {"searxng_url": searx.url}})


@pytest.fixture(params=["stdio", "http"])
def connect(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[Callable[..., Connect]]:
    """`connect(sift)` → a factory of SDK clients of `sift mcp` in front of `sift`, over the
    transport of the test's parameter; keyword options go to the `Client`."""
    listening: list[Any] = []

    def factory(sift: SiftServer) -> Connect:
        if request.param == "stdio":
            return lambda **options: stdio_client(sift.url, **options)
        listen = mcp_listen(sift.url, tmp_path / "mcp-http.log")
        url = listen.__enter__()
        listening.append(listen)
        return lambda **options: http_client(url, FLEET_TOKEN, **options)

    yield factory
    for listen in listening:
        listen.__exit__(None, None, None)


def test_search_is_listed_and_answers_structured_results(sift_search, searx, origin, connect):
    async def scenario(client: Client) -> None:
        tools = {t.name: t for t in (await client.list_tools()).tools}
        assert "search" in tools
        for name in DATA_TOOLS:
            assert tools[name].output_schema, name
        for name in TEXT_TOOLS:
            assert tools[name].output_schema is None, name
        schema = tools["search"].output_schema or {}
        assert {"query", "results"} <= set(schema["properties"])

        r = await client.call_tool("search", {"query": "clean text", "limit": 2})
        assert not r.is_error, text(r)
        found = r.structured_content
        assert found["query"] == "clean text"
        assert [h["url"] for h in found["results"]] == [origin.url("/article"), origin.url("/text")]
        assert found["results"][0] == {
            "url": origin.url("/article"),
            "title": "An article",
            "description": "About things.",
            "position": 1,
        }
        assert f"1. An article — {origin.url('/article')}" in text(r)
        assert searx.queries[-1]["q"] == "clean text"

        for bad in ({"query": ""}, {"query": "x", "limit": 0}, {"query": 5}, {}):
            r = await client.call_tool("search", bad)
            assert r.is_error and "\n" not in text(r).strip(), (bad, text(r))

    run(connect(sift_search)(), scenario)


def test_search_is_absent_without_a_search_engine(make_sift, connect):
    sift = make_sift()

    async def scenario(client: Client) -> None:
        names = {t.name for t in (await client.list_tools()).tools}
        assert "search" not in names and "fetch" in names
        r = await client.call_tool("search", {"query": "anything"})
        assert r.is_error and "search is not configured" in text(r)

    run(connect(sift)(), scenario)


def test_data_tools_answer_structured_content(sift_search, origin, connect):
    async def scenario(client: Client) -> None:
        r = await client.call_tool("map", {"url": origin.url("/article")})
        assert not r.is_error, text(r)
        site = r.structured_content
        assert site["count"] == len(site["links"]) and text(r).startswith(f"{site['count']} URLs")

        r = await client.call_tool("batch_fetch", {"urls": [origin.url("/article")]})
        assert not r.is_error, text(r)
        job = r.structured_content
        assert job["targets"] == 1 and job["reused"] is False
        r = await client.call_tool("batch_status", {"job_id": job["job_id"], "wait_seconds": 60})
        assert r.structured_content["status"] == "done", r.structured_content
        assert r.structured_content["targets"][0]["status"] == "done"
        assert json.loads(text(r)) == r.structured_content  # the same data as text

    run(connect(sift_search)(), scenario)


def test_documents_are_resources_read_from_the_cache(sift_search, origin, long_pdf, connect):
    origin.set("/res.pdf", long_pdf, PDF)
    before = origin.count("/res.pdf")

    async def scenario(client: Client) -> None:
        templates = (await client.list_resource_templates()).resource_templates
        assert [t.uri_template for t in templates] == ["sift://doc/{hash}{?pages,grep}"]

        r = await client.call_tool("fetch", {"url": origin.url("/res.pdf")})
        assert not r.is_error, text(r)
        links = [c for c in r.content if c.type == "resource_link"]
        assert len(links) == 1, r.content
        uri = str(links[0].uri)
        assert re.fullmatch(r"sift://doc/[0-9a-f]{32}", uri), uri
        listed = (await client.list_resources()).resources
        assert [str(x.uri) for x in listed] == [uri]

        read = await client.read_resource(f"{uri}?pages=51-52")
        body = _text(read)
        assert "--- page 51 ---" in body and "marker-52." in body and "marker-53." not in body
        read = await client.read_resource(f"{uri}?grep=marker-99%5Cb")
        assert "p. 99: " in _text(read)
        assert origin.count("/res.pdf") == before + 1  # every read came from sift's cache

        with pytest.raises(MCPError) as info:
            await client.read_resource("sift://doc/" + "0" * 32)
        assert info.value.error.code == INVALID_PARAMS
        assert "not a document sift answered" in info.value.error.message
        with pytest.raises(MCPError) as info:
            await client.read_resource(f"{uri}?pages=900-901")
        assert info.value.error.code == INVALID_PARAMS and "\n" not in info.value.error.message

    run(connect(sift_search)(), scenario)


def test_progress_while_waiting_for_a_batch(sift_search, origin, connect):
    seen: list[tuple[float, float | None, str | None]] = []

    async def on_progress(progress: float, total: float | None, message: str | None) -> None:
        seen.append((progress, total, message))

    async def scenario(client: Client) -> None:
        urls = [origin.url("/article"), origin.url("/text")]
        r = await client.call_tool("batch_fetch", {"urls": urls})
        job_id = r.structured_content["job_id"]
        r = await client.call_tool(
            "batch_status",
            {"job_id": job_id, "wait_seconds": 60},
            progress_callback=on_progress,
        )
        assert r.structured_content["status"] == "done"

    run(connect(sift_search)(), scenario)
    assert seen and seen[-1] == (2, 2, "2 of 2 targets done"), seen
    assert all(total == 2 for _, total, _ in seen)


def test_progress_of_pdf_pages_extracted(make_sift, origin, long_pdf, connect):
    """The extraction pauses 3 s after page 30 (a test hook of `sift pdftext`; one child, so
    the pages come in order): a fetch with a progress token hears "30 of 120" meanwhile."""
    sift = make_sift(
        {"out_cap": 20_000, "pdf": {"children": 1}},
        extract_args=["--allow-test-hooks", "--test-stall-after", "30", "--test-stall-for", "3"],
    )
    origin.set("/slow-pages.pdf", long_pdf, PDF)
    seen: list[tuple[float, float | None, str | None]] = []

    async def on_progress(progress: float, total: float | None, message: str | None) -> None:
        seen.append((progress, total, message))

    async def scenario(client: Client) -> None:
        url = origin.url("/slow-pages.pdf")
        r = await client.call_tool("fetch", {"url": url}, progress_callback=on_progress)
        assert not r.is_error and "pages 120" in text(r), text(r)

    run(connect(sift)(), scenario)
    assert (30, 120, "pdf: 30 of 120 pages") in seen, seen
    assert all(total == 120 and 0 < done <= 120 for done, total, _ in seen), seen


@pytest.mark.filterwarnings("ignore::mcp.shared.exceptions.MCPDeprecationWarning")
def test_logging_sends_what_the_client_asked_for_and_no_url(sift_search, origin, connect):
    """Over the initialize handshake (`mode="legacy"`, 2025-11-25) the client sets the level
    with `logging/setLevel`; nothing is sent before it asks."""
    got: list[Any] = []

    async def on_log(params: Any) -> None:
        got.append(params)

    async def scenario(client: Client) -> None:
        assert client.server_capabilities.logging is not None
        url = origin.url("/article?key=SECRET-IN-QUERY")
        await client.call_tool("fetch", {"url": url})
        assert got == []
        await client.set_logging_level("info")
        r = await client.call_tool("fetch", {"url": url})
        await client.call_tool("fetch", {"url": "http://10.0.0.1/?key=SECRET-IN-QUERY"})
        await client.send_ping()  # the notifications sent before this answer have arrived
        page = text(r)
        said = [str(p.data) for p in got]
        assert any(s.startswith("fetch: html, ") and s.endswith(", cached") for s in said), said
        assert any(s == "fetch: sift refused (HTTP 403)" for s in said), said
        for s in said:
            assert "SECRET" not in s and "127.0.0.1" not in s and FLEET_TOKEN not in s
            assert page[-200:] not in s
        assert all(p.level in ("info", "warning") and p.logger == "sift" for p in got)

    run(connect(sift_search)(mode="legacy", logging_callback=on_log), scenario)


@pytest.mark.parametrize("version", ["2025-06-18", "2025-11-25", "1999-01-01"])
def test_http_initialize_negotiates_the_version(sift_search, tmp_path, version):
    """A client offering a version the server speaks gets it; another gets the newest
    handshake version the server speaks. Capabilities: tools, resources, logging."""
    body = {
        "jsonrpc": "2.0",
        "id": 1,
        "method": "initialize",
        "params": {
            "protocolVersion": version,
            "capabilities": {},
            "clientInfo": {"name": "t", "version": "1"},
        },
    }
    headers = {
        "Accept": "application/json, text/event-stream",
        "Authorization": f"Bearer {FLEET_TOKEN}",
    }
    with mcp_listen(sift_search.url, tmp_path / "mcp.log") as url:
        r = httpx2.post(url, json=body, headers=headers, trust_env=False, timeout=60)
    assert r.status_code == 200, r.text
    result = _json_rpc(r)["result"]
    assert result["protocolVersion"] == (version if version != "1999-01-01" else "2025-11-25")
    assert {"tools", "resources", "logging"} <= set(result["capabilities"])
    assert result["serverInfo"]["name"] == "sift"


def _text(read: Any) -> str:
    """The text of a resource read (sift's documents are text)."""
    return "".join(getattr(c, "text", "") for c in read.contents)


def _json_rpc(r: httpx2.Response) -> dict[str, Any]:
    """The JSON-RPC message of an answer sent as JSON or as one SSE event."""
    if r.headers["content-type"].startswith("application/json"):
        return dict(r.json())
    data = [ln[5:].strip() for ln in r.text.splitlines() if ln.startswith("data:")]
    return dict(json.loads(next(d for d in data if d)))


@pytest.mark.filterwarnings("ignore::mcp.shared.exceptions.MCPDeprecationWarning")  # ping
def test_protocol_scenarios(sift_search, origin, connect):
    """Both eras of the protocol: the initialize handshake (2025-11-25, with ping) and the
    per-request one (2026-07-28, where ping is gone). An unknown tool and a bad argument are
    tool errors the client can read; an unknown resource URI is an MCP error."""

    async def scenario(client: Client) -> None:
        if client.protocol_version == "2025-11-25":
            await client.send_ping()
        r = await client.call_tool("no_such_tool", {})
        assert r.is_error and "no_such_tool" in text(r)
        r = await client.call_tool("batch_status", {"job_id": "x", "wait_seconds": 9999})
        assert r.is_error and "wait_seconds" in text(r) and "\n" not in text(r)
        with pytest.raises(MCPError):
            await client.read_resource("file:///etc/passwd")
        versions.append(client.protocol_version)

    versions: list[str] = []
    for mode in ("legacy", "auto"):
        run(connect(sift_search)(mode=mode), scenario)
    assert versions == ["2025-11-25", "2026-07-28"]


def test_resources_are_per_client_over_http(sift_search, origin, tmp_path):
    """A document linked to one token's client names nothing for another token's."""

    async def main(url: str) -> None:
        async with http_client(url, FLEET_TOKEN) as mine:
            r = await mine.call_tool("fetch", {"url": origin.url("/article")})
            uri = next(str(c.uri) for c in r.content if c.type == "resource_link")
            assert _text(await mine.read_resource(uri))
        async with http_client(url, RESTRICTED_TOKEN) as theirs:
            assert (await theirs.list_resources()).resources == []
            with pytest.raises(MCPError) as info:
                await theirs.read_resource(uri)
            assert "not a document sift answered" in info.value.error.message

    with mcp_listen(sift_search.url, tmp_path / "mcp.log") as url:
        anyio.run(main, url)


def test_progress_endpoint_answers_only_the_callers_class(make_sift, origin):
    """`GET /v1/progress?url=` (what `sift mcp` polls): a token, a `url`, and nothing of
    work not in flight for the caller's class."""
    sift = make_sift()
    url = origin.url("/nothing-running.pdf")
    r = sift.request("GET", f"/v1/progress?url={url}", token=None)
    assert r.status == 401
    r = sift.request("GET", "/v1/progress")
    assert r.status == 400 and "`url` is required" in r.json["error"]
    r = sift.request("GET", f"/v1/progress?url={url}")
    assert r.status == 200 and r.json == {"success": True, "running": False}


def test_a_page_cut_at_the_cap_is_read_on_by_start_index(sift_search, origin, long_pdf, connect):
    """A page range whose first page is cut by `max_tokens`: sift's note says how to read on
    in the tool's own argument (`start_index`), never the HTTP field `offset`, which the SDK
    drops unread; and reading on that way gives the page's next part."""
    origin.set("/cut.pdf", long_pdf, PDF)

    async def scenario(client: Client) -> None:
        asked = {"url": origin.url("/cut.pdf"), "pages": "20-30", "max_tokens": 300}
        r = await client.call_tool("fetch", asked)
        said = text(r)
        assert not r.is_error, said
        assert "offset=" not in said, said
        found = re.search(r'ask pages="20-30" with start_index=(\d+) for the rest\]', said)
        assert found, said
        more = await client.call_tool("fetch", {**asked, "start_index": int(found[1])})
        assert not more.is_error and "marker-20." not in text(more), text(more)

    run(connect(sift_search)(), scenario)
