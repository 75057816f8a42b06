"""The batch endpoints through HTTP (submit, read, cancel, ownership, caps, redacted logs), with
a real sift and the loopback origin; held origin paths order events, the runner's hook says when
a job ended."""

from __future__ import annotations

import json
import logging
import uuid

from sift.web.logs import JsonFormatter
from tests.support.sift_server import RESTRICTED_TOKEN


def submit(sift, targets, **kw):
    return sift.post("/v1/batch", {"targets": targets}, **kw)


def hold_name() -> str:
    return f"batch-{uuid.uuid4().hex[:8]}"


def test_submit_read_and_resubmit(sift, origin, events):
    targets = [
        {"url": origin.url("/text")},
        {"url": origin.url("/json"), "jq": ".count"},
        {"url": origin.url("/status/404")},
    ]
    r = submit(sift, targets)
    assert r.status == 202, r.body
    job_id = r.json["job_id"]
    assert r.json == {
        "success": True,
        "job_id": job_id,
        "status": "queued",
        "targets": 3,
        "reused": False,
    }
    assert events.job(job_id) == "partial"
    again = submit(sift, targets)
    assert again.status == 202 and again.json["job_id"] == job_id
    assert again.json["reused"] is True and again.json["status"] == "partial"

    s = sift.request("GET", f"/v1/batch/{job_id}")
    assert s.status == 200
    job = s.json
    assert (job["status"], job["targets_total"], job["targets_done"]) == ("partial", 3, 3)
    assert job["created_at"].endswith("Z")
    assert [(t["idx"], t["url"], t["status"]) for t in job["targets"]] == [
        (0, targets[0]["url"], "done"),
        (1, targets[1]["url"], "done"),
        (2, targets[2]["url"], "failed"),
    ]
    assert not any("result" in t for t in job["targets"])  # a summary, no results
    assert job["targets"][2]["error"] == "upstream 404 Not Found"

    full = sift.request("GET", f"/v1/batch/{job_id}?results=1").json
    assert [("result" in t) for t in full["targets"]] == [True, True, False]

    # A batch result is the /v1/fetch envelope, and a batch error is /v1/fetch's error.
    for i in (0, 1):
        one = sift.request("GET", f"/v1/batch/{job_id}/{i}")
        assert one.status == 200
        assert set(one.json) == {"job_id", "idx", "url", "status", "result"}
        direct = sift.fetch(**targets[i])
        assert direct.status == 200
        want = {k: v for k, v in direct.json.items() if k != "cached"}
        assert {k: v for k, v in one.json["result"].items() if k != "cached"} == want
        assert full["targets"][i]["result"] == one.json["result"]
    failed = sift.request("GET", f"/v1/batch/{job_id}/2").json
    direct = sift.fetch(**targets[2])
    assert direct.status == 502 and failed["code"] == 502
    assert failed["error"] == direct.json["error"]
    assert failed["upstream_status"] == direct.json["upstream_status"] == 404
    assert sift.request("GET", f"/v1/batch/{job_id}/3").status == 404


def test_refusals_name_the_target(sift, origin):
    ok = {"url": origin.url("/text")}
    cases = [
        (b"{nope", 400, "malformed JSON"),
        (b'{"targets": "x"}', 400, "targets"),
        (b'{"targets": []}', 400, "empty"),
        (b'{"targets": [5]}', 400, "target 0"),
        (
            json.dumps({"targets": [ok, {"url": "http://x.test/", "mode": "fancy"}]}).encode(),
            400,
            "target 1",
        ),
        (json.dumps({"targets": [ok], "callback": "x"}).encode(), 400, "callback"),
        (json.dumps({"targets": [ok] * 33}).encode(), 422, "too many targets: 33"),
        (
            json.dumps({"targets": [ok, {"url": "http://10.0.0.1/"}]}).encode(),
            422,
            "target 1: blocked: ",
        ),
        (
            json.dumps({"targets": [{"url": "ftp://example.com/"}]}).encode(),
            422,
            "target 0: blocked: scheme",
        ),
    ]
    for raw, status, needle in cases:
        r = sift.post("/v1/batch", raw=raw)
        assert r.status == status, (raw[:60], r.status, r.body)
        assert r.json["success"] is False and needle in r.json["error"], (needle, r.json)


def test_the_body_cap_is_256_kib_for_batch_only(sift, origin, events):
    body = json.dumps({"targets": [{"url": origin.url("/text?cap")}]})
    r = sift.post("/v1/batch", raw=(body + " " * 200_000).encode())
    assert r.status == 202, r.body
    events.job(r.json["job_id"])
    r = sift.post("/v1/batch", raw=(body + " " * 270_000).encode())
    assert r.status == 413 and "256 KiB" in r.json["error"]
    r = sift.post("/v1/fetch", raw=b'{"url": "' + b"a" * 100_000 + b'"}')
    assert r.status == 413 and "64 KiB" in r.json["error"]


def test_a_name_that_resolves_privately_fails_alone(make_sift, origin, events):
    sift = make_sift(resolver=lambda host, port: ["10.0.0.1"])
    r = submit(sift, [{"url": origin.url("/text")}, {"url": "http://private.test/"}])
    assert r.status == 202, r.body  # a name passes the pre-check: it is refused at fetch
    job_id = r.json["job_id"]
    assert events.job(job_id) == "partial"
    bad = sift.request("GET", f"/v1/batch/{job_id}/1").json
    assert bad["status"] == "failed" and bad["code"] == 403
    assert bad["error"].startswith("blocked: ")


