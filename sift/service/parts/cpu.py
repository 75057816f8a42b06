"""CPU work off the event loop (splitting, rendering, grep, hashing), so the loop keeps serving."""

from __future__ import annotations

import asyncio
import functools
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from typing import Any, TypeVar

T = TypeVar("T")

# Two threads, as the machines sift runs on have two or more cores; more would only contend
# for the GIL.
CPU_THREADS = 2
# Work on fewer characters or bytes than this takes well under a millisecond: it runs on the
# loop, where a hop to a thread (and the GIL it then contends for) would cost more.
INLINE_BELOW = 200_000


class Cpu:
    def __init__(self) -> None:
        self._pool = ThreadPoolExecutor(CPU_THREADS, thread_name_prefix="sift-cpu")

    async def compute(
        self, fn: Callable[..., T], *args: Any, cost: int | None = None, **kwargs: Any
    ) -> T:
        """`fn(*args, **kwargs)` on a CPU thread, so the event loop keeps serving meanwhile;
        on the loop itself when `cost` (the characters or bytes it works on) is small.

        For pure work on data nobody changes (texts, pages, bytes). re2 and hashlib release
        the GIL; pure-Python work still yields it to the loop every few milliseconds.
        """
        if cost is not None and cost < INLINE_BELOW:
            return fn(*args, **kwargs)
        loop = asyncio.get_running_loop()
        return await loop.run_in_executor(self._pool, functools.partial(fn, *args, **kwargs))

    def stop(self) -> None:
        self._pool.shutdown(wait=False, cancel_futures=True)
