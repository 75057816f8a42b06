"""The pauses other work imposes on the event loop, kept short: the garbage collector's, and
the wait to win the GIL back.

A collection holds the GIL, so it stops the loop and every actor for as long as it takes.
Under 200 clients a full collection took 40–60 ms of CPU (the startup heap of some 50,000
objects, and the state of every open connection), about every 10 s: the loop's worst
pauses. So once sift is up, what is alive then (modules, config, actors) is frozen out of
every later collection, and a full collection waits for 100 younger ones instead of 10.
Garbage that is not a cycle is freed at once either way; cycles go in the younger
collections or at the next full one.

The loop lets the GIL go at every socket read and write; when an actor's or a CPU thread
has taken it meanwhile, the loop waits until that thread lets it go, up to the switch
interval (5 ms by default) each time. At 1 ms a request's few waits stay small.
"""

from __future__ import annotations

import gc
import sys

FULL_AFTER = 100  # younger (generation 1) collections between full ones; Python's default is 10
SWITCH_INTERVAL = 0.001  # seconds a thread keeps the GIL while another waits for it


def settle() -> None:
    """Collect once, leave what is alive now (the startup heap) out of later passes, and
    hand the GIL round sooner."""
    gc.collect()
    gc.freeze()
    young, middle, _ = gc.get_threshold()
    gc.set_threshold(young, middle, FULL_AFTER)
    sys.setswitchinterval(SWITCH_INTERVAL)