def test_another_callers_job_is_404_everywhere(sift, origin, events):
    r = submit(sift, [{"url": origin.url("/text")}])
    job_id = r.json["job_id"]
    events.job(job_id)
    unknown = sift.request("GET", "/v1/batch/no-such-job")
    assert unknown.status == 404
    for method, path in (
        ("GET", f"/v1/batch/{job_id}"),
        ("GET", f"/v1/batch/{job_id}/0"),
        ("DELETE", f"/v1/batch/{job_id}"),
    ):
        other = sift.request(method, path, token=RESTRICTED_TOKEN)
        assert other.status == 404 and other.json == unknown.json, (method, path)
        assert sift.request(method, path, token=None).status == 401
    assert sift.request("GET", f"/v1/batch/{job_id}").json["status"] == "done"  # not cancelled


def test_cancel_stops_before_the_next_target(sift, origin, events):
    name = hold_name()
    later = f"/later-{name}"
    origin.set(later, "never fetched", content_type="text/plain")
    targets = [
        {"url": origin.url(f"/hold/{name}")},
        {"url": origin.url(later)},
        {"url": origin.url(later + "?again")},
    ]
    job_id = submit(sift, targets).json["job_id"]
    assert origin.wait_arrived(name, 20)
    r = sift.request("DELETE", f"/v1/batch/{job_id}")
    assert r.status == 200 and r.json == {"success": True, "status": "cancelled"}
    assert sift.request("GET", f"/v1/batch/{job_id}").json["status"] == "cancelled"
    origin.release(name)
    assert events.job(job_id) == "cancelled"
    job = sift.request("GET", f"/v1/batch/{job_id}?results=1").json
    assert [t["status"] for t in job["targets"]] == ["done", "pending", "pending"]
    assert "released" in job["targets"][0]["result"]["content"]  # the one in flight was stored
    assert origin.count(later) == 0
    again = sift.request("DELETE", f"/v1/batch/{job_id}")
    assert again.status == 409 and "cancelled" in again.json["error"]


def test_a_second_live_job_is_429(make_sift, origin, events):
    sift = make_sift({"batch": {"jobs_per_caller": 1}})
    name = hold_name()
    first = submit(sift, [{"url": origin.url(f"/hold/{name}")}]).json["job_id"]
    assert origin.wait_arrived(name, 20)
    r = submit(sift, [{"url": origin.url("/text?second")}])
    assert r.status == 429 and r.headers.get("Retry-After") and r.json["hint"] == "retry"
    origin.release(name)
    assert events.job(first) == "done"
    assert submit(sift, [{"url": origin.url("/text?second")}]).status == 202
    events.job(submit(sift, [{"url": origin.url("/text?second")}]).json["job_id"])


def test_disabled_is_503_on_every_route(make_sift):
    sift = make_sift({"batch": {"disabled": True}})
    for method, path in (
        ("POST", "/v1/batch"),
        ("GET", "/v1/batch/abc"),
        ("GET", "/v1/batch/abc/0"),
        ("DELETE", "/v1/batch/abc"),
    ):
        r = sift.request(method, path, {"targets": [{"url": "http://127.0.0.1/"}]})
        assert r.status == 503 and r.json["error"] == "batch disabled", (method, path)


def test_no_job_id_in_metrics_and_no_url_in_batch_logs(sift, origin, events, caplog):
    caplog.set_level(logging.INFO)
    ids = []
    for token in (None, RESTRICTED_TOKEN):
        kw = {"token": token} if token else {}
        r = submit(sift, [{"url": origin.url("/text?m")}, {"url": origin.url("/status/500")}], **kw)
        ids.append(r.json["job_id"])
        assert events.job(ids[-1]) == "partial"
        assert sift.request("GET", f"/v1/batch/{ids[-1]}/0", **kw).status == 200
    assert sift.post("/v1/batch", {"targets": [{"url": "http://10.9.8.7/"}]}).status == 422
    text = sift.request("GET", "/metrics", token=None).body.decode()
    for job_id in ids:
        assert job_id not in text
    series = [
        'sift_batch_jobs_total{outcome="created"}',
        'sift_batch_targets_total{outcome="ok"}',
        'sift_batch_targets_total{outcome="upstream_5xx"}',
        "sift_batch_queue_depth",
        "sift_batch_targets_inflight",
        "sift_batch_job_seconds_bucket",
        "sift_batch_target_seconds_bucket",
        "sift_batch_result_bytes_bucket",
        'route="/v1/batch/{id}/{idx}"',
    ]
    for name in series:
        assert name in text, name
    fmt = JsonFormatter()
    lines = [fmt.format(r) for r in caplog.records if r.name in ("sift.batch", "sift.access")]
    batch_lines = [line for line in lines if "batch" in line]
    assert any('"batch_target"' in line for line in batch_lines)
    for line in batch_lines:
        assert "127.0.0.1" not in line and "10.9.8.7" not in line, line
