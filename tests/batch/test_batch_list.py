"""`GET /v1/batch`, the caller's unfinished jobs (what the page lists): the seam promises of a
door that fetches nothing. Only the caller's own jobs, of every kind; the list survives a
restart (jobs live in the store, not the process); an ended job leaves it; bad requests and
foreign callers get the one error shape."""

from __future__ import annotations

import uuid
from typing import Any

from sift.core.callers import sha256_hex
from tests.support.processes import TOKEN, Served
from tests.support.sift_server import http_call
from tests.support.until import until

OTHER = "another-callers-token"


def _settings() -> str:
    return (
        '[guard]\nallow_prefixes = ["127.0.0.0/8"]\n'
        f'[[caller]]\nname = "agent"\ntoken_sha256 = "{sha256_hex(TOKEN)}"\n'
        f'[[caller]]\nname = "other"\ntoken_sha256 = "{sha256_hex(OTHER)}"\n'
    )


def _listed(served: Served, token: str | None = TOKEN) -> list[dict[str, Any]]:
    r = http_call(served.url, "GET", "/v1/batch", token=token)
    assert r.status == 200, r.body
    assert r.json["success"] is True
    return list(r.json["jobs"])


def test_the_list_holds_the_callers_unfinished_jobs_across_a_restart(tmp_path, origin):
    held = f"list-{uuid.uuid4().hex[:8]}"
    served = Served(tmp_path, _settings()).start()
    try:
        assert _listed(served) == []
        batch = {"targets": [{"url": origin.url(f"/hold/{held}")}]}
        r = http_call(served.url, "POST", "/v1/batch", batch, token=TOKEN)
        assert r.status == 202, r.body
        job_id = r.json["job_id"]
        scrape = {"urls": [origin.url("/text?list")]}
        r = http_call(served.url, "POST", "/v2/batch/scrape", scrape, token=TOKEN)
        assert r.status == 200, r.body
        origin.wait_arrived(held)

        jobs = _listed(served)
        assert jobs[0]["job_id"] == job_id and jobs[0]["kind"] == "batch", jobs
        assert jobs[0]["status"] == "running" and jobs[0]["targets_total"] == 1, jobs
        assert {j["kind"] for j in jobs} >= {"batch"} and len(jobs) == 2, jobs
        assert _listed(served, OTHER) == []  # another caller never sees them

        served.kill()  # no drain: the jobs are the store's, and so is the list
        served.start()
        assert job_id in [j["job_id"] for j in _listed(served)]
        origin.release(held)
        until(lambda: _listed(served) == [], "the ended jobs left the list", 90)
        r = http_call(served.url, "GET", f"/v1/batch/{job_id}", token=TOKEN)
        assert r.status == 200 and r.json["status"] == "done", r.body  # read by its id
    finally:
        origin.release(held)
        served.stop()


def test_the_list_refuses_in_the_one_error_shape(tmp_path):
    served = Served(tmp_path, _settings()).start()
    try:
        for token in (None, "not-a-token"):
            r = http_call(served.url, "GET", "/v1/batch", token=token)
            assert r.status == 401 and r.json == {"success": False, "error": "unauthorized"}
        for headers, status, words in (
            ({"Host": "evil.example"}, 421, "allowed_hosts"),
            ({"Origin": "http://evil.example"}, 403, "allowed_origins"),
        ):
            r = http_call(served.url, "GET", "/v1/batch", token=TOKEN, headers=headers)
            assert r.status == status and words in r.json["error"], r.body
        for path in ("/v1/batch?limit=-1", "/v1/batch?%ff=%00", "/v1/batch?" + "a=1&" * 500):
            r = http_call(served.url, "GET", path, token=TOKEN)
            assert r.status == 200 and r.json["jobs"] == [], r.body  # it takes no parameters
        r = http_call(served.url, "PUT", "/v1/batch", {"targets": []}, token=TOKEN)
        assert r.status == 405 and r.json["success"] is False, r.body
    finally:
        served.stop()
