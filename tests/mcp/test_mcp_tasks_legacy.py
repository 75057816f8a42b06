"""MCP tasks on the 2025-11-25 handshake (tasks in the core protocol), through a plain JSON-RPC
client on both transports (the SDK's client cannot send a `task`): the capability and the
tools' `taskSupport`, a batch run as a task to its result, a crawl cancelled, and a call
without `task` answered as today."""

from __future__ import annotations

from collections.abc import Callable, Iterator
from contextlib import AbstractContextManager
from pathlib import Path
from typing import Any

import pytest

from tests.support.mcp_client import mcp_listen
from tests.support.mcp_raw import RawHttp, RawStdio
from tests.support.origin import slow_chain
from tests.support.sift_server import SiftServer
from tests.support.until import until

RELATED = "io.modelcontextprotocol/related-task"
Raw = Callable[[], AbstractContextManager[Any]]


@pytest.fixture(params=["stdio", "http"])
def raw(request: pytest.FixtureRequest, sift: SiftServer, tmp_path: Path) -> Iterator[Raw]:
    if request.param == "stdio":
        yield lambda: RawStdio(sift.url)
        return
    with mcp_listen(sift.url, tmp_path / "mcp-http.log") as url:
        yield lambda: RawHttp(url)


def test_a_batch_runs_as_a_task_to_its_result(raw, origin):
    with raw() as mcp:
        tasks = mcp.hello["result"]["capabilities"]["tasks"]
        assert tasks == {"list": {}, "cancel": {}, "requests": {"tools": {"call": {}}}}
        listed = {t["name"]: t for t in mcp.ask("tools/list")["result"]["tools"]}
        assert listed["batch_fetch"]["execution"] == {"taskSupport": "optional"}
        assert listed["crawl"]["execution"] == {"taskSupport": "optional"}
        assert "execution" not in listed["fetch"]

        urls = [origin.url("/text"), origin.url("/article")]
        args = {"name": "batch_fetch", "arguments": {"urls": urls}, "task": {"ttl": 60000}}
        said = mcp.ask("tools/call", args)
        assert "result" in said, said
        task = said["result"]["task"]
        assert task["taskId"].startswith("batch.") and task["status"] == "working"
        assert task["ttl"] > 0 and task["pollInterval"] > 0
        seen = mcp.ask("tasks/get", {"taskId": task["taskId"]})["result"]
        assert seen["taskId"] == task["taskId"] and "URLs fetched" in seen["statusMessage"]

        result = mcp.ask("tasks/result", {"taskId": task["taskId"]})["result"]  # waits
        assert result["_meta"][RELATED] == {"taskId": task["taskId"]}
        assert not result.get("isError")
        assert [o["status"] for o in result["structuredContent"]["outcomes"]] == ["done", "done"]
        assert mcp.ask("tasks/get", {"taskId": task["taskId"]})["result"]["status"] == "completed"
        again = mcp.ask("tasks/cancel", {"taskId": task["taskId"]})
        assert again["error"]["code"] == -32602  # a task that ended is not cancelled
        assert mcp.ask("tasks/get", {"taskId": "batch.nope"})["error"]["code"] == -32602

        plain = mcp.ask("tools/call", {"name": "batch_fetch", "arguments": {"urls": urls}})
        assert set(plain["result"]["structuredContent"]) >= {"job_id", "reused"}


def test_a_crawl_task_is_cancelled(raw, origin, tmp_path):
    chain = slow_chain(origin, f"/legacy-chain-{tmp_path.name}", 8, slow=1.0)
    with raw() as mcp:
        args = {"name": "crawl", "arguments": {"url": origin.url(chain[0]), "limit": 8}}
        task = mcp.ask("tools/call", {**args, "task": {}})["result"]["task"]
        assert task["taskId"].startswith("crawl.")

        def running() -> bool:
            said = mcp.ask("tasks/get", {"taskId": task["taskId"]})["result"]
            return bool(said["statusMessage"].startswith("running"))

        until(running, "the crawl to run", timeout=60)
        cancelled = mcp.ask("tasks/cancel", {"taskId": task["taskId"]})["result"]
        assert cancelled["status"] == "cancelled" and cancelled["taskId"] == task["taskId"]
        result = mcp.ask("tasks/result", {"taskId": task["taskId"]})["result"]
        assert result["isError"] and result["_meta"][RELATED] == {"taskId": task["taskId"]}
