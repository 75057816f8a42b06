"""The System: start in order, ping, restart crashed stateless actors, escalate critical ones."""

from __future__ import annotations

import threading
from dataclasses import dataclass
from typing import Any

import pytest

from sift.actors.base import SiftActor
from sift.actors.bridge import ThreadReply
from sift.actors.system import StartError, System


@dataclass(frozen=True)
class Crash:
    pass


@dataclass(frozen=True)
class Hello:
    reply: Any


class Worker(SiftActor):
    started: list[str] = []

    def __init__(self, name: str) -> None:
        super().__init__()
        self.name = name

    def on_start(self) -> None:
        Worker.started.append(self.name)

    def handle_crash(self, msg: Crash) -> None:
        raise RuntimeError("boom")

    def handle_hello(self, msg: Hello) -> str:
        return self.name


class Broken(SiftActor):
    def on_start(self) -> None:
        raise RuntimeError("cannot start")


def test_start_order_and_stop():
    Worker.started = []
    system = System()
    system.add("a", lambda: Worker.start("a"))
    system.add("b", lambda: Worker.start("b"), count=2)
    system.start()
    assert Worker.started == ["a", "b", "b"]
    assert system.healthy()
    system.stop()
    assert not any(r.is_alive() for r in system.refs("b"))


@pytest.mark.allow_error_logs
def test_failed_start_surfaces():
    system = System()
    system.add("a", lambda: Worker.start("a"))
    system.add("broken", Broken.start)
    with pytest.raises(StartError, match="broken"):
        system.start(timeout=2)
    assert not system.refs("a")[0].is_alive()


@pytest.mark.allow_error_logs
def test_stateless_actor_is_restarted_and_critical_escalates():
    fatal = threading.Event()
    system = System(on_fatal=lambda role: fatal.set())
    system.add("store", lambda: Worker.start("store"), critical=True)
    system.add("worker", lambda: Worker.start("worker"))
    system.start()
    try:
        old = system.refs("worker")[0]
        old.tell(Crash())
        for _ in range(100):
            ref = system.refs("worker")[0]
            if ref is not old and ref.is_alive():
                break
            threading.Event().wait(0.05)
        reply = ThreadReply[str]()
        system.refs("worker")[0].tell(Hello(reply))
        assert reply.wait(5) == "worker"
        assert not fatal.is_set()
        system.refs("store")[0].tell(Crash())
        assert fatal.wait(5)
        assert system.fatal == "store" and not system.healthy()
    finally:
        system.stop()
