"""The one child protocol: how sift starts a child process, talks to it, and ends it.

Children (`sift pdftext`, the clean workers) are where anything that can hang or blow up runs.
They all get the same treatment here:

- **Spawning**: `python <args>` in its own session (so its process group can be killed whole),
  with an empty environment but PYTHONPATH, so it imports this very sift and nothing of the
  server's environment — tokens, keys, proxies — reaches it.
- **Framing**: JSON Lines both ways, one msgspec Struct per line (`encode`), decoded by typed
  msgspec decoders (`LineDecoder`) under a line-length cap. msgspec escapes control characters
  in strings and base64-encodes `bytes`, so a line never holds a raw newline. The clean
  workers, whose tasks carry whole pages as `bytes`, use length-prefixed msgpack frames
  (`frame`, `FrameDecoder`) instead: base64 cost them 5 % of their throughput.
- **Deadlines**: `sift.core.childio`'s `Pipe` writes and reads lines (or frames) through a
  selector, never past a monotonic `until`; a child that does not answer in time raises
  `Timeout`, one that closed its end raises `Died`.
- **Reaping**: `reap` terminates the process group, waits, kills it, waits — no zombie and no
  grandchild is left behind.

On the child's side, `claim_stdout` keeps the real stdout for the protocol only, and a
`childio.Reader` on fd 0 reads the parent's lines or frames.
"""

from __future__ import annotations

import contextlib
import os
import resource
import signal
import struct
import subprocess
import sys
from collections.abc import Callable, Mapping, Sequence
from pathlib import Path
from typing import IO, BinaryIO, Generic, TypeVar

import msgspec

T = TypeVar("T")

# The directory that holds the `sift` package: a child's PYTHONPATH, so it runs this sift.
SIFT_ROOT = str(Path(__file__).resolve().parents[2])
MAX_MESSAGE = 256 * 1024**2  # a line or frame longer than this is a broken stream
KILL_WAIT = 1.0  # seconds between SIGTERM and SIGKILL
_CHUNK = 65536

_encoder = msgspec.json.Encoder()


class ChildError(Exception):
    """A child did not keep to the protocol."""


class Timeout(ChildError):
    """The deadline passed before the child answered."""


class Died(ChildError):
    """The child closed its end of a pipe (it exited, or was killed)."""


class Broken(ChildError):
    """The child wrote a line over the cap, or one that does not decode."""


# ---- framing ----------------------------------------------------------------------------------


def encode(msg: object) -> bytes:
    """`msg` (a msgspec Struct) as one JSON line, newline included."""
    return _encoder.encode(msg) + b"\n"


class LineDecoder(Generic[T]):
    """Decodes one JSON line into `type_`; a line over `max_line` bytes or that does not
    match the type raises `Broken`."""

    def __init__(self, type_: type[T], max_line: int = MAX_MESSAGE) -> None:
        self._decoder = msgspec.json.Decoder(type_)
        self.max_line = max_line

    def decode(self, line: bytes) -> T:
        if len(line) > self.max_line:
            raise Broken(f"a line of {len(line)} bytes (the cap is {self.max_line})")
        try:
            return self._decoder.decode(line)
        except msgspec.DecodeError as exc:
            raise Broken(f"undecodable line: {exc}") from None


# Frames: a 4-byte big-endian length and a msgpack body. For a child whose messages carry
# large `bytes` (a clean task's body), where base64 in a JSON line costs more than it is worth.
HEADER = struct.Struct(">I")
_msgpack = msgspec.msgpack.Encoder()


def frame(msg: object) -> bytes:
    """`msg` (a msgspec Struct) as one length-prefixed msgpack frame."""
    payload = _msgpack.encode(msg)
    return HEADER.pack(len(payload)) + payload


class FrameDecoder(Generic[T]):
    """Decodes one frame's payload into `type_`; a payload that does not match raises
    `Broken` (the frame's size is capped by the `Reader`)."""

    def __init__(self, type_: type[T]) -> None:
        self._decoder = msgspec.msgpack.Decoder(type_)

    def decode(self, payload: bytes) -> T:
        try:
            return self._decoder.decode(payload)
        except msgspec.DecodeError as exc:
            raise Broken(f"undecodable frame: {exc}") from None


def complete_lines(data: bytes | bytearray) -> list[bytes]:
    """The complete, non-blank lines of a child's output (a line cut by a kill is left out)."""
    end = data.rfind(b"\n") + 1
    return [bytes(line) for line in data[:end].splitlines() if line.strip()]


def first_line(data: bytes | bytearray) -> bytes | None:
    """The first complete line of a child's output, once there is one."""
    end = data.find(b"\n")
    return bytes(data[:end]) if end >= 0 else None


