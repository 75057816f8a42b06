"""GET /healthz (liveness of every actor role) and GET /metrics (Prometheus text)."""

from __future__ import annotations

from prometheus_client import CONTENT_TYPE_LATEST, generate_latest

from sift import metrics
from sift.web.base import BaseHandler


class HealthHandler(BaseHandler):
    route = "/healthz"
    public = True

    def get(self) -> None:
        alive = self.svc.system.alive()
        if self.svc.system.healthy() and not self.application.settings.get("draining"):
            self.send_json({"ok": True})
        else:
            down = sorted(name for name, ok in alive.items() if not ok)
            self.send_json({"ok": False, "down": down}, status=503)


class MetricsHandler(BaseHandler):
    route = "/metrics"
    public = True

    def get(self) -> None:
        self.set_header("Content-Type", CONTENT_TYPE_LATEST)
        self.finish(generate_latest(metrics.REGISTRY))
