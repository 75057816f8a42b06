"""Clean workers as real child processes, driven through CleanActor and CleanPool."""

from __future__ import annotations

import asyncio
import fcntl
import os
import subprocess
import sys
from collections.abc import Callable, Iterator
from typing import Any

import pykka
import pytest

from sift.actors.bridge import ThreadReply
from sift.actors.clean import CleanActor, CleanPool, CleanRequest, CleanStats
from sift.clean.protocol import CleanResult, CleanTask
from sift.clean.worker import PIPE_SIZE, CleanWorker
from sift.core.childproc import child_env
from sift.core.config import CleanConfig, Duration
from sift.core.errors import BadRequest, SiftError, Unavailable, Unprocessable

WAIT = 60.0  # a bound on every wait, not a timing assertion
HOOKS = {"SIFT_TEST_HOOKS": "1"}
PAGE = (
    b"<html><head><title>Worker page</title></head><body><article><h1>Worker page</h1>"
    b"<p>Cleaned in a child process, with a <a href='next.html'>relative link</a> that "
    b"must resolve against the page, not the site root.</p></article></body></html>"
)


def html_task() -> CleanTask:
    return CleanTask(kind="html", body=PAGE, content_type="text/html", url="https://h.example/a/b")


def sleep_task(seconds: float = 300) -> CleanTask:
    return CleanTask(kind="__sleep__", body=str(seconds).encode(), content_type="", url="")


def ask(ref: pykka.ActorRef[Any], build: Callable[[ThreadReply[Any]], Any]) -> Any:
    reply: ThreadReply[Any] = ThreadReply()
    ref.tell(build(reply))
    return reply.wait(WAIT)


def clean_via(ref: pykka.ActorRef[Any], task: CleanTask) -> CleanResult:
    result: CleanResult = ask(ref, lambda r: CleanRequest(task, r))
    return result


def stats(ref: pykka.ActorRef[Any]) -> dict[str, Any]:
    result: dict[str, Any] = ask(ref, CleanStats)
    return result


