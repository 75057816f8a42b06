"""Clean workers under attack, through HTTP with a real sift and real worker processes: a jq
program cannot read the server's environment or anything beyond the document and is bounded
in time and memory; random bytes are an answer, not a 500; a worker killed mid-task is retried
once; a worker over `[clean] max_rss` or past `max_tasks` is replaced."""

from __future__ import annotations

import json
import logging
import os
import random
import secrets
import signal
import threading
import time
from pathlib import Path
from typing import Any

import pytest

from sift.web.logs import JsonFormatter
from tests.support.clean_workers import cpu_ticks, long_page, restarts, worker_pids
from tests.support.sift_server import FLEET_TOKEN, RESTRICTED_TOKEN
from tests.support.until import until

WAIT = 60.0  # a bound on every wait, not a timing assertion
SECRET_VAR = "TRUST_TEST_MODEL_KEY"
DOC = {"env": "a field named env", "items": [{"name": "x"}, {"name": "env"}]}
REFUSED = [
    "env",
    "$ENV",
    f"$ENV.{SECRET_VAR}",
    f"error($ENV.{SECRET_VAR})",
    f"error(env.{SECRET_VAR})",
    '"\\(env)"',
    '"key: \\("nested \\($ENV)")"',
    "{$ENV}",
    "input_filename",
    "[inputs]",
    "input",
    'import "x" as x; .',
    'include "x"; .',
    "get_search_list",
    "debug",
    ". as $x | env",
]
TOKENS = {"fleet": FLEET_TOKEN, "restricted": RESTRICTED_TOKEN}


@pytest.fixture
def secret(monkeypatch: pytest.MonkeyPatch) -> str:
    """A key planted in the server's environment before it starts."""
    value = "sk-" + secrets.token_hex(16)
    monkeypatch.setenv(SECRET_VAR, value)
    return value


def log_text(caplog: pytest.LogCaptureFixture) -> str:
    fmt = JsonFormatter()
    return "\n".join(fmt.format(r) for r in caplog.records)


@pytest.mark.parametrize("cls", ["fleet", "restricted"])
def test_jq_cannot_read_the_environment_or_beyond_the_document(
    make_sift, origin, secret, events, caplog, cls
):
    caplog.set_level(logging.DEBUG)
    sift = make_sift()
    token = TOKENS[cls]
    origin.set("/trust/doc.json", json.dumps(DOC), "application/json")
    url = origin.url("/trust/doc.json")
    for program in REFUSED:
        r = sift.fetch(url, jq=program, token=token)
        assert r.status == 400, (program, r.body)
        assert r.json["success"] is False and "is not allowed" in r.json["error"], r.body
        assert secret.encode() not in r.body
    # `env` as a field, a string or a key is the document's, and fine.
    program = '[.env, (.items[] | select(.name == "env") | .name), "$ENV"]'
    ok = sift.fetch(url, jq=program, token=token, context=False)
    assert ok.status == 200, ok.body
    assert json.loads(ok.json["content"]) == ["a field named env", "env", "$ENV"]
    # Batch targets are checked the same way, and what a batch stores carries no secret.
    bad = sift.post("/v1/batch", {"targets": [{"url": url, "jq": "$ENV"}]}, token=token)
    assert bad.status == 400 and secret.encode() not in bad.body
    job = sift.post("/v1/batch", {"targets": [{"url": url, "jq": "[.env, $__loc__]"}]}, token=token)
    assert job.status == 202, job.body
    events.job(job.json["job_id"])
    results = sift.request("GET", f"/v1/batch/{job.json['job_id']}?results=1", token=token)
    assert results.status == 200 and secret.encode() not in results.body
    for path in Path(sift.cfg.state_path).rglob("*"):
        if path.is_file():
            assert secret.encode() not in path.read_bytes(), path
    assert secret not in log_text(caplog)


def test_clean_workers_start_without_the_servers_environment(make_sift, origin, secret):
    before = worker_pids()
    sift = make_sift()
    assert sift.fetch(origin.url("/json"), jq=".", context=False).status == 200
    mine = worker_pids() - before
    assert mine
    for pid in mine:
        environ = Path(f"/proc/{pid}/environ").read_bytes()
        assert secret.encode() not in environ and SECRET_VAR.encode() not in environ
        assert [v.split(b"=")[0] for v in environ.split(b"\0") if v] == [b"PYTHONPATH"]


