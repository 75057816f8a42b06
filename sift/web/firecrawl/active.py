"""GET /v2/crawl/active (and /v1/…): the caller's crawls not ended yet — waiting their turn,
queued or running — in Firecrawl's shape: id, teamId (the caller), url, created_at, options."""

from __future__ import annotations

from typing import Any

from sift.documents.render import iso
from sift.fetch.scope import Crawl
from sift.web.firecrawl.jobs import _JobsHandler


class ActiveCrawlsHandler(_JobsHandler):
    route = "/v2/crawl/active"

    async def get(self) -> None:
        assert self.caller is not None
        crawls: list[dict[str, Any]] = []
        for job in await self.svc.jobs.batch_live(self.caller, "crawl"):
            try:
                crawl = Crawl.decode(job.spec) if job.spec is not None else None
            except ValueError:
                crawl = None  # its bounds cannot be read: it fails when it runs, saying so
            crawls.append(
                {
                    "id": job.id,
                    "teamId": self.caller.name,
                    "url": crawl.origin if crawl is not None else "",
                    "created_at": iso(job.created_at),
                    "options": crawl.options if crawl is not None else {},
                }
            )
        self.send_json({"success": True, "crawls": crawls})
