"""One-shot replies from actor threads, so that nobody ever blocks waiting for an actor.

pykka's own future blocks in `get()` (also when awaited), so sift never waits on one. A message
carries a reply object instead; the actor answers it exactly once with `ok(value)` or
`fail(exc)`:

- `Reply` completes an asyncio future on the loop that created it (via `call_soon_threadsafe`),
  so a Tornado handler can `await reply.wait(timeout)` without blocking the IOLoop.
- `ActorReply` tells the answer to another actor as a message, so actors never block on
  each other.
- `ThreadReply` is for plain threads (the in-process CLI, tests): a bounded blocking wait.

`post` and `ask` are the one way the event loop asks an actor: a role being restarted is a 503
to retry, an actor that does not answer in time is a bug (a 500), never a hang.
"""

from __future__ import annotations

import asyncio
import contextlib
import threading
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any, Generic, TypeVar

import pykka

from sift.core.errors import SiftError, Unavailable

T = TypeVar("T")


class Reply(Generic[T]):
    """One-shot answer from an actor thread to the event loop that asked."""

    def __init__(self) -> None:
        self._loop = asyncio.get_running_loop()
        self._future: asyncio.Future[T] = self._loop.create_future()

    def ok(self, value: T) -> None:
        self._post(self._future.set_result, value)

    def fail(self, exc: BaseException) -> None:
        self._post(self._future.set_exception, exc)

    def discard(self) -> None:
        """The asker stops waiting: an answer that still comes is dropped, unread."""
        self._future.cancel()

    def on_answer(self, fn: Callable[[asyncio.Future[T]], None]) -> None:
        """Call `fn(future)` on the loop once the answer is in: a reply nobody awaits."""
        self._future.add_done_callback(fn)

    async def wait(self, timeout: float | None = None) -> T:
        """The answer, or `TimeoutError` after `timeout` seconds (the actor may still answer,
        unread). The future is awaited itself, not through `wait_for` and a shield: the
        answer reaches its waiter one turn of the loop after it comes, not three."""
        async with asyncio.timeout(timeout):
            return await self._future

    def _post(self, setter: Callable[[Any], None], arg: Any) -> None:
        def apply() -> None:
            if not self._future.done():  # the waiter gave up
                setter(arg)

        with contextlib.suppress(RuntimeError):  # the loop closed at shutdown
            self._loop.call_soon_threadsafe(apply)


def post(ref: pykka.ActorRef[Any], build: Callable[[Reply[Any]], Any]) -> Reply[Any]:
    """Tell `ref` the message `build(reply)`; the reply to wait for. `Unavailable` (503,
    retry) while the actor is dead, until its supervisor has started it again."""
    reply: Reply[Any] = Reply()
    try:
        ref.tell(build(reply))
    except pykka.ActorDeadError:
        raise Unavailable("sift is restarting a component; try again", retry_after=1) from None
    return reply


async def ask(ref: pykka.ActorRef[Any], build: Callable[[Reply[Any]], Any], timeout: float) -> Any:
    """`post` and wait for the answer; an internal error (500) after `timeout` seconds."""
    reply = post(ref, build)
    try:
        return await reply.wait(timeout)
    except TimeoutError:
        raise SiftError("internal error: a component did not answer in time") from None


@dataclass(frozen=True)
class Answered:
    """The message an `ActorReply` delivers: the tag the asker chose and the outcome."""

    tag: Any
    value: Any = None
    error: BaseException | None = None


class ActorReply:
    """Answers by telling `Answered(tag, …)` to another actor: actors never block on actors."""

    def __init__(self, ref: pykka.ActorRef[Any], tag: Any) -> None:
        self._ref = ref
        self._tag = tag

    def ok(self, value: Any) -> None:
        self._tell(Answered(self._tag, value=value))

    def fail(self, exc: BaseException) -> None:
        self._tell(Answered(self._tag, error=exc))

    def _tell(self, msg: Answered) -> None:
        with contextlib.suppress(pykka.ActorDeadError):
            self._ref.tell(msg)


class ThreadReply(Generic[T]):
    """For plain threads that may block (the in-process CLI, tests): a bounded wait."""

    def __init__(self) -> None:
        self._done = threading.Event()
        self._value: Any = None
        self._error: BaseException | None = None

    def ok(self, value: T) -> None:
        if not self._done.is_set():
            self._value = value
            self._done.set()

    def fail(self, exc: BaseException) -> None:
        if not self._done.is_set():
            self._error = exc
            self._done.set()

    def wait(self, timeout: float | None = None) -> T:
        if not self._done.wait(timeout):
            raise TimeoutError("no answer in time")
        if self._error is not None:
            raise self._error
        return self._value  # type: ignore[no-any-return]
