"""Long work as MCP tasks: `batch_fetch`, `crawl` and a long `read`, called by a client that
takes tasks, answer at once with a task the client polls (progress in its `statusMessage`),
reads the result of when the job is over, or cancels.

A task is sift's job: its id is `<kind>.<job id>` (`batch.…`, `crawl.…`; a read's is
`read.<job id>.<what it recalls>`, read.py) and every answer about it is read from sift with
the caller's own token (`GET /v1/batch/{id}`, the result as the tool answers it, `DELETE` to
cancel). `sift mcp` keeps nothing, so any `sift mcp` in front of any replica of a PostgreSQL
fleet answers a task another created, and a task of another caller is a task not found, as
sift answers 404 for another's job.

Both protocol generations sift speaks:
- 2026-07-28, the `io.modelcontextprotocol/tasks` extension (SEP-2663): a request that
  declares the extension in its capabilities gets `resultType: "task"` (a `read`: of
  `read.TASK_SOURCES` sources or more); `tasks/get` (the result inlined once completed),
  `tasks/update` (sift never asks for input: an empty ack) and `tasks/cancel` (an ack), each
  refused -32021 to a request without the extension.
- 2025-11-25, tasks in the core protocol: the server declares `tasks.cancel` and
  `tasks.list` and `tasks.requests.tools.call`, the three tools `execution.taskSupport:
  "optional"`; a `tools/call` with `task` answers `CreateTaskResult`; `tasks/get`,
  `tasks/result` (waits until the job is over), `tasks/cancel`, and `tasks/list` (the
  caller's unfinished batch and crawl jobs, `GET /v1/batch`, in one page). The extension
  has no list.
"""

from __future__ import annotations

import datetime
import urllib.parse
from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from typing import Any, Literal

import anyio
from mcp.server.context import CallNext, HandlerResult, ServerRequestContext
from mcp.server.extension import Extension, MethodBinding
from mcp.server.mcpserver import MCPServer, require_client_extension
from mcp.shared.exceptions import MCPError
from mcp.types import (
    INTERNAL_ERROR,
    INVALID_PARAMS,
    CallToolRequestParams,
    CallToolResult,
    CreateTaskResult,
    ListTasksResult,
    PaginatedRequestParams,
    RequestParams,
    Result,
    ServerCapabilities,
    ServerTasksCapability,
    ServerTasksRequestsCapability,
    Task,
    TasksCallCapability,
    TasksCancelCapability,
    TasksListCapability,
    TasksToolsCapability,
    TextContent,
)
from mcp_types.version import MODERN_PROTOCOL_VERSIONS
from pydantic import ConfigDict

from sift.mcp import batch, read, site, tasked
from sift.mcp.upstream import SiftRefused, Upstream

EXTENSION = "io.modelcontextprotocol/tasks"
CORE = "2025-11-25"  # the one revision with tasks in the core protocol
RELATED = "io.modelcontextprotocol/related-task"
POLL_MS = 1000  # the poll interval a task suggests, and how often tasks/result looks
ENDED: dict[str, Callable[[Upstream, Any, str, str], Awaitable[CallToolResult]]] = {
    "batch": lambda upstream, headers, job_id, _: batch.ended(upstream, headers, job_id),
    "crawl": lambda upstream, headers, job_id, _: site.ended(upstream, headers, job_id),
    "read": read.ended,
}
STATUS = {"queued": "working", "running": "working", "done": "completed"}  # else the same
UNIT = {"batch": "URLs fetched", "crawl": "pages read", "read": "sources fetched"}
LISTED = ("batch", "crawl")  # the kinds of sift job a task is made of, as `GET /v1/batch` says


Request = ServerRequestContext[Any, Any]


class TaskParams(RequestParams):
    task_id: str


class CreatedTask(Result):
    """The 2026-07-28 `CreateTaskResult`: the task's fields beside `resultType: "task"`."""

    model_config = ConfigDict(extra="allow")
    result_type: Literal["task"] = "task"


@dataclass(frozen=True)
class Seen:
    """A task as sift's job says it now."""

    task_id: str
    kind: str
    job_id: str
    status: str  # working | completed | failed | cancelled
    message: str
    created: str
    ttl_ms: int | None
    spec: str = ""  # what a read task recalls (read.recalled)

    @property
    def over(self) -> bool:
        return self.status != "working"

    def wire(self, modern: bool) -> dict[str, Any]:
        """The task's fields as the protocol `modern` (2026-07-28) or not spells them; a
        failed job is a completed task with a tool error in 2026-07-28 (`failed` is for
        JSON-RPC errors there), a failed one before."""
        now = datetime.datetime.now(datetime.UTC).isoformat(timespec="seconds")
        said = {
            "taskId": self.task_id,
            "status": "completed" if modern and self.status == "failed" else self.status,
            "statusMessage": self.message,
            "createdAt": self.created,
            "lastUpdatedAt": now,  # when sift was last asked: it keeps no update time
        }
        if modern:
            return {**said, "ttlMs": self.ttl_ms, "pollIntervalMs": POLL_MS}
        return {**said, "ttl": self.ttl_ms, "pollInterval": POLL_MS}


