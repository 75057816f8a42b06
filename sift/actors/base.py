"""The base of sift's actors: typed messages in, exactly one answer out, bugs surfaced.

A request message is a frozen dataclass with a `reply` field. `on_receive` finds the handler
`handle_<MessageName>` and answers the reply with its return value. A `SiftError` is an
expected answer (`reply.fail`) and the actor lives on; anything else is a bug: the reply gets
an internal error and the exception is re-raised so that pykka stops the actor and the
supervisor sees it. A handler that answers later (it keeps the reply) returns `DEFERRED`.
"""

from __future__ import annotations

import logging
import re
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import pykka

from sift.core.errors import SiftError

log = logging.getLogger("sift.actors")

DEFERRED = object()

# Called with the urn of an actor that crashed; the System registers its supervisor here.
CRASH_LISTENERS: list[Callable[[str], None]] = []


@dataclass(frozen=True)
class Ping:
    """Liveness probe: answered with True by every actor."""

    reply: Any


def _snake(name: str) -> str:
    return re.sub(r"(?<!^)(?=[A-Z])", "_", name).lower()


class SiftActor(pykka.ThreadingActor):
    """Dispatches `Foo(...)` messages to `handle_foo(msg)` and answers `msg.reply`."""

    def on_receive(self, message: Any) -> Any:
        handler = getattr(self, "handle_" + _snake(type(message).__name__), None)
        reply = getattr(message, "reply", None)
        if handler is None:
            if reply is not None:
                reply.fail(SiftError(f"internal error: {type(self).__name__} got {message!r}"))
            return None
        try:
            result = handler(message)
        except SiftError as exc:
            if reply is not None:
                reply.fail(exc)
            return None
        except Exception:
            if reply is not None:
                reply.fail(SiftError())
            raise
        if reply is not None and result is not DEFERRED:
            reply.ok(result)
        return None

    def handle_ping(self, msg: Ping) -> bool:
        return True

    def on_failure(self, exception_type: Any, exception_value: Any, traceback: Any) -> None:
        log.error("actor %s crashed", type(self).__name__, exc_info=exception_value)
        try:
            self.release()
        finally:
            for listener in list(CRASH_LISTENERS):
                listener(self.actor_urn)

    def on_stop(self) -> None:
        self.release()

    def release(self) -> None:
        """Fail held replies, close handles, kill children. Called on stop and on failure."""
