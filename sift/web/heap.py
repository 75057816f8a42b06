"""The garbage collector's pauses, kept short and rare while the server runs.

A collection holds the GIL, so it stops the event loop and every actor for as long as it
takes. Under 200 clients a full collection took 40–60 ms of CPU (the startup heap of some
50,000 objects, and the state of every open connection), twice a minute: the loop's worst
pauses. So once sift is up, the objects made at startup (modules, config, actors) are frozen
out of every later collection, and a full collection waits for 100 younger ones instead of
10. Garbage that is not a cycle is freed at once either way; cycles go in the younger
collections or at the next full one.
"""

from __future__ import annotations

import gc

FULL_AFTER = 100  # younger (generation 1) collections between full ones; Python's default is 10


def settle() -> None:
    """Collect once, then leave what is alive now (the startup heap) out of later passes."""
    gc.collect()
    gc.freeze()
    young, middle, _ = gc.get_threshold()
    gc.set_threshold(young, middle, FULL_AFTER)
