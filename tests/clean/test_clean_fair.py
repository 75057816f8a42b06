"""The clean workers shared between callers, through HTTP with a real sift and real workers:
a task goes to a free worker, one caller cannot hold every worker while another waits, a jq
program is held to its request's deadline (422, never 504), and an out-of-time answer
promises only what will really happen."""

from __future__ import annotations

import re
import threading
from collections.abc import Callable
from functools import partial
from typing import Any

from tests.support.clean_workers import cpu_ticks, long_page, restarts, worker_pids
from tests.support.sift_server import FLEET_TOKEN, RESTRICTED_TOKEN, Response
from tests.support.until import until

WAIT = 60.0  # a bound on every wait, not a timing assertion
RUNAWAY = "[range(1e9)]"


def in_thread(call: Callable[[], Response], answers: list[Response]) -> threading.Thread:
    thread = threading.Thread(target=lambda: answers.append(call()), daemon=True)
    thread.start()
    return thread


def workers_of(before: set[int], count: int) -> set[int]:
    """The clean workers a sift just started, once all `count` are up."""

    def mine() -> set[int] | None:
        found = worker_pids() - before
        return found if len(found) >= count else None

    return until(mine, f"{count} clean workers", WAIT)


def wait_for_a_busy_worker(pids: set[int]) -> None:
    """Until one of `pids` has burnt half a second of CPU (a jq program is running)."""
    idle = {pid: cpu_ticks(pid) for pid in pids}
    until(lambda: any(cpu_ticks(pid) >= idle[pid] + 50 for pid in pids), "a busy worker", WAIT)


def test_one_callers_runaway_jq_does_not_stall_another_callers_cleaning(make_sift, origin):
    """Caller A runs two runaway jq programs; caller B's fetches are all answered while A's
    programs still run, and A gets 422s naming the time bound."""
    before = worker_pids()
    sift = make_sift({"clean": {"workers": 2, "deadline": "6s"}})
    pids = workers_of(before, 2)
    url = origin.url("/json")
    a: list[Response] = []
    jq = [in_thread(lambda: sift.fetch(url, jq=RUNAWAY, token=FLEET_TOKEN), a) for _ in range(2)]
    wait_for_a_busy_worker(pids)
    b = [sift.fetch(origin.url(f"/article?n={i}"), token=RESTRICTED_TOKEN) for i in range(3)]
    assert [r.status for r in b] == [200] * 3, [r.body[:200] for r in b]
    assert a == []  # B was answered first: A's programs still run
    for thread in jq:
        thread.join(WAIT)
    assert [r.status for r in a] == [422, 422], [r.body for r in a]
    assert all("jq program over its time bound" in r.json["error"] for r in a)


def test_a_task_runs_at_once_on_a_free_worker_not_behind_a_busy_one(make_sift, origin):
    """One runaway jq program holds a worker; three slow pages of another caller, asked at
    once, are all cleaned on the other worker, one after another, before the program ends:
    none waits behind the busy worker while the other is free."""
    before = worker_pids()
    sift = make_sift({"clean": {"workers": 2, "deadline": "6s"}})
    pids = workers_of(before, 2)
    a: list[Response] = []
    jq = in_thread(lambda: sift.fetch(origin.url("/json"), jq=RUNAWAY, token=FLEET_TOKEN), a)
    wait_for_a_busy_worker(pids)
    for i in range(3):
        origin.set(f"/fair/slow-{i}", long_page(300))
    b: list[Response] = []
    pages = [
        in_thread(partial(sift.fetch, origin.url(f"/fair/slow-{i}"), token=RESTRICTED_TOKEN), b)
        for i in range(3)
    ]
    for thread in pages:
        thread.join(WAIT)
    assert [r.status for r in b] == [200] * 3, [r.body[:200] for r in b]
    assert a == []  # every page was cleaned while the program still ran
    jq.join(WAIT)
    assert a[0].status == 422, a[0].body


def test_a_runaway_jq_is_held_to_the_requests_deadline_and_answers_422(make_sift, origin):
    """`timeout: 2` with the jq bound far above it: the program is stopped at the request's
    deadline and the answer is the 422 that names its bound, never a 504."""
    sift = make_sift({"clean": {"deadline": "30s"}})
    url = origin.url("/json")
    assert sift.fetch(url).status == 200  # cached: the 2 s go to the program, not the download
    first = restarts(sift, "deadline")
    r = sift.fetch(url, jq=RUNAWAY, timeout=2)
    assert r.status == 422, r.body
    found = re.fullmatch(
        r"jq program over its time bound \(stopped after ([\d.]+) s\)", r.json["error"]
    )
    assert found and float(found.group(1)) <= 2, r.json["error"]
    # The worker that ran it is replaced.
    until(lambda: restarts(sift, "deadline") >= first + 1, "the worker replaced", WAIT)
    assert sift.fetch(url, jq=".count").status == 200


def test_an_out_of_time_answer_promises_only_what_goes_on(sift, origin):
    """A fetch that is not cached (`store: false`) stopped at its deadline says so; a cached
    one says that it goes on into the cache."""
    held: dict[str, Any] = {}
    for name, store in (("fair-nostore", False), ("fair-store", True)):
        try:
            held[name] = sift.fetch(origin.url(f"/hold/{name}"), timeout=1, store=store)
        finally:
            origin.release(name)
    stopped, going = held["fair-nostore"], held["fair-store"]
    assert stopped.status == 504 and going.status == 504, (stopped.body, going.body)
    assert "nothing goes on in the background" in stopped.json["error"]
    assert "cached" not in stopped.json["error"]
    assert "goes on in the background and will be cached" in going.json["error"]


def test_two_runaway_jq_programs_of_one_caller_both_answer_422(make_sift, origin):
    """One caller's second runaway program waits for the first one's worker (the fairness
    rule: one caller never holds every worker with jq) and its request's deadline passes
    while it waits: both answer the 422 of a program over its bound, never a 504 with a
    `retry` hint (a retry would wait and time out again)."""
    sift = make_sift({"clean": {"workers": 2, "deadline": "30s"}})
    url = origin.url("/json")
    assert sift.fetch(url).status == 200  # cached: the time goes to the programs
    answers: list[Response] = []
    runs = [in_thread(lambda: sift.fetch(url, jq=RUNAWAY, timeout=3), answers) for _ in range(2)]
    for thread in runs:
        thread.join(WAIT)
    assert [r.status for r in answers] == [422, 422], [r.body for r in answers]
    for r in answers:
        assert r.json["error"].startswith("jq program over its time bound"), r.json
        assert "hint" not in r.json and "Retry-After" not in r.headers, r.json
