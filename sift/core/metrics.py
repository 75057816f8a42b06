"""Prometheus metrics. Label values come from fixed sets: routes are templates, outcomes fold
anything unknown to `other`; no URL, host, title or job id ever becomes a label value."""

from __future__ import annotations

from prometheus_client import CollectorRegistry, Counter, Gauge, Histogram, disable_created_metrics

# No `_created` series beside every counter and histogram: a timestamp per series that no
# dashboard reads, doubling what a scrape carries.
disable_created_metrics()  # type: ignore[no-untyped-call]
REGISTRY = CollectorRegistry(auto_describe=True)

ROUTES = frozenset(
    {
        "/v1/fetch",
        "/v1/read",
        "/v1/verify",
        "/v2/scrape",
        "/v1/scrape",
        "/v1/batch",
        "/v1/batch/{id}",
        "/v1/batch/{id}/{idx}",
        "/r/{url}",
        "/v1/progress",
        "/healthz",
        "/metrics",
        "/",
        "/static/{file}",
        "other",
        *(
            f"/{v}/{path}"
            for v in ("v1", "v2")
            for path in (
                "batch/scrape",
                "batch/scrape/{id}",
                "batch/scrape/{id}/errors",
                "crawl",
                "crawl/{id}",
                "crawl/{id}/errors",
                "crawl/active",
                "map",
                "search",
                "extract",
                "extract/{id}",
                *(
                    f"team/{what}-usage{more}"
                    for what in ("credit", "token")
                    for more in ("", "/historical")
                ),
            )
        ),
        "/v2/parse",
        "/v2/parse/formats",
        "/v2/crawl/params-preview",
        "/v2/concurrency-check",
        "/v2/team/queue-status",
        "/.well-known/http-message-signatures-directory",
    }
)
FETCH_OUTCOMES = frozenset(
    {
        "ok",
        "blocked",
        "timeout",
        "too_large",
        "unsupported",
        "upstream_4xx",
        "upstream_5xx",
        "error",
        "challenge",
        "other",
    }
)


def fold(value: str, known: frozenset[str]) -> str:
    """A label value from a known set; anything else is `other`."""
    return value if value in known else "other"


