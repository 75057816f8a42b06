"""The batch tools: `batch_fetch` queues URLs, `batch_status` follows the job, `batch_result`
reads one target's answer; each one call to sift's `/v1/batch`."""

from __future__ import annotations

import time
import urllib.parse
from typing import Annotated, Any

import anyio
from mcp.server.mcpserver import Context
from mcp.server.mcpserver.exceptions import ToolError
from mcp.types import CallToolResult, TextContent
from pydantic import Field

from sift.mcp import tasked
from sift.mcp.args import Grep, JobId, Pages, Question, WaitSeconds
from sift.mcp.fetch import Answered, answered
from sift.mcp.schemas import BatchEnded, BatchJob, BatchStatus
from sift.mcp.server import of
from sift.mcp.upstream import Upstream, envelope_of

BATCH_FETCH = """\
Queue up to 32 URLs to be fetched in the background (one job per caller at a time); returns \
the job id at once. Poll it with batch_status, then read each result with batch_result. \
`pages`, `grep` and `question` apply to every URL."""

BATCH_STATUS = """\
The state of a batch job: queued / running / done / failed / cancelled, how many targets are \
done, and each target's status and error. With `wait_seconds`, waits up to that long for the \
job to end (reporting targets done as progress). Read a finished target's text with \
batch_result."""

BATCH_RESULT = """\
The result of one target of a batch job (idx from batch_status, starting at 0): its clean \
text, or its error. A long document's result is its map; fetch it again with pages or grep."""


async def batch_fetch(
    urls: Annotated[list[str], Field(description="the URLs to fetch", min_length=1)],
    ctx: Context,
    pages: Pages = None,
    grep: Grep = None,
    question: Question = None,
) -> BatchJob:
    common = {k: v for k, v in (("pages", pages), ("grep", grep), ("question", question)) if v}
    targets = [{"url": u, **common} for u in urls]
    job = BatchJob(**await of(ctx).upstream.call(ctx, "POST", "/v1/batch", {"targets": targets}))
    tasked.started("batch", job.job_id)
    return job


async def ended(upstream: Upstream, headers: Any, job_id: str) -> CallToolResult:
    """What a batch_fetch task answers once its job is over: the job and each target's
    state (`BatchEnded`); each target's text is then read with batch_result."""
    job = BatchStatus(**await upstream.ask(headers, "GET", _job(job_id)))
    said = BatchEnded(
        job_id=job.job_id,
        status=job.status,
        targets=job.targets_total,
        targets_done=job.targets_done,
        outcomes=job.targets,
        error=job.error,
    )
    lines = [f"batch job {job.job_id}: {job.status}, {job.targets_done} of {job.targets_total}"]
    for t in job.targets:
        lines.append(f"{t.idx} {t.status} {t.url}" + (f": {t.error}" if t.error else ""))
    lines.append("read a done target's text with batch_result (job_id, idx)")
    return CallToolResult(
        content=[TextContent(type="text", text="\n".join(lines))],
        structured_content=said.model_dump(mode="json"),
        is_error=job.error is not None,  # the job's own failure; a target's is in `outcomes`
    )


async def batch_status(job_id: JobId, ctx: Context, wait_seconds: WaitSeconds = 0) -> BatchStatus:
    deadline = time.monotonic() + wait_seconds
    while True:
        job = BatchStatus(**await of(ctx).upstream.call(ctx, "GET", _job(job_id)))
        done, total = job.targets_done, job.targets_total
        await ctx.report_progress(done, total, f"{done} of {total} targets done")
        if job.status not in ("queued", "running") or time.monotonic() >= deadline:
            return job
        await anyio.sleep(1)


async def batch_result(
    job_id: JobId,
    idx: Annotated[int, Field(description="the target's index, from 0", ge=0)],
    ctx: Context,
) -> Answered:
    upstream = of(ctx).upstream
    target = await upstream.call(ctx, "GET", f"{_job(job_id)}/{idx}")
    if target.get("status") != "done":
        why = target.get("error") or f"target {idx} is {target.get('status')}"
        hint = f" (hint: {target['hint']})" if target.get("hint") else ""
        raise ToolError(f"{why}{hint}")
    answer = envelope_of(target.get("result"), upstream.server)
    # the text as stored, its warning already at its end
    return await answered(ctx, "batch_result", answer, answer.content, warn=False)


def _job(job_id: str) -> str:
    return f"/v1/batch/{urllib.parse.quote(job_id, safe='')}"