@pytest.mark.parametrize(
    "program",
    [
        "[range(1e9)]",
        "repeat(1)",
        "def f: f; f",
        '[limit(1e8; repeat("x"*1000))]',
        '"x" * 1e9 | . + . | length',
    ],
)
def test_a_runaway_jq_program_is_422_and_the_worker_replaced(make_sift, origin, program):
    sift = make_sift({"clean": {"deadline": "3s"}})
    url = origin.url("/json")
    before = restarts(sift, "deadline") + restarts(sift, "crashed")
    r = sift.fetch(url, jq=program, timeout=WAIT)
    assert r.status == 422, r.body
    assert r.json["success"] is False and r.json["error"].startswith("jq program over its")
    assert restarts(sift, "deadline") + restarts(sift, "crashed") == before + 1
    after = sift.fetch(url, jq=".count", timeout=WAIT)  # the service goes on
    assert after.status == 200, after.body


def test_random_bytes_get_an_answer_never_a_500(sift, origin):
    rng = random.Random(11)
    for content_type in ("text/html", "application/json", "text/html; charset=shift_jis"):
        for size in (1, 100, 10_000, 100_000, 400_000):
            for n in range(2):
                path = f"/trust/random-{len(content_type)}-{size}-{n}"
                origin.set(path, rng.randbytes(size), content_type)
                r = sift.fetch(origin.url(path), timeout=WAIT)
                assert r.status in (200, 422), (content_type, size, n, r.status, r.body[:300])
                assert r.json["success"] is (r.status == 200)


def test_a_worker_killed_mid_task_is_retried_on_a_fresh_one(make_sift, origin, caplog):
    caplog.set_level(logging.WARNING, logger="sift.clean")
    before = worker_pids()
    sift = make_sift({"clean": {"deadline": "60s"}})  # a loaded machine is no failure here
    assert sift.fetch(origin.url("/article")).status == 200  # the worker is warm
    (pid,) = worker_pids() - before
    origin.set("/trust/long", long_page(1500))
    answers: list[Any] = []
    thread = threading.Thread(
        target=lambda: answers.append(sift.fetch(origin.url("/trust/long"), timeout=WAIT))
    )
    idle = cpu_ticks(pid)
    thread.start()
    deadline = time.monotonic() + WAIT
    while cpu_ticks(pid) < idle + 10 and time.monotonic() < deadline:  # busy cleaning
        time.sleep(0.02)
    os.kill(pid, signal.SIGKILL)  # as the kernel's OOM killer would
    thread.join(WAIT)
    (r,) = answers
    assert r.status == 200, r.body
    assert r.json["title"] == "Long" and "Paragraph 1 of a long page" in r.json["content"]
    assert "retrying once on a fresh one" in log_text(caplog)
    assert pid not in worker_pids()


@pytest.mark.parametrize(
    ("overrides", "reason"),
    [({"max_rss": "1MB"}, "max_rss"), ({"max_tasks": 2}, "max_tasks")],
)
def test_a_worker_is_replaced_over_max_rss_or_after_max_tasks(make_sift, origin, overrides, reason):
    before = worker_pids()
    sift = make_sift({"clean": overrides})
    first = restarts(sift, reason)
    seen = []
    for i in range(4):
        r = sift.fetch(origin.url(f"/article?n={i}"))
        assert r.status == 200, r.body
        # The worker is replaced after its answer is sent: wait (bounded) for the replacement.
        # max_rss: every task leaves the worker over 1 MB; max_tasks: every second task ends one.
        due = (i + 1) if reason == "max_rss" else (i + 1) // 2

        def replaced(due: int = due) -> bool:
            return restarts(sift, reason) - first >= due and len(worker_pids() - before) == 1

        until(replaced, f"{due} restarts ({reason}) and one worker", 60)
        seen.append(worker_pids() - before)
    assert restarts(sift, reason) - first == (4 if reason == "max_rss" else 2)
    assert all(len(pids) == 1 for pids in seen)
    assert len({frozenset(pids) for pids in seen}) == (4 if reason == "max_rss" else 3)
