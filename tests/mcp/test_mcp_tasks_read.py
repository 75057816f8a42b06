"""A `read` of many sources as an MCP task (issue 36 item 3), and `tasks/list`: through the
SDK's client with the tasks extension (2026-07-28) a read of several sources answers a task
whose progress counts the sources fetched, whose result is the inline read of the same
sources (from sift's cache), and which cancels; a short read, or one sift will not hold as a
job (the caller's job still running, a source the guard refuses), answers inline. Through the
raw 2025-11-25 client a read asked as a task runs to `tasks/result`, and `tasks/list` shows
the caller's own tasks, never another's."""

from __future__ import annotations

from collections.abc import Callable, Iterator
from contextlib import AbstractAsyncContextManager, AbstractContextManager
from pathlib import Path
from typing import Any

import pytest
from mcp import Client
from mcp.types import CallToolResult

from tests.support.mcp_client import http_client, mcp_listen, run, stdio_client, text
from tests.support.mcp_raw import RawHttp, RawStdio
from tests.support.mcp_tasks import TasksClient, cancel_task, get_task, start, until_task
from tests.support.read_corpus import BLOCKED, FACTS, QUESTION, install
from tests.support.sift_server import FLEET_TOKEN, RESTRICTED_TOKEN, SiftServer

Connect = Callable[..., AbstractAsyncContextManager[Client]]
RELATED = "io.modelcontextprotocol/related-task"


@pytest.fixture(params=["stdio", "http"])
def connect(request: pytest.FixtureRequest, sift: SiftServer, tmp_path: Path) -> Iterator[Connect]:
    """SDK clients of one `sift mcp` in front of `sift`, over the test's transport."""
    if request.param == "stdio":
        yield lambda **options: stdio_client(sift.url, **options)
        return
    with mcp_listen(sift.url, tmp_path / "mcp-http.log") as url:
        yield lambda **options: http_client(url, FLEET_TOKEN, **options)


def sources(origin: Any) -> list[str]:
    """The read corpus without its blocked source (a guard refusal keeps a read inline)."""
    return [u for u in install(origin) if u != BLOCKED]


def test_a_long_read_is_a_task_answered_as_the_inline_read(sift, origin, connect, tmp_path):
    hold = f"read-task-{tmp_path.name}"
    urls = [*sources(origin), origin.url(f"/hold/{hold}")]
    args = {"urls": urls, "question": QUESTION, "max_tokens": 3000}
    ended: list[dict[str, Any]] = []

    async def as_task(client: Client) -> None:
        task = await start(client, "read", args)
        assert task["status"] == "working" and task["taskId"].startswith("read.")
        assert len(task["taskId"]) < 400  # the question rides in the id, bounded
        origin.wait_arrived(hold)
        four = await until_task(client, task["taskId"], lambda t: "4 of 5" in t["statusMessage"])
        assert four["status"] == "working" and "result" not in four
        assert four["statusMessage"] == "running: 4 of 5 sources fetched"
        origin.release(hold)
        done = await until_task(client, task["taskId"], lambda t: t["status"] != "working")
        assert done["status"] == "completed", done
        ended.append(done["result"])

    async def inline(client: Client) -> None:
        r = await client.call_tool("read", args)
        assert not r.is_error, text(r)
        said = CallToolResult.model_validate(ended[0])
        assert not said.is_error and said.structured_content == r.structured_content
        assert text(said) == text(r)
        assert said.structured_content is not None and said.structured_content["tokens"] <= 3000
        quoted = " ".join(p["text"] for p in said.structured_content["passages"])
        assert all(planted.fact in quoted for planted in FACTS), quoted

    before = {p.path: origin.count(p.path) for p in FACTS}  # the origin outlives one test
    run(connect(extensions=[TasksClient()]), as_task)
    fetched = {p.path: origin.count(p.path) for p in FACTS}
    assert all(fetched[p] == before[p] + 1 for p in fetched), (before, fetched)  # once each
    run(connect(), inline)  # a client without tasks: today's read
    assert {p.path: origin.count(p.path) for p in FACTS} == fetched  # the read: sift's cache


