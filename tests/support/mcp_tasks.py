"""MCP tasks from the client's side, on the SDK's own client: `TasksClient` is a
`ClientExtension` that declares `io.modelcontextprotocol/tasks` (2026-07-28) on every request
and resolves a `resultType: "task"` answer by polling `tasks/get` (so `Client.call_tool` waits
for the task transparently); `start` takes the task handle itself, `get_task` and
`cancel_task` send the extension's methods through the SDK's session."""

from __future__ import annotations

from typing import Any, ClassVar, Literal

import anyio
from mcp import Client
from mcp.client.extension import ClaimContext, ClientExtension, ResultClaim
from mcp.types import CallToolResult, Request, RequestParams, Result
from pydantic import ConfigDict

EXTENSION = "io.modelcontextprotocol/tasks"


class TaskParams(RequestParams):
    task_id: str


class GetTask(Request[TaskParams, Literal["tasks/get"]]):
    method: Literal["tasks/get"] = "tasks/get"
    params: TaskParams
    name_param: ClassVar[str | None] = "taskId"  # the `Mcp-Name` header the spec asks


class CancelTask(Request[TaskParams, Literal["tasks/cancel"]]):
    method: Literal["tasks/cancel"] = "tasks/cancel"
    params: TaskParams
    name_param: ClassVar[str | None] = "taskId"


class Said(Result):
    """Any result, its fields kept as they came (`model_extra`)."""

    model_config = ConfigDict(extra="allow")


class CreatedTask(Result):
    model_config = ConfigDict(extra="allow")
    result_type: Literal["task"] = "task"


class TasksClient(ClientExtension):
    """The tasks extension as a client needs it; `seen` keeps every task state it polled."""

    identifier = EXTENSION

    def __init__(self) -> None:
        self.seen: list[dict[str, Any]] = []

    def claims(self) -> list[ResultClaim[Any]]:
        return [ResultClaim(result_type="task", model=CreatedTask, resolve=self._resolve)]

    async def _resolve(self, created: CreatedTask, ctx: ClaimContext) -> CallToolResult:
        task_id = (created.model_extra or {})["taskId"]
        while True:
            said = await ctx.session.send_request(GetTask(params=TaskParams(task_id=task_id)), Said)
            task = dict(said.model_extra or {})
            self.seen.append(task)
            if task["status"] != "working":
                return CallToolResult.model_validate(task.get("result") or {"content": []})
            await anyio.sleep(task.get("pollIntervalMs", 1000) / 1000)


async def start(client: Client, tool: str, arguments: dict[str, Any]) -> dict[str, Any]:
    """Call `tool` and keep its task handle (what `tools/call` answered) instead of waiting."""
    said = await client.session.call_tool(tool, arguments, allow_claimed=True)
    assert isinstance(said, CreatedTask), said
    return {"resultType": said.result_type, **(said.model_extra or {})}


async def get_task(client: Client, task_id: str) -> dict[str, Any]:
    said = await client.session.send_request(GetTask(params=TaskParams(task_id=task_id)), Said)
    return dict(said.model_extra or {})


async def cancel_task(client: Client, task_id: str) -> dict[str, Any]:
    said = await client.session.send_request(CancelTask(params=TaskParams(task_id=task_id)), Said)
    return dict(said.model_extra or {})


async def until_task(client: Client, task_id: str, ok: Any, timeout: float = 60) -> dict[str, Any]:
    """Poll `tasks/get` until `ok(task)` holds; that task."""
    with anyio.fail_after(timeout):
        while True:
            task = await get_task(client, task_id)
            if ok(task):
                return task
            await anyio.sleep(0.2)