def gone(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return True
    return False


@pytest.fixture
def actor() -> Iterator[pykka.ActorRef[Any]]:
    ref = CleanActor.start(CleanConfig(deadline=Duration(30)), worker_env=HOOKS)
    yield ref
    ref.stop(timeout=WAIT)


@pytest.fixture
def quick() -> Iterator[pykka.ActorRef[Any]]:
    """An actor whose tasks get one second: enough for the small page, not for a hang."""
    ref = CleanActor.start(CleanConfig(deadline=Duration(1)), worker_env=HOOKS)
    yield ref
    ref.stop(timeout=WAIT)


def test_a_task_is_cleaned_in_the_worker(actor: pykka.ActorRef[Any]) -> None:
    r = clean_via(actor, html_task())
    assert r.title == "Worker page"
    assert "[relative link](https://h.example/a/next.html)" in r.text
    pid = stats(actor)["pid"]
    assert pid is not None and pid != os.getpid()


def test_any_bytes_cross_the_pipe(actor: pykka.ActorRef[Any]) -> None:
    """A body that is not UTF-8 and holds newlines and NUL travels intact."""
    body = b"caf\xe9\n\x00second line\r\n" + bytes(range(256)) * 1000
    task = CleanTask(kind="text", body=body, content_type="text/plain; charset=iso-8859-1", url="")
    r = clean_via(actor, task)
    assert r.text.startswith("caf\u00e9\n\x00second line\n")
    assert len(r.text) > 250_000  # the whole body arrived


def test_expected_errors_come_back_as_their_sift_error(actor: pykka.ActorRef[Any]) -> None:
    bad_jq = CleanTask(kind="json", body=b"{}", content_type="application/json", url="", jq=".[")
    with pytest.raises(BadRequest):
        clean_via(actor, bad_jq)
    not_json = CleanTask(kind="json", body=b"{", content_type="application/json", url="", jq=".")
    with pytest.raises(Unprocessable, match="not valid JSON"):
        clean_via(actor, not_json)
    assert stats(actor)["restarts"] == 0  # the worker lives on


def test_a_hung_task_is_killed_and_the_worker_replaced(quick: pykka.ActorRef[Any]) -> None:
    first = stats(quick)["pid"]
    with pytest.raises(Unprocessable, match="cleaning timed out after 1 s"):
        clean_via(quick, sleep_task())
    after = stats(quick)
    assert after["restarts"] == 1
    assert after["pid"] != first and gone(first)
    assert clean_via(quick, html_task()).title == "Worker page"


def test_a_task_that_kills_its_worker_twice_is_503_extraction_crashed(
    actor: pykka.ActorRef[Any],
) -> None:
    exit_task = CleanTask(kind="__exit__", body=b"", content_type="", url="")
    with pytest.raises(Unavailable) as info:
        clean_via(actor, exit_task)
    assert info.value.status == 503 and info.value.retry_after
    assert info.value.message.startswith("extraction crashed")
    assert stats(actor)["restarts"] == 2  # retried once on a fresh worker, then replaced again
    assert clean_via(actor, html_task()).title == "Worker page"


def test_stopping_the_actor_leaves_no_child() -> None:
    ref = CleanActor.start(CleanConfig())
    pid = stats(ref)["pid"]
    assert pid is not None and not gone(pid)
    ref.stop(timeout=WAIT)
    assert gone(pid)


def test_on_restart_is_called() -> None:
    calls: list[str] = []
    ref = CleanActor.start(CleanConfig(deadline=Duration(1)), calls.append, worker_env=HOOKS)
    try:
        with pytest.raises(Unprocessable):
            clean_via(ref, sleep_task())
        assert calls == ["deadline"]
    finally:
        ref.stop(timeout=WAIT)


def test_hooks_need_the_explicit_environment(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("SIFT_TEST_HOOKS", "1")
    monkeypatch.setenv("https_proxy", "http://proxy.invalid:3128")
    monkeypatch.setenv("HTTP_PROXY", "http://proxy.invalid:3128")
    env = child_env()
    assert list(env) == ["PYTHONPATH"]  # nothing of the parent's environment
    ref = CleanActor.start(CleanConfig(deadline=Duration(30)))
    try:
        with pytest.raises(SiftError) as info:  # no hook: an unknown kind, answered at once
            clean_via(ref, sleep_task())
        assert info.value.status == 500
        assert stats(ref)["restarts"] == 0
    finally:
        ref.stop(timeout=WAIT)


def test_the_worker_cannot_open_sockets() -> None:
    code = (
        "from sift.clean.worker import _forbid_network\n"
        "_forbid_network()\n"
        "import socket\n"
        "try:\n"
        "    socket.create_connection(('127.0.0.1', 9), timeout=1)\n"
        "except OSError as exc:\n"
        "    print(exc)\n"
    )
    out = subprocess.run(
        [sys.executable, "-c", code], env=child_env(), capture_output=True, text=True, timeout=WAIT
    )
    assert "network access is disabled" in out.stdout


def test_pool_lets_a_lone_caller_use_every_actor_and_shares_them_when_others_wait() -> None:
    """Two actors. One caller alone cleans two pages at once; with a third of its pages and
    another caller's two waiting, the other caller starts before its third (its share is one
    actor while others wait), and nothing waits behind a busy actor once one is free."""
    refs = [CleanActor.start(CleanConfig(deadline=Duration(30))) for _ in range(2)]
    starts: list[str] = []

    async def scenario() -> list[CleanResult]:
        pool = CleanPool(refs, timeout=WAIT)

        def clean(caller: str) -> asyncio.Future[CleanResult]:
            note = lambda _bound: starts.append(caller)  # noqa: E731
            return asyncio.ensure_future(pool.clean(html_task(), caller, 30.0, started=note))

        jobs = [clean("a"), clean("a")]
        await asyncio.sleep(0)
        assert sorted(pool.busy.values()) == ["a", "a"]  # alone: every actor
        jobs += [clean("a"), clean("b"), clean("b")]
        await asyncio.sleep(0)
        assert {c: len(q) for c, q in pool.waiting.items()} == {"a": 1, "b": 2}
        results = await asyncio.gather(*jobs)
        assert pool.busy == {} and pool.waiting == {} and not pool.held
        return results

    try:
        results = asyncio.run(scenario())
    finally:
        for ref in refs:
            ref.stop(timeout=WAIT)
    assert starts[:3] == ["a", "a", "b"]
    assert [r.title for r in results] == ["Worker page"] * 5


def test_pool_never_gives_one_callers_jq_programs_the_last_actor() -> None:
    """Two actors, one caller's two runaway jq programs: one runs, the other waits, and
    another caller's page runs at once on the free actor."""
    refs = [CleanActor.start(CleanConfig(deadline=Duration(30))) for _ in range(2)]
    runaway = CleanTask(
        kind="json", body=b"{}", content_type="application/json", url="", jq="[range(1e9)] | length"
    )

    async def scenario() -> CleanResult:
        pool = CleanPool(refs, timeout=WAIT)
        programs = [asyncio.ensure_future(pool.clean(runaway, "a", 2.0)) for _ in range(2)]
        await asyncio.sleep(0)
        assert list(pool.busy.values()) == ["a"]
        assert {c: len(q) for c, q in pool.waiting.items()} == {"a": 1}
        page = asyncio.ensure_future(pool.clean(html_task(), "b", 30.0))
        await asyncio.sleep(0)
        assert sorted(pool.busy.values()) == ["a", "b"]  # at once, not behind the programs
        result = await page
        for outcome in await asyncio.gather(*programs, return_exceptions=True):
            assert isinstance(outcome, Unprocessable)
        return result

    try:
        result = asyncio.run(scenario())
    finally:
        for ref in refs:
            ref.stop(timeout=WAIT)
    assert result.title == "Worker page"


@pytest.mark.skipif(not hasattr(fcntl, "F_GETPIPE_SZ"), reason="Linux pipe sizes")
def test_a_page_and_its_text_cross_each_pipe_in_one_write() -> None:
    """Both pipes hold a page of a few hundred KB: a 90 KB result no longer blocks the child
    mid-write (64 KB by default) until the parent reads, a wake-up of both per turn."""
    worker = CleanWorker()
    worker.start()
    try:
        assert worker.proc is not None and worker.proc.stdin and worker.proc.stdout
        for end in (worker.proc.stdin, worker.proc.stdout):
            assert fcntl.fcntl(end.fileno(), fcntl.F_GETPIPE_SZ) >= PIPE_SIZE
        task = CleanTask(kind="text", body=b"word " * 100_000, content_type="text/plain", url="")
        assert len(worker.run(task, WAIT).text) > 400_000
    finally:
        worker.close()
