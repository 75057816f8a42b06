"""Batch pieces without threads: the scheduler, outcome classes, job
identity, metrics folding, the [batch] config block and the CLI's argument and file parsing."""

from __future__ import annotations

import json

import pytest

from sift.batch.scheduler import (
    LiveJob,
    Scheduler,
    classify,
    from_error,
    gave_up,
    idem_key,
    new_job_id,
)
from sift.cli.batch import read_targets
from sift.cli.main import _parser
from sift.core import metrics
from sift.core.callers import Caller
from sift.core.config import ConfigError, loads
from sift.core.errors import (
    BadRequest,
    Blocked,
    Busy,
    SiftError,
    TooLarge,
    Unavailable,
    Unprocessable,
    Unsupported,
    UpstreamError,
    UpstreamTimeout,
)
from sift.core.request import FetchParams

A = Caller("a", "fleet")


def job(job_id: str, n: int) -> LiveJob:
    return LiveJob(job_id, A, tuple(FetchParams(url=f"http://h/{i}") for i in range(n)), 0.0)


def test_scheduler_round_robin_serial_and_retry():
    s = Scheduler(retry_every=2, retry_for=600)
    a, b = job("a", 2), job("b", 1)
    s.add(a)
    s.add(b)
    assert s.depth() == 3
    assert s.take(0) is a
    assert s.take(0) is b  # a is in flight: one target of a job at a time
    assert s.take(0) is None
    assert s.retry(b, now=10) is True  # busy: pending again, not before 12
    assert s.take(11) is None and s.next_wake(11) == 12
    s.written(a, ok=True)
    assert s.take(11) is a and a.next_idx == 1
    assert s.take(12) is b
    assert s.retry(b, now=700) is False  # busy since 10: past retry_for, give up
    s.written(b, ok=False)
    s.written(a, ok=True)
    assert (a.over, a.status, b.over, b.status) == (True, "done", True, "failed")


def test_job_status_and_cancel():
    j = job("j", 3)
    j.ok, j.failed, j.next_idx = 1, 1, 3
    assert j.over and j.status == "partial"
    c = job("c", 3)
    c.cancelled = True
    assert c.over and c.status == "cancelled"
    c.in_flight = True
    assert not c.over  # the target in flight finishes and stores first


def test_outcome_classes_and_busy():
    cases = [
        (Blocked("private address"), "blocked", 403),
        (UpstreamTimeout("timed out"), "timeout", 504),
        (Busy(), "busy", 429),
        (Unavailable("pdf workers busy", retry_after=10), "busy", 503),
        (Unsupported("image/png"), "unsupported", 415),
        (TooLarge("too large (>5 MB decompressed)"), "too_long", 413),
        (UpstreamError("upstream 404 Not Found", upstream_status=404), "upstream_4xx", 502),
        (UpstreamError("upstream 503", upstream_status=503), "upstream_5xx", 502),
        (UpstreamError("connection refused"), "other", 502),
        (Unprocessable("no text layer", hint="ocr"), "other", 422),
        (BadRequest("bad"), "other", 400),
    ]
    for exc, klass, code in cases:
        assert classify(exc) == klass, exc
        a = from_error(exc)
        assert a.outcome.status == "failed" and a.outcome.code == code
        assert a.outcome.error == exc.message and a.outcome.hint == exc.hint
        assert a.busy == (klass == "busy")  # 429/503 leave the target pending
    given_up = gave_up(from_error(Busy()), 600)
    assert not given_up.busy and "still busy after 600 s" in (given_up.outcome.error or "")
    assert from_error(SiftError()).outcome.error == "internal error"


def test_idem_key_is_canonical_and_caller_scoped():
    plain = (FetchParams(url="http://h/"),)
    spelled = (FetchParams(url="http://h/", context=True, recover=False),)
    assert idem_key("a", plain) == idem_key("a", spelled)
    assert idem_key("a", plain) != idem_key("b", plain)
    assert idem_key("a", plain) != idem_key("a", (FetchParams(url="http://h/", context=False),))
    two = (FetchParams(url="http://h/1"), FetchParams(url="http://h/2"))
    assert idem_key("a", two) != idem_key("a", two[::-1])


def test_job_ids_never_start_with_a_dash():
    """`sift batch status ID` must never read an id as an option; 1 in 64 plain tokens did."""
    ids = [new_job_id() for _ in range(3000)]
    assert not any(i.startswith("-") for i in ids)
    assert all(len(i) == 16 for i in ids) and len(set(ids)) == len(ids)
    assert any(i.startswith("_") for i in ids)  # the first character is otherwise any of 63


def test_metrics_fold_unknown_outcomes():
    before = metrics.BATCH_TARGETS.labels("other")._value.get()
    metrics.batch_target("http://secret.example/")
    assert metrics.BATCH_TARGETS.labels("other")._value.get() == before + 1
    metrics.batch_job("job-1234")
    names = {
        s.labels.get("outcome")
        for m in metrics.REGISTRY.collect()
        for s in m.samples
        if m.name.startswith("sift_batch")
    }
    assert names - {None} <= metrics.BATCH_JOB_OUTCOMES | metrics.BATCH_TARGET_OUTCOMES


def test_batch_config_block():
    cfg = loads(
        "[batch]\ndisabled = true\ntargets_per_job = 10\njobs_per_caller = 2\njobs_total = 4\n"
        'workers = 2\nttl = "12h"\nmax_bytes = "64MiB"\n'
    )
    b = cfg.batch
    assert (b.disabled, b.targets_per_job, b.jobs_per_caller, b.jobs_total) == (True, 10, 2, 4)
    assert (b.workers, b.ttl, b.max_bytes) == (2, 12 * 3600, 64 * 1024**2)
    with pytest.raises(ConfigError, match=r"batch\.workers"):
        loads("[batch]\nworkers = 3\n")
    with pytest.raises(ConfigError, match="batch"):
        loads("[batch]\nbogus = 1\n")


def test_cli_arguments_and_target_files():
    p = _parser()
    a = p.parse_args(["batch", "status", "--results", "abc"])
    assert (a.command, a.batch_command, a.results, a.job_id) == ("batch", "status", True, "abc")
    a = p.parse_args(["batch", "get", "--server", "http://127.0.0.1:1", "abc", "3"])
    assert (a.idx, a.server) == (3, "http://127.0.0.1:1")
    a = p.parse_args(["batch", "wait", "abc", "--interval", "0.5"])
    assert a.interval == 0.5 and a.timeout is None
    for argv in (["batch"], ["batch", "get", "abc"], ["batch", "get", "abc", "x"]):
        with pytest.raises(SystemExit):
            p.parse_args(argv)
    want = [{"url": "http://h/1"}, {"url": "http://h/2", "grep": "x"}]
    assert read_targets(json.dumps({"targets": want})) == want
    assert read_targets('["http://h/1", {"url": "http://h/2", "grep": "x"}]') == want
    assert read_targets("# list\nhttp://h/1\n\n  http://h/2  \n") == [
        {"url": "http://h/1"},
        {"url": "http://h/2"},
    ]
    with pytest.raises(ValueError, match="expected"):
        read_targets('{"url": "http://h/"}')
