"""Test helpers for batch: a loop thread, a scripted stand-in for the pipeline, the runner's
event hook as a waitable, and a rig of real actors (store, runner, workers) on a temp database.

The script is the target URL's path: `/ok…` answers at once, `/hold-<name>` waits until the
test releases it, `/busy-<n>` is busy n times then fine (`/busy-always` never), `/fail` is
blocked, `/panic` raises a bug.
"""

from __future__ import annotations

import asyncio
import threading
from collections import Counter, defaultdict
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import msgspec
import pytest

from sift.actors import batch as batch_actors
from sift.actors.batch import BatchRunner
from sift.actors.batch_messages import Cancel, Submit
from sift.actors.batch_worker import BatchWorker
from sift.actors.bridge import ThreadReply
from sift.actors.store import StoreActor, StoreCall
from sift.batch.scheduler import Attempt
from sift.core.callers import Caller
from sift.core.config import BatchConfig
from sift.core.errors import Blocked, Busy
from sift.core.request import FetchParams
from sift.core.types import TargetOutcome
from sift.store.protocol import Store

WAIT = 20.0  # a bound on every wait, never a timing assertion


class Script:
    """The stand-in for `sift.batch.execute`: records who asked for what, and how many ran."""

    def __init__(self, loop: asyncio.AbstractEventLoop) -> None:
        self.loop = loop
        self.calls: list[tuple[Caller, str]] = []
        self.tries: Counter[str] = Counter()
        self.running = 0
        self.peak = 0
        self.entered: defaultdict[str, threading.Event] = defaultdict(threading.Event)
        self.on_enter: Callable[[str], None] = lambda url: None  # runs as a target starts
        self._gates: dict[str, asyncio.Event] = {}
        self._lock = threading.Lock()

    def _gate(self, name: str) -> asyncio.Event:
        with self._lock:
            return self._gates.setdefault(name, asyncio.Event())

    def release(self, name: str) -> None:
        self.loop.call_soon_threadsafe(self._gate(name).set)

    def wait_entered(self, name: str) -> None:
        assert self.entered[name].wait(WAIT), f"target {name} never started"

    async def execute(self, caller: Caller, p: FetchParams) -> Attempt:
        self.on_enter(p.url)
        self.calls.append((caller, p.url))
        self.tries[p.url] += 1
        self.running += 1
        self.peak = max(self.peak, self.running)
        try:
            path = p.url.split("/", 3)[3]
            if path.startswith("hold-"):
                self.entered[path[5:]].set()
                await self._gate(path[5:]).wait()
            elif path.startswith("busy-"):
                n = path[5:]
                if n == "always" or self.tries[p.url] <= int(n):
                    raise Busy("busy: too many fetches in flight; retry shortly")
            elif path.startswith("fail"):
                raise Blocked("private address 10.0.0.1")
            elif path == "panic":
                raise RuntimeError("secret value 42")
            body = msgspec.json.encode({"success": True, "url": p.url})
            return Attempt(TargetOutcome("done", result=body, code=200), "ok")
        finally:
            self.running -= 1


class Events:
    """The runner's hook as something a test can wait on."""

    def __init__(self) -> None:
        self._cond = threading.Condition()
        self.jobs: dict[str, object] = {}
        self.targets: list[tuple[str, object]] = []

    def __call__(self, event: str, job_id: str, detail: object) -> None:
        with self._cond:
            if event == "job":
                self.jobs[job_id] = detail
            else:
                self.targets.append((job_id, detail))
            self._cond.notify_all()

    def job(self, job_id: str) -> object:
        with self._cond:
            assert self._cond.wait_for(lambda: job_id in self.jobs, WAIT), "job never ended"
            return self.jobs[job_id]

    def target(self, job_id: str, idx: int) -> None:
        with self._cond:
            assert self._cond.wait_for(lambda: (job_id, idx) in self.targets, WAIT)


class Rig:
    """A store, a runner and workers, as Services wires them, around a Script."""

    def __init__(self, db: Path, loop: asyncio.AbstractEventLoop, workers: int, **cfg: Any):
        self.script = Script(loop)
        self.cfg = BatchConfig(**{"retry_every": 0.01, **cfg})
        self.workers: list[Any] = []
        self.db = db
        self.store = StoreActor.start(db)
        for _ in range(workers):
            self.workers.append(BatchWorker.start(lambda: loop, self.script.execute))
        self.runner = BatchRunner.start(self.cfg, lambda: self.store, lambda: self.workers)

    def submit(self, caller: Caller, *urls: str) -> tuple[Any, bool]:
        reply: ThreadReply[Any] = ThreadReply()
        targets = tuple(FetchParams(url=u) for u in urls)
        self.runner.tell(Submit(caller, targets, reply))
        return reply.wait(WAIT)

    def cancel(self, job_id: str) -> str:
        reply: ThreadReply[str] = ThreadReply()
        self.runner.tell(Cancel(job_id, reply))
        return reply.wait(WAIT)

    def call(self, fn: Callable[[Store], Any]) -> Any:
        reply: ThreadReply[Any] = ThreadReply()
        self.store.tell(StoreCall(fn, reply))
        return reply.wait(WAIT)

    def stall(self) -> threading.Event:
        """Hold the store's thread until the returned event is set (a slow disk)."""
        go = threading.Event()
        self.store.tell(StoreCall(lambda s: go.wait(WAIT)))
        return go

    def stop(self) -> None:
        for ref in [*self.workers, self.runner, self.store]:
            ref.stop()


@pytest.fixture
def loop() -> Iterator[asyncio.AbstractEventLoop]:
    loop = asyncio.new_event_loop()
    thread = threading.Thread(target=loop.run_forever, daemon=True, name="test-loop")
    thread.start()
    yield loop
    loop.call_soon_threadsafe(loop.stop)
    thread.join(WAIT)
    loop.close()


@pytest.fixture
def events() -> Iterator[Events]:
    ev = Events()
    batch_actors.LISTENERS.append(ev)
    yield ev
    batch_actors.LISTENERS.remove(ev)


@pytest.fixture
def make_rig(tmp_path: Path, loop: asyncio.AbstractEventLoop) -> Iterator[Any]:
    rigs: list[Rig] = []

    def make(workers: int = 1, **cfg: Any) -> Rig:
        rig = Rig(tmp_path / f"sift{len(rigs)}.db", loop, workers, **cfg)
        rigs.append(rig)
        return rig

    yield make
    for rig in rigs:
        rig.stop()
