"""The System: starts actors in dependency order, supervises them, stops them in reverse.

Roles are started in the order they are added; each actor is pinged with a deadline so that an
`on_start` failure surfaces at start-up instead of as a silent dead actor. Roles are restarted
when they crash, with backoff and a rate cap — the store too: a database error is no crash (it
is answered as a 503, see sift/actors/store.py), and a store that crashed on a bug reopens its
files on restart. A crash of a critical role (the pool), too many restarts, or a restart that
fails escalates: `on_fatal` is called and the service exits non-zero so that its service
manager restarts it whole.
"""

from __future__ import annotations

import contextlib
import itertools
import logging
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

import pykka

from sift.actors.base import CRASH_LISTENERS, Ping
from sift.actors.bridge import ThreadReply
from sift.core import metrics

log = logging.getLogger("sift.system")

RESTARTS_PER_MINUTE = 5


@dataclass
class Role:
    name: str
    factory: Callable[[], pykka.ActorRef[Any]]
    count: int = 1
    critical: bool = False
    refs: list[pykka.ActorRef[Any]] = field(default_factory=list)
    restarts: list[float] = field(default_factory=list)
    cursor: itertools.count[int] = field(default_factory=itertools.count)


class StartError(RuntimeError):
    """An actor failed to start."""


class System:
    def __init__(self, on_fatal: Callable[[str], None] | None = None) -> None:
        self.roles: dict[str, Role] = {}
        self.on_fatal = on_fatal or (lambda role: None)
        self._lock = threading.Lock()
        self._stopping = False
        self.fatal: str | None = None

    def add(
        self,
        name: str,
        factory: Callable[[], pykka.ActorRef[Any]],
        count: int = 1,
        critical: bool = False,
    ) -> None:
        self.roles[name] = Role(name, factory, count, critical)

    def start(self, timeout: float = 10.0) -> None:
        CRASH_LISTENERS.append(self._crashed)
        try:
            for role in self.roles.values():
                for _ in range(role.count):
                    role.refs.append(self._start_one(role, timeout))
        except BaseException:
            self.stop()
            raise

    def _start_one(self, role: Role, timeout: float) -> pykka.ActorRef[Any]:
        ref = role.factory()
        reply: ThreadReply[bool] = ThreadReply()
        try:
            ref.tell(Ping(reply))
            reply.wait(timeout)
        except (TimeoutError, pykka.ActorDeadError):
            raise StartError(f"actor {role.name} did not start") from None
        if not ref.is_alive():
            raise StartError(f"actor {role.name} did not start")
        return ref

    def refs(self, name: str) -> list[pykka.ActorRef[Any]]:
        return self.roles[name].refs

    def pick(self, name: str) -> pykka.ActorRef[Any]:
        """One actor of the role, round robin."""
        role = self.roles[name]
        refs = role.refs
        return refs[next(role.cursor) % len(refs)]

    def alive(self) -> dict[str, bool]:
        return {
            name: bool(role.refs) and all(r.is_alive() for r in role.refs)
            for name, role in self.roles.items()
        }

    def counts(self) -> dict[str, int]:
        """Alive actors per role."""
        return {name: sum(r.is_alive() for r in role.refs) for name, role in self.roles.items()}

    def healthy(self) -> bool:
        return self.fatal is None and all(self.alive().values())

    def stop(self, timeout: float = 10.0) -> None:
        """Stop roles in reverse order; any actor still running after that is a bug."""
        with self._lock:
            self._stopping = True
        if self._crashed in CRASH_LISTENERS:
            CRASH_LISTENERS.remove(self._crashed)
        for role in reversed(list(self.roles.values())):
            for ref in role.refs:
                with contextlib.suppress(pykka.ActorDeadError, pykka.Timeout):
                    ref.stop(block=True, timeout=timeout)
        ours = {r.actor_urn for role in self.roles.values() for r in role.refs}
        for ref in pykka.ActorRegistry.get_all():
            if ref.actor_urn in ours:
                log.error("bug: actor %s still running after stop", ref.actor_class.__name__)

    def _crashed(self, urn: str) -> None:
        """Runs on the crashed actor's thread: restart it later, or escalate."""
        with self._lock:
            if self._stopping:
                return
            for role in self.roles.values():
                for index, ref in enumerate(role.refs):
                    if ref.actor_urn == urn:
                        self._supervise(role, index)
                        return

    def _supervise(self, role: Role, index: int) -> None:
        now = time.monotonic()
        role.restarts = [t for t in role.restarts if now - t < 60] + [now]
        if role.critical or len(role.restarts) > RESTARTS_PER_MINUTE:
            self.fatal = role.name
            log.error("actor role %s failed; escalating", role.name)
            self.on_fatal(role.name)
            return
        backoff = min(0.1 * 2 ** (len(role.restarts) - 1), 5.0)
        threading.Timer(backoff, self._restart, args=(role, index)).start()

    def _restart(self, role: Role, index: int) -> None:
        with self._lock:
            if self._stopping:
                return
        try:
            ref = self._start_one(role, 10.0)
        except StartError:
            self.fatal = role.name
            self.on_fatal(role.name)
            return
        with self._lock:
            if self._stopping:
                ref.stop(block=False)
                return
            role.refs[index] = ref
        metrics.ACTOR_RESTARTS.labels(role.name).inc()
        log.warning("actor role %s restarted", role.name)
