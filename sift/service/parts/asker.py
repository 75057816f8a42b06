"""Who a request's work is for and by when: carried to the cleaners in a context variable.

`pipeline.within` sets it for the task that does one request's work (`run_local` for a local
file); `Cleaners.clean` reads it. The caller is who the clean workers are shared fairly between;
the request's deadline bounds its jq program (the smaller of that and the program's own
bound). Work shared between requests (`sift.service.parts.flights`) inherits the first requester's
asker but runs under the server's deadlines: only a jq program, never shared, reads `until`.
"""

from __future__ import annotations

from contextvars import ContextVar
from dataclasses import dataclass


@dataclass
class Asker:
    caller: str  # the caller's pool name: a batch is apart from its caller's own requests
    until: float | None  # the monotonic time the request answers by; None: no deadline
    jq: float | None = None  # the time bound of the jq program a worker runs for it now
    jq_waiting: bool = False  # its jq program waits for a worker (the fairness rule)


ASKER: ContextVar[Asker | None] = ContextVar("sift_asker", default=None)
