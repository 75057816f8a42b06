"""Long work as MCP tasks (2026-07-28's tasks extension), through the SDK's own client with a
`ClientExtension` that declares it (tests/support/mcp_tasks.py), on both transports: a batch
and a crawl answer a task, with progress in its status, the result when done, and cancel; a
client without the extension gets today's answers."""

from __future__ import annotations

from collections.abc import Callable, Iterator
from contextlib import AbstractAsyncContextManager
from pathlib import Path
from typing import Any

import pytest
from mcp import Client
from mcp.shared.exceptions import MCPError
from mcp.types import INVALID_PARAMS

from tests.support.mcp_client import http_client, mcp_listen, run, stdio_client, text
from tests.support.mcp_tasks import (
    TasksClient,
    cancel_task,
    get_task,
    start,
    until_task,
)
from tests.support.origin import install_site, slow_chain
from tests.support.sift_server import FLEET_TOKEN, RESTRICTED_TOKEN, SiftServer

Connect = Callable[..., AbstractAsyncContextManager[Client]]


@pytest.fixture(params=["stdio", "http"])
def connect(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[Callable[..., Connect]]:
    """`connect(sift)` → a factory of SDK clients of `sift mcp` in front of `sift`, over the
    transport of the test's parameter; keyword options go to the `Client`."""
    listening: list[Any] = []

    def factory(sift: SiftServer, token: str = FLEET_TOKEN) -> Connect:
        if request.param == "stdio":
            return lambda **options: stdio_client(sift.url, token=token, **options)
        listen = mcp_listen(sift.url, tmp_path / f"mcp-http-{len(listening)}.log")
        url = listen.__enter__()
        listening.append(listen)
        return lambda **options: http_client(url, token, **options)

    yield factory
    for listen in listening:
        listen.__exit__(None, None, None)


def test_a_batch_is_a_task_with_progress_and_its_result(sift, origin, connect, tmp_path):
    hold = f"task-batch-{tmp_path.name}"  # a hold released stays released: one per test
    urls = [origin.url("/article"), origin.url(f"/hold/{hold}")]

    async def scenario(client: Client) -> None:
        task = await start(client, "batch_fetch", {"urls": urls})
        assert task["resultType"] == "task" and task["status"] == "working"
        assert task["taskId"].startswith("batch.") and task["pollIntervalMs"] > 0
        assert task["ttlMs"] > 0 and task["createdAt"] and task["lastUpdatedAt"]
        origin.wait_arrived(hold)
        half = await until_task(client, task["taskId"], lambda t: "1 of 2" in t["statusMessage"])
        assert half["status"] == "working" and "result" not in half
        assert half["statusMessage"] == "running: 1 of 2 URLs fetched"
        origin.release(hold)
        done = await until_task(client, task["taskId"], lambda t: t["status"] != "working")
        assert done["status"] == "completed", done
        result = done["result"]["structuredContent"]
        assert result["job_id"] == task["taskId"].removeprefix("batch.")
        assert result["targets"] == result["targets_done"] == 2
        assert [o["status"] for o in result["outcomes"]] == ["done", "done"]
        assert "batch_result" in done["result"]["content"][0]["text"]

        r = await client.call_tool("batch_result", {"job_id": result["job_id"], "idx": 0})
        assert not r.is_error and "large cities" in text(r), text(r)

    run(connect(sift)(extensions=[TasksClient()]), scenario)


def test_the_sdk_client_waits_for_a_task_transparently(sift, origin, connect):
    install_site(origin)
    tasks = TasksClient()

    async def scenario(client: Client) -> None:
        r = await client.call_tool("crawl", {"url": origin.url("/site/"), "limit": 3})
        assert not r.is_error, text(r)
        assert r.structured_content["status"] == "completed"
        assert len(r.structured_content["pages"]) == 3
        assert tasks.seen and tasks.seen[-1]["status"] == "completed"
        assert tasks.seen[0]["statusMessage"].endswith("pages read")

    run(connect(sift)(extensions=[tasks]), scenario)


def test_a_crawl_task_is_cancelled(sift, origin, connect, tmp_path):
    paths = slow_chain(origin, f"/chain-{tmp_path.name}", 8, slow=1.0)

    async def scenario(client: Client) -> None:
        task = await start(client, "crawl", {"url": origin.url(paths[0]), "limit": 8})
        assert task["taskId"].startswith("crawl.")
        await until_task(client, task["taskId"], lambda t: t["statusMessage"].startswith("running"))
        assert await cancel_task(client, task["taskId"]) == {"resultType": "complete"}
        over = await get_task(client, task["taskId"])
        assert over["status"] == "cancelled" and "result" not in over, over
        assert (await cancel_task(client, task["taskId"])) == {"resultType": "complete"}

    run(connect(sift)(extensions=[TasksClient()]), scenario)


def test_another_callers_task_is_not_found(sift, origin, connect):
    made: list[str] = []

    async def create(client: Client) -> None:
        made.append((await start(client, "batch_fetch", {"urls": [origin.url("/text")]}))["taskId"])

    async def peek(client: Client) -> None:
        for ask in (get_task, cancel_task):
            with pytest.raises(MCPError) as err:
                await ask(client, made[0])
            assert err.value.error.code == INVALID_PARAMS
        with pytest.raises(MCPError) as err:
            await get_task(client, "batch.no-such-job")
        assert err.value.error.code == INVALID_PARAMS

    run(connect(sift)(extensions=[TasksClient()]), create)
    run(connect(sift, RESTRICTED_TOKEN)(extensions=[TasksClient()]), peek)


def test_a_client_without_tasks_gets_todays_answers(sift, origin, connect):
    async def scenario(client: Client) -> None:
        r = await client.call_tool("batch_fetch", {"urls": [origin.url("/text")]})
        assert not r.is_error and set(r.structured_content) >= {"job_id", "reused"}
        with pytest.raises(MCPError) as err:
            await get_task(client, "batch." + r.structured_content["job_id"])
        assert err.value.error.code == -32021  # the extension is required

    run(connect(sift)(), scenario)
