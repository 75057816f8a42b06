"""GET /healthz (store and actor roles, for a load balancer; what this server can do, for its
operator) and GET /metrics (Prometheus).

/healthz is 503 while the store answers database errors, a role is down or sift is draining.
It names no URL, path or secret: the store's trouble is one of a few fixed reasons.
"""

from __future__ import annotations

import time

from prometheus_client import CONTENT_TYPE_LATEST, generate_latest

from sift import __version__
from sift.core import metrics
from sift.web.base import BaseHandler


class HealthHandler(BaseHandler):
    route = "/healthz"
    public = True

    def get(self) -> None:
        system, reason = self.svc.system, self.svc.store_health.reason
        draining = bool(self.application.settings.get("draining"))
        ok = system.healthy() and reason is None and not draining
        body: dict[str, object] = {
            "ok": ok,
            "version": __version__,
            "uptime_s": round(time.monotonic() - self.svc.started, 1),
            "store": "ok" if reason is None else "degraded",
            "workers": system.counts(),
            "search": bool(self.svc.cfg.search.searxng_url),  # `sift mcp` lists its search tool
            "capabilities": self.svc.capabilities.report(),
        }
        if reason is not None:
            body["store_error"] = reason
        down = sorted(name for name, alive in system.alive().items() if not alive)
        if down:
            body["down"] = down
        if draining:
            body["draining"] = True
        self.send_json(body, status=200 if ok else 503)


class MetricsHandler(BaseHandler):
    route = "/metrics"
    public = True

    def get(self) -> None:
        self.set_header("Content-Type", CONTENT_TYPE_LATEST)
        self.finish(generate_latest(metrics.REGISTRY))
