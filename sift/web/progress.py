"""GET /v1/progress?url=…: how far the caller's fetch of `url` has got, while it runs.

A client waiting on a long `/v1/fetch` (a PDF of hundreds of pages) asks this beside it to
show progress: `{"running": true, "stage": "pdf", "done": 41, "total": 212}` (pages extracted
of the document's pages), or `{"running": false}` when no such work is in flight for the
caller's class. `stage` names the work, so later kinds of long work (OCR) report under theirs.
It reads memory only: it never fetches, and never says anything of another class's work.
"""

from __future__ import annotations

from typing import Any

from sift.core.errors import BadRequest
from sift.web.base import BaseHandler

MAX_URL = 8192


class ProgressHandler(BaseHandler):
    route = "/v1/progress"

    async def get(self) -> None:
        assert self.caller is not None
        url = self.get_argument("url", "")
        if not url or len(url) > MAX_URL:
            raise BadRequest(f"invalid request: `url` is required, at most {MAX_URL} characters")
        body: dict[str, Any] = {"success": True, "running": False}
        reading = self.svc.readings.get((self.caller.cls, url.partition("#")[0]))
        if reading is not None:
            body["running"] = True
            snap = await self.svc.cpu.compute(reading.progress.snapshot)
            if snap is not None:
                body.update(stage="pdf", done=snap.extracted, total=snap.meta.pages)
        self.send_json(body)
