"""The base of sift's actors: typed messages in, exactly one answer out, bugs surfaced.

One rule finds every handler: a message of type `Foo` goes to `handle_foo(msg)`, and the
answer to an ask tagged `Foo(...)` (an `Answered`, see `bridge.ActorReply`) goes to
`handle_foo(tag, value, error)`. The table is built once per class from the `handle_<name>`
methods, keyed by the type their first parameter names; a handler whose name and type disagree
fails at class creation, and a message an actor has no handler for is refused at `tell`.

A request message is a frozen dataclass with a `reply` field, answered with the handler's
return value. A `SiftError` is an expected answer (`reply.fail`) and the actor lives on;
anything else is a bug: the reply gets an internal error and the exception is re-raised so that
pykka stops the actor and the supervisor sees it. A handler that answers later (it keeps the
reply) returns `DEFERRED`.
"""

from __future__ import annotations

import logging
import re
import typing
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any, ClassVar

import pykka

from sift.actors.bridge import ActorReply, Answered
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
    name = name.lstrip("_")
    return re.sub(r"(?<!^)(?=[A-Z])", "_", name).lower()


def _handlers(cls: type) -> dict[type, Callable[..., Any]]:
    """`cls`'s handler table: each `handle_<snake>` method under the type it is named for."""
    table: dict[type, Callable[..., Any]] = {}
    for name in dir(cls):
        if not name.startswith("handle_"):
            continue
        fn = getattr(cls, name)
        try:
            params = [h for p, h in typing.get_type_hints(fn).items() if p != "return"]
        except NameError as exc:
            raise TypeError(f"{cls.__name__}.{name}: its message type is unknown ({exc})") from None
        kind = (typing.get_origin(params[0]) or params[0]) if params else None
        if not isinstance(kind, type) or name != "handle_" + _snake(kind.__name__):
            raise TypeError(
                f"{cls.__name__}.{name} must name the message it handles: "
                f"`def handle_foo(self, msg: Foo)` (or `(self, tag: Foo, value, error)`)"
            )
        table[kind] = fn
    return table


def _key(message: Any) -> type:
    """The type a message is dispatched by: an answer's by its tag."""
    return type(message.tag) if isinstance(message, Answered) else type(message)


class _Ref(pykka.ActorRef[Any]):
    """An actor's ref that refuses, at the sender, a message the actor has no handler for."""

    def tell(self, message: Any) -> None:
        handlers: dict[type, Any] = getattr(self.actor_class, "HANDLERS", {})
        kind = _key(message)
        if kind not in handlers and not type(message).__module__.startswith("pykka"):
            raise TypeError(f"{self.actor_class.__name__} has no handler for {kind.__name__}")
        super().tell(message)


class SiftActor(pykka.ThreadingActor):
    """Dispatches `Foo(...)` messages to `handle_foo(msg)` and answers `msg.reply`."""

    HANDLERS: ClassVar[dict[type, Callable[..., Any]]] = {}

    def __init_subclass__(cls, **kwargs: Any) -> None:
        super().__init_subclass__(**kwargs)
        cls.HANDLERS = _handlers(cls)

    def __init__(self) -> None:
        super().__init__()
        self._actor_ref = _Ref(self)

    def answer_to(self, tag: Any) -> ActorReply:
        """A reply whose answer comes back here, to `handle_<tag's type>(tag, value, error)`;
        refused now, in the asker, if this actor has no handler for it."""
        if type(tag) not in self.HANDLERS:
            raise TypeError(f"{type(self).__name__} has no handler for {type(tag).__name__}")
        return ActorReply(self.actor_ref, tag)

    def on_receive(self, message: Any) -> Any:
        handler = self.HANDLERS[_key(message)]  # `tell` refused any other message
        if isinstance(message, Answered):
            return handler(self, message.tag, message.value, message.error)
        reply = getattr(message, "reply", None)
        try:
            result = handler(self, message)
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
