"""Uploads to `/v2/parse` as multipart forms, and a metric's total, for tests through HTTP."""

from __future__ import annotations

import json
from typing import Any

from prometheus_client.parser import text_string_to_metric_families

from tests.support.sift_server import FLEET_TOKEN

BOUNDARY = "parse-b0undary"


def parse_upload(
    sift: Any, name: str, data: bytes, options: dict[str, Any], token: str = FLEET_TOKEN
) -> Any:
    """POST `data` as the file `name` with `options` to `/v2/parse`; the response."""
    head = (
        f'--{BOUNDARY}\r\nContent-Disposition: form-data; name="options"\r\n\r\n'
        f"{json.dumps(options)}\r\n--{BOUNDARY}\r\n"
        f'Content-Disposition: form-data; name="file"; filename="{name}"\r\n'
        "Content-Type: application/octet-stream\r\n\r\n"
    ).encode()
    raw = head + data + f"\r\n--{BOUNDARY}--\r\n".encode()
    ctype = {"Content-Type": f"multipart/form-data; boundary={BOUNDARY}"}
    return sift.post("/v2/parse", raw=raw, headers=ctype, token=token)


def metric(sift: Any, name: str) -> float:
    """The sum of the samples named `name` in the server's `/metrics` (the test process's
    registry: take differences)."""
    text = sift.request("GET", "/metrics", token=None).body.decode()
    return sum(
        s.value
        for fam in text_string_to_metric_families(text)
        for s in fam.samples
        if s.name == name
    )
