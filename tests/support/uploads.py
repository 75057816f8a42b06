"""A file uploaded to `/v2/parse` as the Firecrawl SDK sends it: multipart/form-data with an
`options` part (JSON) and a `file` part."""

from __future__ import annotations

import json
from typing import Any

from tests.support.sift_server import FLEET_TOKEN

BOUNDARY = "parse-b0undary"


def parse_upload(
    sift: Any, name: str, data: bytes, options: dict[str, Any], token: str = FLEET_TOKEN
) -> Any:
    head = (
        f'--{BOUNDARY}\r\nContent-Disposition: form-data; name="options"\r\n\r\n'
        f"{json.dumps(options)}\r\n--{BOUNDARY}\r\n"
        f'Content-Disposition: form-data; name="file"; filename="{name}"\r\n'
        "Content-Type: application/octet-stream\r\n\r\n"
    ).encode()
    raw = head + data + f"\r\n--{BOUNDARY}--\r\n".encode()
    ctype = {"Content-Type": f"multipart/form-data; boundary={BOUNDARY}"}
    return sift.post("/v2/parse", raw=raw, headers=ctype, token=token)