def test_a_read_task_cancels_and_a_short_busy_or_refused_read_answers_inline(
    sift, origin, connect, tmp_path
):
    hold = f"read-cancel-{tmp_path.name}"
    urls = sources(origin)

    async def scenario(client: Client) -> None:
        task = await start(client, "read", {"urls": [origin.url(f"/hold/{hold}"), *urls]})
        origin.wait_arrived(hold)
        busy = await client.session.call_tool("read", {"urls": urls[1:]}, allow_claimed=True)
        assert isinstance(busy, CallToolResult) and not busy.is_error  # one job at a time
        assert len((busy.structured_content or {})["sources"]) == 3
        assert await cancel_task(client, task["taskId"]) == {"resultType": "complete"}
        over = await get_task(client, task["taskId"])
        assert over["status"] == "cancelled" and "result" not in over, over
        origin.release(hold)

        short = await client.session.call_tool("read", {"urls": urls[:2]}, allow_claimed=True)
        assert isinstance(short, CallToolResult) and not short.is_error  # two: no task
        blocked = await client.session.call_tool(
            "read", {"urls": [*urls, BLOCKED]}, allow_claimed=True
        )
        assert isinstance(blocked, CallToolResult) and not blocked.is_error, blocked
        assert blocked.structured_content is not None
        assert blocked.structured_content["sources"][-1]["code"] == 403

    run(connect(extensions=[TasksClient()]), scenario)


@pytest.fixture(params=["stdio", "http"])
def raw(
    request: pytest.FixtureRequest, sift: SiftServer, tmp_path: Path
) -> Iterator[Callable[[str], AbstractContextManager[Any]]]:
    """Raw 2025-11-25 clients of one `sift mcp`, each with the token given."""
    if request.param == "stdio":
        yield lambda token: RawStdio(sift.url, token)
        return
    with mcp_listen(sift.url, tmp_path / "mcp-http.log") as url:
        yield lambda token: RawHttp(url, token)


def test_a_read_task_and_tasks_list_on_2025_11_25(raw, origin, tmp_path):
    hold = f"list-{tmp_path.name}"
    urls = sources(origin)
    with raw(FLEET_TOKEN) as mcp:
        assert mcp.hello["result"]["capabilities"]["tasks"]["list"] == {}
        listed = {t["name"]: t for t in mcp.ask("tools/list")["result"]["tools"]}
        assert listed["read"]["execution"] == {"taskSupport": "optional"}
        asked = {"urls": urls[:2], "question": QUESTION, "max_tokens": 2000}
        said = mcp.ask("tools/call", {"name": "read", "arguments": asked, "task": {}})
        task = said["result"]["task"]  # asked for: a task however few its sources
        assert task["taskId"].startswith("read.") and task["status"] == "working"
        result = mcp.ask("tasks/result", {"taskId": task["taskId"]})["result"]
        assert result["_meta"][RELATED] == {"taskId": task["taskId"]}
        assert not result.get("isError") and result["structuredContent"]["max_tokens"] == 2000
        inline = mcp.ask("tools/call", {"name": "read", "arguments": asked})["result"]
        assert inline["structuredContent"] == result["structuredContent"]

        args = {"urls": [origin.url(f"/hold/{hold}")]}
        made = mcp.ask("tools/call", {"name": "batch_fetch", "arguments": args, "task": {}})
        live = made["result"]["task"]["taskId"]
        listed = mcp.ask("tasks/list")["result"]
        assert [t["taskId"] for t in listed["tasks"]] == [live] and "nextCursor" not in listed
        assert listed["tasks"][0]["status"] == "working"
        assert mcp.ask("tasks/list", {"cursor": "x"})["error"]["code"] == -32602
        with raw(RESTRICTED_TOKEN) as stranger:
            assert stranger.ask("tasks/list")["result"]["tasks"] == []
            assert stranger.ask("tasks/get", {"taskId": task["taskId"]})["error"]["code"] == -32602
        origin.release(hold)
        mcp.ask("tasks/result", {"taskId": live})
        assert mcp.ask("tasks/list")["result"]["tasks"] == []
        bad = task["taskId"] + "!"
        assert mcp.ask("tasks/get", {"taskId": bad})["error"]["code"] == -32602
