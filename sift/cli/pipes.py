"""stdout into a pipe whose reader left (`sift batch status --results | head`): the command ends
quietly, as a Unix tool killed by SIGPIPE does (status 141), not with an error about the server.

Python ignores SIGPIPE, so a write to such a pipe raises BrokenPipeError; so does a write to a
server's socket that broke, which is an error to report. `poll` tells them apart: the write end
of a pipe whose reader closed it reports POLLERR.
"""

from __future__ import annotations

import os
import select
import signal
import sys

SIGPIPE_STATUS = 128 + signal.SIGPIPE


def reader_gone() -> bool:
    """Whether stdout's reader has closed it."""
    try:
        poller = select.poll()
        poller.register(sys.stdout.fileno(), select.POLLOUT)
        return any(events & select.POLLERR for _fd, events in poller.poll(0))
    except (OSError, ValueError):  # no stdout, or not a file descriptor
        return False


def quiet_exit() -> int:
    """What is still buffered for stdout goes nowhere (no second error at exit)."""
    devnull = os.open(os.devnull, os.O_WRONLY)
    os.dup2(devnull, sys.stdout.fileno())
    os.close(devnull)
    return SIGPIPE_STATUS
