"""How a message finds its handler (`sift.actors.base`): one table per actor class, keyed by the
message type each `handle_<name>` method names; an answer goes by its tag. A handler that does
not name its message fails at class creation; a message with no handler is refused at `tell`."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import pytest

from sift.actors.base import SiftActor
from sift.actors.bridge import ThreadReply
from sift.core.answer import Answer

WAIT = 10.0


@dataclass(frozen=True)
class Echo:
    text: str
    reply: Answer


@dataclass(frozen=True)
class Stray:
    reply: Answer


@dataclass(frozen=True)
class AskSelf:
    """Has the actor ask for an answer tagged `tag` (answered at once with "value")."""

    tag: Any
    reply: Answer


@dataclass(frozen=True)
class _Echoed:
    reply: Answer  # where the answer to an ask tagged `_Echoed` ends up


class Echoer(SiftActor):
    def handle_echo(self, msg: Echo) -> str:
        return msg.text

    def handle_ask_self(self, msg: AskSelf) -> str:
        try:
            self.answer_to(msg.tag).ok("value")
        except TypeError as exc:
            return str(exc)
        return "asked"

    def handle_echoed(self, tag: _Echoed, value: Any, error: BaseException | None) -> None:
        tag.reply.ok((value, error))


def test_a_handler_named_for_another_message_fails_at_class_creation():
    with pytest.raises(TypeError, match=r"Wrong\.handle_stray must name the message it handles"):

        class Wrong(SiftActor):
            def handle_stray(self, msg: Echo) -> None: ...


def test_a_handler_that_names_no_message_fails_at_class_creation():
    with pytest.raises(TypeError, match=r"Bare\.handle_echo must name the message it handles"):

        class Bare(SiftActor):
            def handle_echo(self, msg) -> None: ...


def test_a_message_without_a_handler_is_refused_at_tell():
    ref = Echoer.start()
    try:
        with pytest.raises(TypeError, match="Echoer has no handler for Stray"):
            ref.tell(Stray(ThreadReply()))
        reply: ThreadReply[str] = ThreadReply()
        ref.tell(Echo("still here", reply))  # the actor lives on
        assert reply.wait(WAIT) == "still here"
    finally:
        ref.stop()


def test_an_answer_goes_to_the_handler_its_tag_names_and_others_are_refused():
    ref = Echoer.start()
    try:
        got: ThreadReply[tuple[Any, Any]] = ThreadReply()
        asked: ThreadReply[str] = ThreadReply()
        ref.tell(AskSelf(_Echoed(got), asked))
        assert asked.wait(WAIT) == "asked"
        assert got.wait(WAIT) == ("value", None)  # to handle_echoed(tag, value, error)
        refused: ThreadReply[str] = ThreadReply()
        ref.tell(AskSelf(Stray(ThreadReply()), refused))  # refused in the asker, at once
        assert refused.wait(WAIT) == "Echoer has no handler for Stray"
    finally:
        ref.stop()
