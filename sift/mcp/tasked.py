"""Whether the tool call now running is to answer as a task: `tasks.py` opens a box around a
call the client may take as a task, and a tool that started a sift job (`batch_fetch`,
`crawl`) puts the job in it instead of waiting for it."""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from contextvars import ContextVar

TASKABLE = ("batch_fetch", "crawl")  # the tools whose call may answer as a task

_BOX: ContextVar[list[str] | None] = ContextVar("sift_mcp_task", default=None)


@contextmanager
def wanted() -> Iterator[list[str]]:
    """A box the call's tool puts its task id in (`started`); empty if it started none."""
    box: list[str] = []
    token = _BOX.set(box)
    try:
        yield box
    finally:
        _BOX.reset(token)


def started(kind: str, job_id: str) -> bool:
    """Whether this call answers as a task, which is then sift's job `job_id` (of `kind`:
    `batch` or `crawl`): the tool returns at once instead of waiting for the job."""
    box = _BOX.get()
    if box is None:
        return False
    box.append(f"{kind}.{job_id}")
    return True
