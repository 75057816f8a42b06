"""sift.core.childproc, the one child protocol, against real child processes."""

from __future__ import annotations

import os
import signal
import time
from collections.abc import Iterator
from pathlib import Path

import msgspec
import pytest

from sift.core import childio, childproc
from sift.core.childio import Pipe
from sift.core.childproc import Broken, Died, FrameDecoder, LineDecoder, Timeout
from tests.support.until import until

WAIT = 30.0  # a bound on every wait, not a timing assertion


class Msg(msgspec.Struct, frozen=True):
    text: str
    body: bytes
    n: int = 0


# A child that echoes each line it reads, after a stray print that must not reach the parent.
ECHO = """
from sift.core import childio, childproc
out = childproc.claim_stdout()
print("a stray print")
lines = childio.Reader(0)
while (line := lines.read_line()) is not None:
    out.write(line + b"\\n")
    out.flush()
"""


def _input(data: bytes) -> int:
    """A pipe's reading end that holds `data` and then ends (closed when the test ends)."""
    r, w = os.pipe()
    os.write(w, data)
    os.close(w)
    _fds.append(r)
    return r


_fds: list[int] = []


@pytest.fixture(autouse=True)
def _close_fds() -> Iterator[None]:
    yield
    while _fds:
        os.close(_fds.pop())


def _state(pid: int) -> str | None:
    """The process's state letter ("Z" for a zombie), or None when it no longer exists."""
    try:
        return Path(f"/proc/{pid}/stat").read_text().rsplit(") ", 1)[1][:1]
    except (OSError, IndexError):
        return None


def _gone(proc_pid: int) -> bool:
    """Reaped by us: no such process, not even a zombie."""
    return _state(proc_pid) is None


def test_framing_round_trip_through_a_child() -> None:
    msg = Msg(text='two\nlines, \u00e9t\u00e9, \u4e2d\u6587 "q" \\', body=b"\x00\xff\n\r" * 50, n=7)
    line = childproc.encode(msg)
    assert line.endswith(b"\n") and line.count(b"\n") == 1  # one line, whatever the strings hold
    proc = childproc.spawn(["-c", ECHO])
    pipe = Pipe(proc)
    try:
        for _ in range(3):
            pipe.write(line, time.monotonic() + WAIT)
            echoed = pipe.read_line(time.monotonic() + WAIT)  # not the stray print
            assert LineDecoder(Msg).decode(echoed) == msg
    finally:
        childproc.reap(proc)
    assert _gone(proc.pid)


# The same in msgpack frames (the clean workers' framing).
ECHO_FRAMES = """
from sift.core import childio, childproc
out = childproc.claim_stdout()
print("a stray print")
frames = childio.Reader(0)
while (payload := frames.read_frame()) is not None:
    out.write(childproc.HEADER.pack(len(payload)) + payload)
    out.flush()
"""


def test_frames_round_trip_through_a_child() -> None:
    msg = Msg(text="two\nlines", body=bytes(range(256)) * 1000, n=3)
    proc = childproc.spawn(["-c", ECHO_FRAMES])
    pipe = Pipe(proc)
    try:
        for _ in range(3):
            pipe.write(childproc.frame(msg), time.monotonic() + WAIT)
            assert FrameDecoder(Msg).decode(pipe.read_frame(time.monotonic() + WAIT)) == msg
    finally:
        childproc.reap(proc)
    with pytest.raises(Broken, match="undecodable"):
        FrameDecoder(Msg).decode(b"\x01")
    cut = childproc.HEADER.pack(1000) + b"x" * 10
    with pytest.raises(Broken, match="a frame of 1000 bytes"):
        childio.Reader(_input(cut), max_size=100).read_frame()
    with pytest.raises(Died, match="mid-frame"):
        childio.Reader(_input(cut)).read_frame()


