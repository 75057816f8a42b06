"""Batch across a crash, through real processes: `sift serve` killed with SIGKILL mid-job, then
started again — the job goes on where it was (the target in flight tried once more), what was
stored is intact, the database is sound. Driven with the `sift batch` CLI, as an agent would."""

from __future__ import annotations

import json
import sqlite3
import urllib.request
import uuid
from collections.abc import Callable

from tests.support.processes import Served
from tests.support.until import until


def test_a_job_cut_by_kills_goes_on_and_a_target_in_flight_twice_fails(tmp_path, origin):
    """Killed once mid-target: the job goes on after the restart and the target is tried
    again. Killed again while a target is in flight the second time: that target fails with
    `restart`, and the job still goes on (a poison pill cannot crash-loop sift)."""
    served = Served(tmp_path).start()
    once, twice = f"once-{uuid.uuid4().hex[:8]}", f"twice-{uuid.uuid4().hex[:8]}"
    urls = [
        origin.url("/text?k0"),
        origin.url("/json?k1"),
        origin.url(f"/hold/{once}"),
        origin.url(f"/hold/{twice}"),
        origin.url("/text?k4"),
    ]

    def arrived(name: str, n: int) -> Callable[[], bool]:
        return lambda: origin.count(f"/hold/{name}") >= n

    try:
        sub = served.cli("submit", "-", stdin="\n".join(urls) + "\n")
        assert sub.returncode == 0, sub.stderr
        job_id = sub.stdout.strip()  # the id alone on stdout
        assert job_id and " " not in job_id and "job queued" in sub.stderr
        # One job drains serially: the third target is held, so the first two are stored.
        until(arrived(once, 1), "target 2", 90)
        served.kill()
        origin.release(once)  # its next try is answered
        served.start()
        until(arrived(once, 2), "target 2 tried again after the restart", 90)
        until(arrived(twice, 1), "target 3", 90)
        served.kill()
        served.start()
        until(arrived(twice, 2), "target 3 tried again after the restart", 90)
        served.kill()  # in flight at a second crash: it fails, and the job goes on
        served.start()
        waited = served.cli("wait", "--interval", "0.2", job_id)
        assert f"job {job_id}: partial" in waited.stdout, waited.stdout + waited.stderr
        job = json.loads(served.cli("status", "--json", job_id).stdout)
        assert [t["status"] for t in job["targets"]] == [
            "done",
            "done",
            "done",
            "failed",
            "done",
        ]
        three = json.loads(served.cli("get", "--json", job_id, "3").stdout)
        assert "restart" in json.dumps(three), three
        assert origin.count(f"/hold/{twice}") == 2  # never a third try
        got = served.cli("get", job_id, "0")
        assert got.returncode == 0 and origin.text_body.strip() in got.stdout
        one = json.loads(served.cli("get", "--json", job_id, "1").stdout)
        assert one["result"]["kind"] == "json" and one["result"]["success"] is True

        # The restarts were counted, and the service takes new work.
        opener = urllib.request.build_opener(urllib.request.ProxyHandler({}))
        with opener.open(served.url + "/metrics", timeout=10) as r:
            text = r.read().decode()
        assert 'sift_batch_jobs_total{outcome="restart"} 1.0' in text
        assert 'sift_batch_targets_total{outcome="restart"} 1.0' in text
        fresh = served.cli("submit", "-", stdin=origin.url("/text?fresh") + "\n")
        new_id = fresh.stdout.split()[0]
        waited = served.cli("wait", "--interval", "0.2", new_id)
        assert waited.returncode == 0, waited.stderr
        assert f"job {new_id}: done" in waited.stdout
        assert "1/1 targets done" in waited.stderr  # plain progress lines off a terminal
    finally:
        served.stop()
        origin.release(once)
        origin.release(twice)
    db = sqlite3.connect(served.state / "jobs.db")
    try:
        assert db.execute("PRAGMA integrity_check").fetchone()[0] == "ok"
    finally:
        db.close()
