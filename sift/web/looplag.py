"""The loop-lag probe: a callback every `interval` seconds that measures how late it ran.

Whatever blocks the event loop (CPU work, a blocking call) delays every request by as much;
the probe's lateness is that delay, exported as `sift_loop_lag_seconds`.
"""

from __future__ import annotations

import asyncio
import contextlib

from sift.core import metrics

INTERVAL = 0.05


async def _probe(interval: float) -> None:
    loop = asyncio.get_running_loop()
    while True:
        due = loop.time() + interval
        await asyncio.sleep(interval)
        metrics.LOOP_LAG.observe(max(0.0, loop.time() - due))


def start(interval: float = INTERVAL) -> asyncio.Task[None]:
    """Start the probe on the running loop; cancel the task to stop it."""
    return asyncio.get_running_loop().create_task(_probe(interval), name="loop-lag probe")


async def stop(task: asyncio.Task[None]) -> None:
    task.cancel()
    with contextlib.suppress(asyncio.CancelledError):
        await task
