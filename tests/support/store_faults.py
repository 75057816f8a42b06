"""A store fault seen through HTTP: sift degrades while it lasts (answers live with a
warning, /v1/batch 503, /healthz 503 saying why, an error metric) and recovers by itself
once it ends. Shared by the SQLite faults and an unreachable PostgreSQL."""

from __future__ import annotations

import re
from collections.abc import Callable
from typing import Any

from tests.support.sift_server import SiftServer
from tests.support.until import until

ARTICLE = (
    "<html><head><title>Store faults</title></head><body><article><h1>Store faults</h1>"
    + "".join(
        f"<p>Paragraph {i} of words that a cleaner keeps as main content.</p>" for i in range(300)
    )
    + "</article></body></html>"
)
FAST = {"store": {"busy_timeout": "200ms", "probe_every": "200ms"}}
# A fault other than a lock: a busy machine must not turn a short wait into "database locked".
PATIENT = {"store": {"busy_timeout": "5s", "probe_every": "200ms"}}


def page(origin: Any, name: str) -> str:
    origin.set(f"/faults/{name}", ARTICLE)
    return origin.url(f"/faults/{name}")


def errors(sift: SiftServer, kind: str, op: str = "") -> float:
    """The store errors of `kind` counted so far (of `op` only, if given)."""
    text = sift.request("GET", "/metrics", token=None).body.decode()
    wanted = [f'kind="{kind}"'] + ([f'op="{op}"'] if op else [])
    return sum(
        float(value)
        for labels, value in re.findall(r"^sift_store_errors_total\{(.*)\} (\S+)$", text, re.M)
        if all(w in labels for w in wanted)
    )


def health(sift: SiftServer) -> Any:
    return sift.request("GET", "/healthz", token=None)


def degrades_and_recovers(
    sift: SiftServer, origin: Any, kind: str, reason: str, fault: Callable[[], Any]
) -> None:
    """With `fault` (a context manager) in force sift degrades; once it ends, sift recovers."""
    before = errors(sift, kind)
    assert health(sift).status == 200
    with fault():
        first = sift.fetch(page(origin, f"{kind}-1"))
        assert first.status == 200 and "Store faults" in first.json["content"]
        until(lambda: health(sift).status == 503, "/healthz 503")
        # The probe retries the write while the fault lasts: it must fail for the same reason
        # (a full database rolls the probe's transaction back itself; undoing it again must
        # not turn "disk full" into "database error").
        probes = errors(sift, kind, op="probe")
        until(lambda: errors(sift, kind, op="probe") > probes, "a probe failing for the fault")
        seen = health(sift).json
        assert seen["ok"] is False and seen["store"] == "degraded"
        assert seen["store_error"] == reason, seen

        live = sift.fetch(page(origin, f"{kind}-2"))
        assert live.status == 200 and "Store faults" in live.json["content"]
        assert live.json["warning"] == f"cache unavailable: {reason}; answered live, not cached", (
            live.json["warning"]
        )

        asked = sift.fetch(page(origin, f"{kind}-q"), question="What does paragraph 7 say?")
        assert asked.status == 200 and asked.json["digest"]["answer"], asked.body

        batch = sift.post("/v1/batch", {"targets": [{"url": page(origin, f"{kind}-b")}]})
        assert batch.status == 503, batch.body
        assert batch.json["error"] == f"store unavailable: {reason}"
        assert int(batch.headers["Retry-After"]) > 0
        assert errors(sift, kind) > before

    until(lambda: health(sift).status == 200, "/healthz 200 again (the probe)")
    assert health(sift).json["store"] == "ok"
    again = sift.fetch(page(origin, f"{kind}-3"))
    assert again.status == 200 and "warning" not in again.json
    job = sift.post("/v1/batch", {"targets": [{"url": page(origin, f"{kind}-b")}]})
    assert job.status in (200, 202), job.body
    until(
        lambda: sift.request("GET", f"/v1/batch/{job.json['job_id']}").json["status"] == "done",
        "the batch job",
    )
