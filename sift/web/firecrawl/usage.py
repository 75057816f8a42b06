"""The Firecrawl usage calls, answered from sift's own state.

Concurrency is the fetch gates; the queue is the PDF pool and the batch queue. sift meters no
credits and no tokens: those calls answer 0 where the SDK's model needs a number, no plan, no
billing period, and a `warning` that says so (the SDK drops it; a person with curl reads it).
The v2 SDK reads camelCase, the v1 SDK snake_case; each route answers its version's keys.
"""

from __future__ import annotations

from typing import Any

from sift.web.firecrawl.base import FirecrawlHandler

NOT_METERED = "sift does not meter {}: it is self-hosted and unlimited; 0 is not a balance"


class ConcurrencyHandler(FirecrawlHandler):
    """GET /v2/concurrency-check: fetches holding a gate slot now, of the global limit."""

    route = "/v2/concurrency-check"

    async def get(self) -> None:
        load = await self.svc.load()
        data = {"concurrency": load["fetches"], "maxConcurrency": load["max_fetches"]}
        self.send_json({"success": True, "data": data})


class QueueHandler(FirecrawlHandler):
    """GET /v2/team/queue-status: PDF extractions and batch jobs, running and waiting."""

    route = "/v2/team/queue-status"

    async def get(self) -> None:
        load = await self.svc.load()
        active = load["pdf_running"] + load["batch_targets_running"]
        waiting = load["pdf_queued"] + load["fetches_waiting"]
        waiting += load["batch_jobs"] - load["batch_targets_running"]
        self.send_json(  # at the top level, as Firecrawl documents it (the JS SDK reads it so)
            {
                "success": True,
                "jobsInQueue": active + waiting,
                "activeJobsInQueue": active,
                "waitingJobsInQueue": waiting,
                "maxConcurrency": load["max_fetches"],
                "mostRecentSuccess": None,  # not kept
                "sift": load,
            }
        )


class MeterHandler(FirecrawlHandler):
    """GET /v{1,2}/team/{credit,token}-usage[/historical]: not metered, said plainly."""

    def initialize(
        self,
        svc: Any,
        callers: Any,
        what: str = "credits",
        v1: bool = False,
        historical: bool = False,
    ) -> None:
        super().initialize(svc, callers)
        self.what, self.v1, self.historical = what, v1, historical
        later = "/historical" if historical else ""
        self.route = f"/{'v1' if v1 else 'v2'}/team/{what.removesuffix('s')}-usage{later}"

    def get(self) -> None:
        warning = NOT_METERED.format(self.what)
        if self.historical:
            self.send_json({"success": True, "periods": [], "warning": warning})
            return
        name = "remaining_" + self.what if self.v1 else "remaining" + self.what.title()
        self.send_json({"success": True, "data": {name: 0}, "warning": warning})