# ---- the child's side -------------------------------------------------------------------------


def claim_stdout() -> BinaryIO:
    """The real stdout, for the protocol only; fd 1 and `sys.stdout` become stderr, so a
    stray print (ours or a C library's) cannot corrupt the stream."""
    out = os.fdopen(os.dup(1), "wb")
    os.dup2(2, 1)
    sys.stdout = sys.stderr
    return out


def limit_memory(memory: int) -> None:
    """Cap the child's address space at `memory` bytes (0: no cap) before it touches its
    input; never dump core (it holds the document)."""
    resource.setrlimit(resource.RLIMIT_CORE, (0, 0))
    if memory > 0:
        _soft, hard = resource.getrlimit(resource.RLIMIT_AS)
        cap = memory if hard == resource.RLIM_INFINITY else min(memory, hard)
        resource.setrlimit(resource.RLIMIT_AS, (cap, hard))


def spare_argv(argv: list[str] | None, prepare: Callable[[], object]) -> list[str] | None:
    """The child's arguments: `argv` (else the command line's); for a spare (`--spare` alone,
    `sift.documents.children.Spares`), `prepare()` (its imports) first, then one JSON line on
    stdin (the document follows it). None: the parent went away before it needed the spare."""
    argv = sys.argv[1:] if argv is None else argv
    if argv != ["--spare"]:
        return argv
    prepare()
    line = sys.stdin.buffer.readline(64 * 1024)
    return msgspec.json.decode(line, type=list[str]) if line.strip() else None


def send(out: BinaryIO, msg: object) -> None:
    """Write `msg` as one line and flush it, so the parent sees it at once."""
    out.write(encode(msg))
    out.flush()


def send_frame(out: BinaryIO, msg: object) -> None:
    """Write `msg` as one frame and flush it."""
    out.write(frame(msg))
    out.flush()


# ---- the parent's side ------------------------------------------------------------------------


def child_env(extra: Mapping[str, str] | None = None) -> dict[str, str]:
    """An empty environment but PYTHONPATH (the directory sift is imported from, so the child
    finds the same code), plus `extra`. Nothing of the server's environment goes in."""
    env = {"PYTHONPATH": SIFT_ROOT}
    env.update(extra or {})
    return env


def spawn(
    args: Sequence[str],
    *,
    stdin: IO[bytes] | int = subprocess.PIPE,
    stderr: int | None = subprocess.PIPE,
    env: Mapping[str, str] | None = None,
    cwd: str | None = None,
) -> subprocess.Popen[bytes]:
    """Start `python <args>` in its own session with `child_env(env)`; stdout is a pipe.

    `stdin` may be an open file (a spooled document: its bytes never pass through this
    process). Every pipe this process holds is non-blocking, for a selector.
    """
    proc = subprocess.Popen(
        [sys.executable, *args],
        stdin=stdin,
        stdout=subprocess.PIPE,
        stderr=stderr,
        env=child_env(env),
        cwd=cwd or SIFT_ROOT,
        start_new_session=True,
        close_fds=True,
        bufsize=0,
    )
    for pipe in (proc.stdin, proc.stdout, proc.stderr):
        if pipe is not None:
            os.set_blocking(pipe.fileno(), False)
    return proc


def signal_group(proc: subprocess.Popen[bytes], sig: int) -> None:
    """Signal the child's process group (own session: its id is the child's pid). Only while
    the child is unreaped, so the id cannot have been reused."""
    if proc.returncode is None:
        with contextlib.suppress(ProcessLookupError, PermissionError):
            os.killpg(proc.pid, sig)


def kill(proc: subprocess.Popen[bytes]) -> None:
    """SIGKILL the child's process group now; safe from any thread (`reap` or `wait` after)."""
    signal_group(proc, signal.SIGKILL)


def wait(proc: subprocess.Popen[bytes], seconds: float) -> bool:
    """Wait up to `seconds` for the child to exit, then kill its group and reap it.

    Returns:
        True when it had to be killed.
    """
    try:
        proc.wait(max(0.0, seconds))
        return False
    except subprocess.TimeoutExpired:
        kill(proc)
        proc.wait()
        return True


def reap(proc: subprocess.Popen[bytes], grace: float = KILL_WAIT) -> None:
    """End the child: close our pipes, SIGTERM its group, wait `grace`, SIGKILL, wait."""
    for pipe in (proc.stdin, proc.stdout, proc.stderr):
        if pipe is not None:
            with contextlib.suppress(OSError):
                pipe.close()
    signal_group(proc, signal.SIGTERM)
    wait(proc, grace)
