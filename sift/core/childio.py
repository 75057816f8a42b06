"""Reading and writing a child's pipes under a deadline: `Reader` (lines or frames from a file
descriptor, read in large chunks) and `Pipe` (a long-lived child's stdin and stdout). The
protocol itself — framing, spawning, reaping — is `sift.core.childproc`."""

from __future__ import annotations

import os
import selectors
import subprocess
import time

from sift.core.childproc import _CHUNK, HEADER, MAX_MESSAGE, Broken, Died, Timeout


def left(until: float) -> float:
    """Seconds to a monotonic deadline; `Timeout` once it has passed."""
    remaining = until - time.monotonic()
    if remaining <= 0:
        raise Timeout
    return remaining


class Reader:
    """Lines (or frames) from a file descriptor, read in large chunks; what comes past one
    stays for the next call. (A buffered `readline` costs twice as much on a long line.)

    With `until` (a monotonic deadline) the descriptor must be non-blocking; None blocks.
    """

    def __init__(self, fd: int, max_size: int = MAX_MESSAGE) -> None:
        self.fd = fd
        self.max_size = max_size
        self._buf = bytearray()
        self._scanned = 0  # bytes of _buf known to hold no newline

    def read_line(self, until: float | None = None) -> bytes | None:
        """The next line without its newline; None at the end of input between lines.

        Raises:
            Timeout: no whole line by `until`.
            Died: the input ended in the middle of a line.
            Broken: the line is longer than `max_size`.
        """
        with selectors.DefaultSelector() as sel:
            while True:
                end = self._buf.find(b"\n", self._scanned)
                if end > self.max_size or (end < 0 and len(self._buf) > self.max_size):
                    raise Broken(f"a line over {self.max_size} bytes (the cap)")
                if end >= 0:
                    line = bytes(self._buf[:end])
                    del self._buf[: end + 1]
                    self._scanned = 0
                    return line
                self._scanned = len(self._buf)
                if not self._fill(sel, until, _CHUNK):
                    self._ended("line")
                    return None

    def read_frame(self, until: float | None = None) -> bytes | None:
        """The next frame's payload; None at the end of input between frames.

        Raises:
            Timeout: no whole frame by `until`.
            Died: the input ended in the middle of a frame.
            Broken: the frame announces more than `max_size` bytes.
        """
        with selectors.DefaultSelector() as sel:
            while True:
                need = HEADER.size
                if len(self._buf) >= HEADER.size:
                    (size,) = HEADER.unpack_from(self._buf)
                    if size > self.max_size:
                        raise Broken(f"a frame of {size} bytes (the cap is {self.max_size})")
                    need += size
                    if len(self._buf) >= need:
                        payload = bytes(self._buf[HEADER.size : need])
                        del self._buf[:need]
                        return payload
                if not self._fill(sel, until, max(need - len(self._buf), _CHUNK)):
                    self._ended("frame")
                    return None

    def _fill(self, sel: selectors.BaseSelector, until: float | None, size: int) -> bool:
        """Read once more into the buffer (waiting at most until `until`); False at the end."""
        if until is not None:
            if not sel.get_map():
                sel.register(self.fd, selectors.EVENT_READ)
            if not sel.select(left(until)):
                return True
        try:
            chunk = os.read(self.fd, size)
        except BlockingIOError:
            return True
        self._buf += chunk
        return bool(chunk)

    def _ended(self, what: str) -> None:
        """At the end of input: fine between messages, `Died` in the middle of one."""
        if self._buf:
            raise Died(f"input ended mid-{what}")


class Pipe:
    """A long-lived child's stdin and stdout, spoken to under a deadline.

    Not thread-safe: one owner thread.
    """

    def __init__(self, proc: subprocess.Popen[bytes], max_size: int = MAX_MESSAGE) -> None:
        assert proc.stdin is not None and proc.stdout is not None
        self._in = proc.stdin.fileno()
        self._reader = Reader(proc.stdout.fileno(), max_size)

    def write(self, data: bytes, until: float) -> None:
        """Write all of `data`. Raises Timeout, or Died when the child closed its stdin."""
        view = memoryview(data)
        with selectors.DefaultSelector() as sel:
            sel.register(self._in, selectors.EVENT_WRITE)
            while view:
                if not sel.select(left(until)):
                    continue
                try:
                    view = view[os.write(self._in, view) :]
                except BlockingIOError:
                    continue
                except (BrokenPipeError, ConnectionResetError):
                    raise Died("pipe closed") from None

    def read_line(self, until: float) -> bytes:
        """The next line, without its newline.

        Raises:
            Timeout: no whole line by `until`.
            Died: the child's stdout ended (mid-line or between lines).
            Broken: the line grew past the cap.
        """
        line = self._reader.read_line(until)
        if line is None:
            raise Died("end of output")
        return line

    def read_frame(self, until: float) -> bytes:
        """The next frame's payload; raises as `read_line` does."""
        payload = self._reader.read_frame(until)
        if payload is None:
            raise Died("end of output")
        return payload