def test_a_line_over_the_cap_is_refused() -> None:
    decoder = LineDecoder(Msg, max_line=100)
    short = childproc.encode(Msg(text="x", body=b""))
    assert decoder.decode(short).text == "x"
    with pytest.raises(Broken, match="cap"):
        decoder.decode(childproc.encode(Msg(text="x" * 200, body=b"")))
    with pytest.raises(Broken, match="undecodable"):
        decoder.decode(b'{"text": 1}')
    # a reader (the child's side): a line longer than the cap, and input that ends mid-line
    with pytest.raises(Broken, match="cap"):
        childio.Reader(_input(b"y" * 200 + b"\n"), max_size=100).read_line()
    reader = childio.Reader(_input(b'{"text": "x"}\n{"text": "cut'))
    assert reader.read_line() == b'{"text": "x"}'
    with pytest.raises(Died, match="mid-line"):
        reader.read_line()
    # the parent's side: a child that writes an endless line is cut off at the cap
    proc = childproc.spawn(["-c", "import sys; sys.stdout.write('z' * 10_000_000)"])
    try:
        with pytest.raises(Broken, match="the cap"):
            Pipe(proc, max_size=100_000).read_line(time.monotonic() + WAIT)
    finally:
        childproc.reap(proc)


def test_a_hung_child_is_killed_at_its_deadline_and_reaped() -> None:
    """The child ignores SIGTERM and has a grandchild: both end, and no zombie is left."""
    script = (
        "import signal, subprocess, sys, time\n"
        "signal.signal(signal.SIGTERM, signal.SIG_IGN)\n"
        "kid = subprocess.Popen([sys.executable, '-c', 'import time; time.sleep(600)'])\n"
        "sys.stdout.write(f'{kid.pid}\\n'); sys.stdout.flush()\n"
        "time.sleep(600)\n"
    )
    proc = childproc.spawn(["-c", script])
    pipe = Pipe(proc)
    grandchild = int(pipe.read_line(time.monotonic() + WAIT))
    start = time.monotonic()
    with pytest.raises(Timeout):
        pipe.read_line(time.monotonic() + 0.5)
    assert time.monotonic() - start < WAIT
    childproc.reap(proc, grace=0.2)
    assert proc.returncode == -signal.SIGKILL  # SIGTERM was ignored: killed, then reaped
    assert _gone(proc.pid)
    # The grandchild is reaped by whoever inherits it.
    until(lambda: _state(grandchild) in (None, "Z"), "the grandchild to be reaped", WAIT)


def test_a_child_that_dies_mid_line() -> None:
    script = 'import os, sys; os.write(1, b\'{"text": "cut\'); os._exit(9)'
    proc = childproc.spawn(["-c", script])
    try:
        with pytest.raises(Died, match="mid-line"):
            Pipe(proc).read_line(time.monotonic() + WAIT)
    finally:
        childproc.reap(proc)
    assert proc.returncode == 9 and _gone(proc.pid)


def test_writing_to_a_child_that_stopped_reading() -> None:
    """A child that exits without reading: the write fails as Died, it does not hang."""
    proc = childproc.spawn(["-c", "pass"])
    proc.wait(WAIT)
    try:
        with pytest.raises(Died):
            Pipe(proc).write(b"x" * 1_000_000, time.monotonic() + WAIT)
    finally:
        childproc.reap(proc)


def test_the_child_environment_is_empty(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("SIFT_TEST_SECRET", "must-not-leak")
    script = "import os, sys; sys.stdout.write(repr(sorted(os.environ)) + '\\n')"
    proc = childproc.spawn(["-c", script], env={"EXTRA": "1"})
    try:
        names = Pipe(proc).read_line(time.monotonic() + WAIT)
    finally:
        childproc.reap(proc)
    # Python may add LC_CTYPE itself (PEP 538); nothing comes from this process's environment
    assert set(eval(names)) - {"LC_CTYPE"} == {"EXTRA", "PYTHONPATH"}
    assert os.environ["SIFT_TEST_SECRET"] == "must-not-leak"
