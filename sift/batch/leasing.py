"""Replica leasing as plain logic: when a replica renews its lease and asks for more jobs, how
many it claims or steals, which of its jobs it lost, and what a job it takes on resumes as.

Several replicas may share one store (PostgreSQL). Each job is leased to the replica that runs
it; the lease is renewed every third of `lease` seconds, and a job whose lease lapsed is
claimed by another replica (room for twice its workers: one running, one waiting each). A
replica holding fewer jobs than workers takes waiting ones from a replica holding more: every
STEAL_EVERY seconds while it has room, one ask at a time. The runner (`sift.actors.batch`)
calls these functions and sends the store calls they decide; nothing here waits or writes.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Collection, Iterable
from dataclasses import dataclass, field

from sift.batch.scheduler import LiveJob, Unreadable
from sift.core.types import BatchJob, BatchTarget, Resumed

STEAL_EVERY = 1.0  # seconds between asks for a busier replica's jobs while this one has room


@dataclass
class Lease:
    """One replica's lease clock (monotonic seconds): nothing is due until `start`."""

    lease: float  # seconds a job's lease lasts without renewal
    workers: int
    shared: bool = False  # the replica leases its jobs: a server on a shared store
    next_beat: float = math.inf
    next_steal: float = math.inf
    asking_until: float = 0.0  # a steal ask is out until then (or until it is answered)

    def start(self, now: float) -> None:
        self.shared = True
        self.next_beat = now + self.lease / 3
        self.next_steal = now + STEAL_EVERY

    @property
    def due(self) -> float:
        """When the runner must next wake for the lease."""
        return min(self.next_beat, self.next_steal)

    def beat(self, live: int, now: float) -> int:
        """The lease is renewed now; the next renewal is due a third of the lease later.
        Returns how many jobs whose lease lapsed to claim (0: none)."""
        self.next_beat = now + self.lease / 3
        return max(0, 2 * self.workers - live)

    def steal(self, live: int, now: float) -> int:
        """How many waiting jobs to ask a busier replica for now (0: no ask). While there is
        room the next ask is due STEAL_EVERY later; without room none is (a job that ends
        asks again)."""
        room = self.workers - live
        if not self.shared or room <= 0:
            self.next_steal = math.inf
            return 0
        self.next_steal = now + STEAL_EVERY
        if now < self.asking_until:
            return 0
        self.asking_until = now + self.lease  # an ask nobody answers does not block forever
        return room

    def stolen(self) -> None:
        """The ask was answered: the next may go."""
        self.asking_until = 0.0


def lost(held: Collection[str], renewed: Iterable[str]) -> set[str]:
    """The jobs held at a renewal that it did not renew: another replica took them over (this
    one lost the store for longer than the lease). They stop here; their new runner goes on."""
    return set(held) - set(renewed)


@dataclass
class Adopted:
    """What a replica takes on from the store (at start-up, a claim or a steal)."""

    jobs: list[LiveJob] = field(default_factory=list)  # each from its first target not stored
    unreadable: list[tuple[str, Unreadable]] = field(default_factory=list)  # fail, saying why


def adopt(
    found: Resumed,
    held: Collection[str],
    read: Callable[[BatchJob, list[BatchTarget]], LiveJob],
) -> Adopted:
    """`found`'s jobs not already `held`, read back by `read` (which raises `Unreadable`)."""
    out = Adopted()
    for job, rows in found.jobs:
        if job.id in held:
            continue
        try:
            live = read(job, rows)
        except Unreadable as exc:
            out.unreadable.append((job.id, exc))
            continue
        resume(live, rows)
        out.jobs.append(live)
    return out


def resume(job: LiveJob, rows: list[BatchTarget]) -> None:
    """The targets stored before the first that is not count as written: the job goes on
    from there (the one in flight at a stop is tried again)."""
    for t in rows:
        if t.status not in ("done", "failed"):
            break
        job.next_idx += 1
        job.ok += t.status == "done"
        job.failed += t.status == "failed"
