"""What a message's sender hands the code that answers it: a one-shot reply.

A `typing.Protocol`, so that logic (the fetcher, the transfer) can answer a reply without
knowing the actors' bridge (`sift.actors.bridge` has the implementations).
"""

from __future__ import annotations

from typing import Any, Protocol


class Answer(Protocol):
    """What an actor needs from a reply: answer it once, with a value or an error."""

    def ok(self, value: Any) -> None: ...

    def fail(self, exc: BaseException) -> None: ...
