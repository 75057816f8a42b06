"""Whether the tool call now running is to answer as a task: `tasks.py` opens a box around a
call the client may take as a task, and a tool that started a sift job (`batch_fetch`,
`crawl`, a long `read`) puts the task in it instead of waiting for the job."""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from contextvars import ContextVar

TASKABLE = ("batch_fetch", "crawl", "read")  # the tools whose call may answer as a task


class Box(list[str]):
    """The task the call became (empty: none); `asked`: the client asked for a task by
    name (2025-11-25's `task`), rather than taking one where sift makes one (2026-07-28)."""

    def __init__(self, asked: bool) -> None:
        super().__init__()
        self.asked = asked


_BOX: ContextVar[Box | None] = ContextVar("sift_mcp_task", default=None)


@contextmanager
def wanted(asked: bool = False) -> Iterator[Box]:
    """A box the call's tool puts its task id in (`started`); empty if it started none."""
    box = Box(asked)
    token = _BOX.set(box)
    try:
        yield box
    finally:
        _BOX.reset(token)


def taking(long: bool) -> bool:
    """Whether this call may answer as a task: the client takes tasks, and asked for one or
    the work is `long` (the tool's own rule)."""
    box = _BOX.get()
    return box is not None and (box.asked or long)


def started(kind: str, job_id: str, spec: str = "") -> bool:
    """Whether this call answers as a task, which is then sift's job `job_id` (of `kind`:
    `batch`, `crawl` or `read`; `spec` what else the task must recall): the tool returns at
    once instead of waiting for the job."""
    box = _BOX.get()
    if box is None:
        return False
    box.append(f"{kind}.{job_id}" + (f".{spec}" if spec else ""))
    return True