class SiftTasks(Extension):
    """The tasks extension: the tool calls that become tasks, and the `tasks/*` methods."""

    identifier = EXTENSION

    def __init__(self, upstream: Upstream) -> None:
        self.upstream = upstream

    def methods(self) -> list[MethodBinding]:
        modern = frozenset(MODERN_PROTOCOL_VERSIONS)
        both = modern | {CORE}
        return [
            MethodBinding("tasks/get", TaskParams, self._get, both),
            MethodBinding("tasks/cancel", TaskParams, self._cancel, both),
            MethodBinding("tasks/update", TaskParams, self._update, modern),
            MethodBinding("tasks/result", TaskParams, self._result, frozenset({CORE})),
            MethodBinding("tasks/list", PaginatedRequestParams, self._list, frozenset({CORE})),
        ]

    async def intercept_tool_call(
        self, params: CallToolRequestParams, ctx: Request, call_next: CallNext
    ) -> HandlerResult:
        """2026-07-28: a request that declares the extension makes a task of batch_fetch,
        crawl and a long read; the tool starts the job and this answers the task in its
        place."""
        declared = ctx.session.client_capabilities
        if (
            params.name not in tasked.TASKABLE
            or not _modern(ctx)
            or not (declared and declared.extensions and EXTENSION in declared.extensions)
        ):
            return await call_next(ctx)
        with tasked.wanted() as box:
            said = await call_next(ctx)
        if not box:  # refused before a job was started: the tool's error, as without tasks
            return said
        return CreatedTask.model_validate((await self._seen(ctx, box[0])).wire(modern=True))

    async def legacy_call(self, ctx: Request, call_next: CallNext) -> HandlerResult:
        """2025-11-25: a `tools/call` with `task` of batch_fetch, crawl or read (however few
        its sources) answers `CreateTaskResult`. A server middleware, as the SDK's 2025-11-25
        result check knows only `CallToolResult` for `tools/call` (a middleware's own answer
        is not checked)."""
        raw = ctx.params or {}
        if (
            ctx.method != "tools/call"
            or ctx.protocol_version != CORE
            or raw.get("task") is None
            or raw.get("name") not in tasked.TASKABLE
        ):
            return await call_next(ctx)
        with tasked.wanted(asked=True) as box:
            said = await call_next(ctx)
        if not box:  # a read sift would not hold as a job answers inline
            return said
        seen = await self._seen(ctx, box[0])
        return CreateTaskResult(task=Task.model_validate(seen.wire(modern=False)))

    async def _get(self, ctx: Request, params: TaskParams) -> Any:
        _require(ctx)
        seen = await self._seen(ctx, params.task_id)
        if not _modern(ctx):
            return seen.wire(modern=False)
        said: dict[str, Any] = {"resultType": "complete", **seen.wire(modern=True)}
        if seen.over and seen.status != "cancelled":
            said["result"] = _dump(await self._ended(ctx, seen))
        return said

    async def _result(self, ctx: Request, params: TaskParams) -> Any:
        """2025-11-25's `tasks/result`: once the job is over, what the call would have said."""
        seen = await self._seen(ctx, params.task_id)
        while not seen.over:
            await anyio.sleep(POLL_MS / 1000)
            seen = await self._seen(ctx, params.task_id)
        if seen.status == "cancelled":
            result = CallToolResult(
                content=[TextContent(type="text", text=f"task {seen.task_id} was cancelled")],
                is_error=True,
            )
        else:
            result = await self._ended(ctx, seen)
        return {**_dump(result), "_meta": {RELATED: {"taskId": seen.task_id}}}

    async def _cancel(self, ctx: Request, params: TaskParams) -> Any:
        _require(ctx)
        seen = await self._seen(ctx, params.task_id)
        if seen.over and not _modern(ctx):  # 2025-11-25: a task that ended is not cancelled
            raise MCPError(code=INVALID_PARAMS, message=f"task {seen.task_id} is {seen.status}")
        if not seen.over:
            try:
                await self.upstream.ask(_headers(ctx), "DELETE", _job(seen.job_id))
            except SiftRefused as exc:
                if exc.status != 409:  # 409: it ended meanwhile, as cancelling allows
                    raise _protocol(exc) from None
        if _modern(ctx):
            return {"resultType": "complete"}
        return (await self._seen(ctx, params.task_id)).wire(modern=False)

    async def _update(self, ctx: Request, params: TaskParams) -> Any:
        """sift's tasks never ask for input: a known task's update is acknowledged."""
        _require(ctx)
        await self._seen(ctx, params.task_id)
        return {"resultType": "complete"}

    async def _list(self, ctx: Request, params: PaginatedRequestParams) -> Any:
        """2025-11-25's `tasks/list`: the caller's batch and crawl jobs not ended yet, each as
        `tasks/get` says it, in one page (a caller holds few live jobs: sift caps them), so no
        cursor is ever given and any cursor is invalid. A read task's job is listed as the
        batch of its sources: what the read recalls lives only in the id its caller got."""
        if params.cursor is not None:
            raise MCPError(code=INVALID_PARAMS, message="invalid cursor: sift lists in one page")
        try:
            live = await self.upstream.ask(_headers(ctx), "GET", "/v1/batch")
        except SiftRefused as exc:
            raise _protocol(exc) from None
        tasks = []
        for job in live["jobs"]:
            if job["kind"] in LISTED:
                try:
                    seen = await self._seen(ctx, f"{job['kind']}.{job['job_id']}")
                except MCPError:  # gone meanwhile
                    continue
                tasks.append(Task.model_validate(seen.wire(modern=False)))
        return ListTasksResult(tasks=tasks)

    async def _seen(self, ctx: Request, task_id: str) -> Seen:
        kind, _, job_id = task_id.partition(".")
        spec = ""
        if kind == "read":
            job_id, _, spec = job_id.partition(".")
            try:
                read.recalled(spec)
            except ValueError:
                job_id = ""
        if kind not in ENDED or not job_id:
            raise MCPError(code=INVALID_PARAMS, message="Failed to retrieve task: Task not found")
        try:
            job = await self.upstream.ask(_headers(ctx), "GET", _job(job_id))
        except SiftRefused as exc:
            raise _protocol(exc) from None
        status = STATUS.get(job["status"], job["status"])
        done, total = job["targets_done"], job["targets_total"]
        message = f"{job['status']}: {done} of {total} {UNIT[kind]}"
        created, expires = job["created_at"], job["expires_at"]
        ttl = datetime.datetime.fromisoformat(expires) - datetime.datetime.fromisoformat(created)
        ttl_ms = int(ttl.total_seconds() * 1000)
        return Seen(task_id, kind, job_id, status, message, created, ttl_ms, spec)

    async def _ended(self, ctx: Request, seen: Seen) -> CallToolResult:
        try:
            return await ENDED[seen.kind](self.upstream, _headers(ctx), seen.job_id, seen.spec)
        except SiftRefused as exc:
            raise _protocol(exc) from None


