"""Prometheus metrics. Label values come from fixed sets: routes are templates, outcomes fold
anything unknown to `other`; no URL, host, title or job id ever becomes a label value."""

from __future__ import annotations

from prometheus_client import CollectorRegistry, Counter, Gauge, Histogram

REGISTRY = CollectorRegistry(auto_describe=True)

ROUTES = frozenset(
    {
        "/v1/fetch", "/v2/scrape", "/v1/scrape", "/v1/batch", "/v1/batch/{id}",
        "/v1/batch/{id}/{idx}", "/healthz", "/metrics", "other",
    }
)  # fmt: skip
FETCH_OUTCOMES = frozenset(
    {
        "ok", "blocked", "timeout", "too_large", "unsupported", "upstream_4xx", "upstream_5xx",
        "error", "other",
    }
)  # fmt: skip


def fold(value: str, known: frozenset[str]) -> str:
    """A label value from a known set; anything else is `other`."""
    return value if value in known else "other"


REQUESTS = Counter(
    "sift_requests", "HTTP requests by route template and status", ["route", "status"],
    registry=REGISTRY,
)
REQUEST_SECONDS = Histogram(
    "sift_request_seconds", "HTTP request latency by route template", ["route"],
    buckets=(0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 20, 30, 60, 120),
    registry=REGISTRY,
)
FETCHES = Counter("sift_fetch", "Upstream fetches by outcome", ["outcome"], registry=REGISTRY)
FETCH_SECONDS = Histogram(
    "sift_fetch_seconds", "Upstream fetch latency", registry=REGISTRY,
    buckets=(0.01, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 20, 60, 120),
)
CACHE = Counter(
    "sift_cache", "Content cache events (hit, miss, revalidated, refetched, evicted, stale)",
    ["event"], registry=REGISTRY,
)
CACHE_BYTES = Gauge("sift_cache_bytes", "Bytes held by the content cache", registry=REGISTRY)
CACHE_EVICTED_BYTES = Counter(
    "sift_cache_evicted_bytes", "Bytes evicted from the content cache", registry=REGISTRY
)
CLEANS = Counter("sift_clean", "Documents cleaned by kind", ["kind"], registry=REGISTRY)
CLEAN_RESTARTS = Counter(
    "sift_clean_worker_restarts", "Clean worker processes replaced", registry=REGISTRY
)
GATE_IN_FLIGHT = Gauge("sift_gate_in_flight", "Fetches holding a gate slot", registry=REGISTRY)
GATE_WAITING = Gauge("sift_gate_waiting", "Requests waiting for a gate slot", registry=REGISTRY)
GATE_BUSY = Counter(
    "sift_gate_busy", "Requests refused with 429 after the gate wait", registry=REGISTRY
)
ACTOR_RESTARTS = Counter(
    "sift_actor_restarts", "Actors restarted by the supervisor", ["role"], registry=REGISTRY
)
CACHE_EVENTS = frozenset({"hit", "miss", "revalidated", "refetched", "evicted", "stale"})


def fetch_outcome(outcome: str) -> None:
    FETCHES.labels(fold(outcome, FETCH_OUTCOMES)).inc()


def cache_event(event: str, n: int = 1) -> None:
    CACHE.labels(fold(event, CACHE_EVENTS)).inc(n)