REQUESTS = Counter(
    "sift_requests",
    "HTTP requests by route template and status",
    ["route", "status"],
    registry=REGISTRY,
)
REQUEST_SECONDS = Histogram(
    "sift_request_seconds",
    "HTTP request latency by route template",
    ["route"],
    buckets=(0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 20, 30, 60, 120),
    registry=REGISTRY,
)
FETCHES = Counter("sift_fetch", "Upstream fetches by outcome", ["outcome"], registry=REGISTRY)
FETCH_SECONDS = Histogram(
    "sift_fetch_seconds",
    "Upstream fetch latency",
    registry=REGISTRY,
    buckets=(0.01, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 20, 60, 120),
)
CACHE = Counter(
    "sift_cache",
    "Content cache events (hit, miss, revalidated, refetched, evicted, stale)",
    ["event"],
    registry=REGISTRY,
)
CACHE_BYTES = Gauge("sift_cache_bytes", "Bytes held by the content cache", registry=REGISTRY)
CACHE_EVICTED_BYTES = Counter(
    "sift_cache_evicted_bytes", "Bytes evicted from the content cache", registry=REGISTRY
)
CLEANS = Counter("sift_clean", "Documents cleaned by kind", ["kind"], registry=REGISTRY)
CLEAN_RESTARTS = Counter(
    "sift_clean_worker_restarts",
    "Clean worker processes replaced (deadline, crashed, max_rss, max_tasks, startup)",
    ["reason"],
    registry=REGISTRY,
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
RENDER_OUTCOMES = frozenset(
    {"ok", "blocked_some", "blocked", "busy", "unavailable", "unprocessable", "error", "no_browser"}
)
RENDERS = Counter(
    "sift_renders", "Pages rendered in the browser, by outcome", ["outcome"], registry=REGISTRY
)
RENDER_SECONDS = Histogram(
    "sift_render_seconds",
    "Browser render latency (slot to answer)",
    registry=REGISTRY,
    buckets=(0.1, 0.25, 0.5, 1, 2, 3, 5, 8, 13, 20, 30, 60),
)
BROWSER_LAUNCHES = Counter(
    "sift_browser_launches",
    "Warm browsers started (at start, after a crash or a recycle)",
    registry=REGISTRY,
)


def render_outcome(outcome: str) -> None:
    RENDERS.labels(fold(outcome, RENDER_OUTCOMES)).inc()


def fetch_outcome(outcome: str) -> None:
    FETCHES.labels(fold(outcome, FETCH_OUTCOMES)).inc()


def cache_event(event: str, n: int = 1) -> None:
    CACHE.labels(fold(event, CACHE_EVENTS)).inc(n)


CLEAN_RESTART_REASONS = frozenset({"deadline", "crashed", "max_rss", "max_tasks", "startup"})


def clean_restart(reason: str) -> None:
    CLEAN_RESTARTS.labels(fold(reason, CLEAN_RESTART_REASONS)).inc()


# Digests (sift/digest): outcomes, latency, model tokens, embeddings built.
DIGEST_OUTCOMES = frozenset({"model", "extractive", "fallback", "cached", "error", "other"})
DIGESTS = Counter(
    "sift_digest",
    "Digests by outcome (model, extractive, fallback, cached, error)",
    ["outcome"],
    registry=REGISTRY,
)
DIGEST_SECONDS = Histogram(
    "sift_digest_seconds",
    "Time to answer a question, retrieval and model included",
    buckets=(0.01, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 20, 30, 60, 120),
    registry=REGISTRY,
)
DIGEST_TOKENS = Counter(
    "sift_digest_tokens",
    "Model tokens by direction (sent, received)",
    ["direction"],
    registry=REGISTRY,
)
EMBED_CHUNKS = Counter(
    "sift_embed_chunks", "Chunks embedded through the embeddings endpoint", registry=REGISTRY
)


def digest_outcome(outcome: str) -> None:
    DIGESTS.labels(fold(outcome, DIGEST_OUTCOMES)).inc()


# Batch: job and target outcomes (any other folds to `other`), depth, durations, result sizes.
# No job id, ever.
BATCH_JOB_OUTCOMES = frozenset(
    {"created", "reused", "done", "partial", "failed", "cancelled", "restart", "waiting", "other"}
)
BATCH_TARGET_OUTCOMES = frozenset(
    {
        "ok",
        "blocked",
        "timeout",
        "busy",
        "upstream_4xx",
        "upstream_5xx",
        "unsupported",
        "too_long",
        "cancel",
        "restart",
        "other",
    }
)
BATCH_JOBS = Counter(
    "sift_batch_jobs",
    "Batch jobs by outcome (created, reused, done, partial, failed, cancelled, restart)",
    ["outcome"],
    registry=REGISTRY,
)
BATCH_TARGETS = Counter(
    "sift_batch_targets", "Batch targets by outcome class", ["outcome"], registry=REGISTRY
)
BATCH_TAKEOVERS = Counter(
    "sift_batch_lease_takeovers",
    "Batch jobs this replica took over from another whose lease lapsed (PostgreSQL)",
    registry=REGISTRY,
)
BATCH_STEALS = Counter(
    "sift_batch_steals",
    "Waiting batch jobs this replica took from one holding more jobs than workers (PostgreSQL)",
    registry=REGISTRY,
)
BATCH_QUEUE_DEPTH = Gauge(
    "sift_batch_queue_depth", "Targets of live batch jobs still to run", registry=REGISTRY
)
BATCH_TARGETS_INFLIGHT = Gauge(
    "sift_batch_targets_inflight", "Batch targets running now", registry=REGISTRY
)
BATCH_JOB_SECONDS = Histogram(
    "sift_batch_job_seconds",
    "Time from submit to the end of a batch job",
    buckets=(1, 5, 15, 30, 60, 120, 300, 600, 1200, 1800, 3600, 7200, 14400),
    registry=REGISTRY,
)
BATCH_TARGET_SECONDS = Histogram(
    "sift_batch_target_seconds",
    "Time one try of a batch target took",
    buckets=(0.01, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 20, 60, 120, 210),
    registry=REGISTRY,
)
BATCH_RESULT_BYTES = Histogram(
    "sift_batch_result_bytes",
    "Bytes stored for one batch target (sizes the byte budget)",
    buckets=(256, 1024, 4096, 16384, 65536, 262144, 1048576, 4194304),
    registry=REGISTRY,
)


def batch_job(outcome: str, n: int = 1) -> None:
    BATCH_JOBS.labels(fold(outcome, BATCH_JOB_OUTCOMES)).inc(n)


def batch_target(outcome: str, n: int = 1) -> None:
    BATCH_TARGETS.labels(fold(outcome, BATCH_TARGET_OUTCOMES)).inc(n)


# PDFs: extractions by outcome, their time, pages, pool waits, cache hits.
PDF_OUTCOMES = frozenset({"ok", "timeout", "encrypted", "unreadable", "no_text", "busy", "other"})
PDF_EXTRACTS = Counter(
    "sift_pdf_extract", "PDF extractions by outcome", ["outcome"], registry=REGISTRY
)
PDF_EXTRACT_SECONDS = Histogram(
    "sift_pdf_extract_seconds",
    "PDF extraction time (pool wait included)",
    registry=REGISTRY,
    buckets=(0.1, 0.25, 0.5, 1, 2.5, 5, 10, 20, 40, 60, 120),
)
PDF_PAGES = Counter("sift_pdf_pages", "PDF pages extracted", registry=REGISTRY)
OCR_PAGES = Counter("sift_ocr_pages", "Pages and image frames read by OCR", registry=REGISTRY)
PDF_POOL_WAIT = Histogram(
    "sift_pdf_pool_wait_seconds",
    "Time from asking the PDF pool to holding a slot",
    registry=REGISTRY,
    buckets=(0.01, 0.1, 0.5, 1, 2.5, 5, 10, 20),
)
PDF_CACHE_HITS = Counter(
    "sift_pdf_cache_hits", "PDF answers served from the page cache", registry=REGISTRY
)


def pdf_outcome(outcome: str) -> None:
    PDF_EXTRACTS.labels(fold(outcome, PDF_OUTCOMES)).inc()


# The store (counted by `sift.actors.store`): database errors answered as 503/degraded, not a
# crash.
STORE_OPS = frozenset({"read", "write", "probe", "open", "other"})
STORE_KINDS = frozenset(
    {"disk_full", "locked", "read_only", "io_error", "corrupt", "cant_open", "unreachable", "other"}
)
STORE_ERRORS = Counter(
    "sift_store_errors",
    "Database errors by operation (read, write, probe, open) and kind (disk_full, locked, …)",
    ["op", "kind"],
    registry=REGISTRY,
)
STORE_SECONDS = Histogram(
    "sift_store_seconds",
    "How long a store call took on its store thread, by operation (read, write, probe)",
    ["op"],
    registry=REGISTRY,
    buckets=(0.0005, 0.001, 0.002, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 1, 5),
)
STORE_POOL = Gauge(
    "sift_store_pool_connections",
    "PostgreSQL store connections (`[store] url`): open, idle, and calls waiting for one",
    ["state"],
    registry=REGISTRY,
)
STORE_DEGRADED = Gauge(
    "sift_store_degraded", "1 while the store answers errors (see /healthz)", registry=REGISTRY
)


def store_error(op: str, kind: str) -> None:
    STORE_ERRORS.labels(fold(op, STORE_OPS), fold(kind, STORE_KINDS)).inc()


def store_pool(stats: dict[str, int]) -> None:
    """From psycopg_pool's `get_stats()`."""
    STORE_POOL.labels("open").set(stats.get("pool_size", 0))
    STORE_POOL.labels("idle").set(stats.get("pool_available", 0))
    STORE_POOL.labels("waiting").set(stats.get("requests_waiting", 0))


# The event loop's own health (sift.web.looplag).
LOOP_LAG = Histogram(
    "sift_loop_lag_seconds",
    "How late the event loop ran a periodic probe: the longest it was blocked, roughly",
    registry=REGISTRY,
    buckets=(0.001, 0.002, 0.005, 0.01, 0.02, 0.05, 0.1, 0.25, 0.5, 1, 2.5),
)

WEBHOOK_POSTS = Counter(
    "sift_webhook_posts",
    "Firecrawl job events posted to webhooks, by outcome: ok, failed (given up), dropped",
    ["outcome"],
    registry=REGISTRY,
)
