"""MCP tasks on a PostgreSQL fleet: two `sift serve` replicas on one database, a
`sift mcp --listen` in front of each; a task made through one (a batch, a read of several
sources, a crawl) is followed, answered and cancelled through the other, and stays its
caller's own."""

from __future__ import annotations

import anyio
import pytest
from mcp.shared.exceptions import MCPError
from mcp.types import INVALID_PARAMS

from tests.support.mcp_client import http_client, mcp_listen
from tests.support.mcp_tasks import TasksClient, cancel_task, get_task, start, until_task
from tests.support.origin import slow_chain
from tests.support.replicas import OTHER, TOKEN


def test_a_task_made_on_one_replica_is_answered_by_another(replicas, origin, tmp_path):
    a, b = replicas(2)
    hold = f"fleet-{tmp_path.name}"
    chain = slow_chain(origin, f"/fleet-chain-{tmp_path.name}", 8, slow=1.0)
    sources = [origin.url(p) for p in ("/text", "/article", "/json")]

    async def scenario(url_a: str, url_b: str) -> None:
        async with http_client(url_a, TOKEN, extensions=[TasksClient()]) as on_a:
            urls = [origin.url("/text"), origin.url(f"/hold/{hold}")]
            task = (await start(on_a, "batch_fetch", {"urls": urls}))["taskId"]
        async with http_client(url_b, TOKEN, extensions=[TasksClient()]) as on_b:
            assert (await get_task(on_b, task))["status"] == "working"
            await anyio.to_thread.run_sync(origin.wait_arrived, hold)
            origin.release(hold)
            done = await until_task(on_b, task, lambda t: t["status"] != "working")
            assert done["status"] == "completed", done
            assert [o["status"] for o in done["result"]["structuredContent"]["outcomes"]] == [
                "done",
                "done",
            ]
        async with http_client(url_b, OTHER, extensions=[TasksClient()]) as stranger:
            with pytest.raises(MCPError) as err:
                await get_task(stranger, task)
            assert err.value.error.code == INVALID_PARAMS

        read = {"urls": sources, "question": "Which cities are large?", "max_tokens": 500}
        async with http_client(url_a, TOKEN, extensions=[TasksClient()]) as on_a:
            made = (await start(on_a, "read", read))["taskId"]
        assert made.startswith("read.")
        async with http_client(url_b, TOKEN, extensions=[TasksClient()]) as on_b:
            done = await until_task(on_b, made, lambda t: t["status"] != "working")
            assert done["status"] == "completed", done
            assert done["statusMessage"] == "done: 3 of 3 sources fetched"
        async with http_client(url_b, TOKEN) as plain:  # no tasks: today's read, inline
            inline = await plain.call_tool("read", read)
        assert done["result"]["structuredContent"] == inline.structured_content
        assert [s["status"] for s in inline.structured_content["sources"]] != ["error"] * 3

        async with http_client(url_a, TOKEN, extensions=[TasksClient()]) as on_a:
            crawl = await start(on_a, "crawl", {"url": origin.url(chain[0]), "limit": 8})
        async with http_client(url_b, TOKEN, extensions=[TasksClient()]) as on_b:
            await until_task(on_b, crawl["taskId"], lambda t: "running" in t["statusMessage"])
            await cancel_task(on_b, crawl["taskId"])
        async with http_client(url_a, TOKEN, extensions=[TasksClient()]) as on_a:
            assert (await get_task(on_a, crawl["taskId"]))["status"] == "cancelled"

    with (
        mcp_listen(a, tmp_path / "mcp-a.log") as url_a,
        mcp_listen(b, tmp_path / "mcp-b.log") as url_b,
    ):
        anyio.run(scenario, url_a, url_b)