def install(server: MCPServer, tasks: SiftTasks) -> None:
    """2025-11-25's tasks: the `tasks` capability declared on a handshake (the SDK has no
    hook for it; an older revision's `initialize` drops it, as its schema has none; 2026-07-28
    declares the extension, `SiftTasks`), and `tasks.legacy_call`."""
    lowlevel = server._lowlevel_server
    plain = lowlevel.get_capabilities

    def get_capabilities(*args: Any, **kwargs: Any) -> ServerCapabilities:
        said = plain(*args, **kwargs)
        if kwargs.get("protocol_version") in MODERN_PROTOCOL_VERSIONS:
            return said
        tools = TasksToolsCapability(call=TasksCallCapability())
        said.tasks = ServerTasksCapability(
            list=TasksListCapability(),
            cancel=TasksCancelCapability(),
            requests=ServerTasksRequestsCapability(tools=tools),
        )
        return said

    lowlevel.get_capabilities = get_capabilities  # type: ignore[method-assign]
    lowlevel.middleware.append(tasks.legacy_call)


def _modern(ctx: Request) -> bool:
    return ctx.protocol_version in MODERN_PROTOCOL_VERSIONS


def _require(ctx: Request) -> None:
    """2026-07-28: `tasks/*` only for a request that declares the extension (-32021)."""
    if _modern(ctx):
        require_client_extension(ctx, EXTENSION)


def _headers(ctx: Request) -> Any:
    return getattr(ctx.request, "headers", None)


def _job(job_id: str) -> str:
    return f"/v1/batch/{urllib.parse.quote(job_id, safe='')}"


def _dump(result: CallToolResult) -> dict[str, Any]:
    return result.model_dump(by_alias=True, mode="json", exclude_none=True)


def _protocol(exc: SiftRefused) -> MCPError:
    """sift's refusal as the JSON-RPC error of a `tasks/*` request: a job sift does not
    know (or another caller's) is the task not found; anything else an internal error."""
    if exc.status == 404:
        return MCPError(code=INVALID_PARAMS, message="Failed to retrieve task: Task not found")
    return MCPError(code=INTERNAL_ERROR, message=str(exc))
