"""The configuration's schema: one msgspec struct a TOML section, every key with its default.

Each key's comment (on its line, else the lines right above it) is its documentation:
`sift config example` prints it beside the default (`example.py` reads this file), so a key
added without one fails the test that holds the example equal to the schema.

No `from __future__ import annotations`: msgspec reads the types at the first decode, and
evaluating them from strings cost every `sift` command 14M instructions.
"""

import os
from pathlib import Path
from typing import Literal

import msgspec

from sift.core.units import Duration, Size


class _Section(msgspec.Struct, forbid_unknown_fields=True, kw_only=True):
    pass


class FetchConfig(_Section):
    """Fetching a URL: bodies, timeouts, redirects, the user agent, robots.txt."""

    max_body: Size = 5_000_000  # bytes of a page body (HTML, JSON, text); over it: 413
    timeout: Duration = 20  # one page fetch, connect to last byte
    pdf_max_body: Size = 100_000_000  # bytes of a PDF body
    pdf_timeout: Duration = 120  # one fetch of a PDF or an office file
    # office files and e-books (DOCX, PPTX, XLSX, ODF, RTF, EPUB, CSV/TSV): their cap
    office_max_body: Size = 50_000_000
    max_redirects: int = 5  # redirect hops followed (each checked by the guard)
    handles: int = 8  # transfers one fetch actor runs at once
    actors: int = 1  # fetch actors (threads, one CurlMulti each)
    user_agent: str = "sift/0.1 (+https://github.com/sift)"  # sent with every fetch; one line
    # robots.txt in single fetches (crawl and map always honour it): read for `usage` only,
    # its rule for the URL named there too, or a disallowed URL refused (403).
    robots: Literal["ignore", "report", "respect"] = "ignore"


class HttpConfig(_Section):
    """Client connections: a client that stalls in a request head (or idles between requests)
    longer than `idle_timeout`, or in a body longer than `body_timeout`, is dropped."""

    idle_timeout: Duration = 20  # a client idle or stalled in a request head this long: dropped
    body_timeout: Duration = 60  # a client stalled in a request body this long: dropped


class GuardConfig(_Section):
    """The SSRF guard: public addresses on ports 80 and 443 only, unless allowed here."""

    # networks ("10.0.0.0/8", "127.0.0.0/8") a caller may reach, on any port (README "The guard")
    allow_prefixes: list[str] = []
    allow_ports: list[int] = []  # ports allowed besides 80 and 443, on public addresses


class GatesConfig(_Section):
    """How many fetches run at once, in all, to one host and for one caller."""

    global_: int = msgspec.field(default=8, name="global")  # upstream fetches at once, in all
    per_host: int = 2  # fetches at once to one host
    per_caller: int = 4  # fetches at once for one caller
    wait: Duration = 10  # how long a fetch waits for a slot; then 429 busy
    # Distinct documents being fetched or extracted at once (each shared by its requesters);
    # a request for one more is 429 busy. Bounds the requests waiting at the gates too.
    flights: int = 1024


class CleanConfig(_Section):
    """The clean workers: child processes that turn HTML and JSON into text."""

    workers: int = 2  # clean worker processes (one CleanActor each)
    deadline: Duration = 15  # per task, jq programs included; past it: 422, worker replaced
    input_cap: Size = 5_000_000  # bytes of a document the cleaner reads
    max_rss: Size = 512 * 1024**2  # a worker left over this resident size after a task is replaced
    max_tasks: int = 500  # a worker is replaced after this many tasks (0: never)
    queue: int = 16  # tasks waiting per worker (besides the one it runs); beyond it 503 busy


class PdfConfig(_Section):
    """PDFs, office files and e-books: extracted in children, a pool of slots."""

    # auto: pdfium, pypdf for a file pdfium cannot open; a garbled page is tried on the other
    engine: Literal["pypdf", "pdfium", "auto"] = "auto"
    slots: int = 2  # documents extracted at once (the PDF pool)
    queue: int = 4  # documents waiting for a slot; beyond it 503 busy
    wait: Duration = 20  # how long a document waits for a slot
    deadline: Duration = 60  # one extraction (plus `page_time` a page)
    # Added to `deadline` per page once a document's page count is known: a long document is
    # not cut off by a deadline sized for a short one (20,000 pages: 60 s + 200 s).
    page_time: Duration = 0.01
    max_pages: int = 20_000  # pages past this are not extracted (the map says how many there are)
    memory: Size = 2 * 1024**3  # address space of one extraction child (RLIMIT_AS)
    spool_over: Size = 1_000_000  # a body over this waits for its slot on disk (state_dir/tmp)
    # Children extracting one document over 100 pages at once, sharing its pages (the CPU
    # count, at most 4, by default): up to `slots` × `children` children run, each under
    # `memory` of address space.
    children: int = min(4, os.cpu_count() or 1)
    # Keep `children` children started ahead (imports done, ~25 MB each, idle) for the next
    # document: each is used once, for one document, as a fresh one would be.
    spares: bool = True

    @property
    def longest(self) -> float:
        """The longest one extraction may run: the deadline of a `max_pages` document."""
        return float(self.deadline) + float(self.page_time) * self.max_pages


class CacheConfig(_Section):
    """The page cache (cache.db) and what is kept in memory."""

    ttl: Duration = 24 * 3600  # a cached page is fresh this long
    max_bytes: Size = 512 * 1024**2  # cache.db's documents, oldest evicted beyond it
    memory: Size = 64 * 1024**2  # the hot set kept in memory on the event loop
    # Long documents as pages: HTML pages split into sections, and rendered maps, page ranges
    # and grep answers, remembered in memory for the agents that ask again (bytes of text).
    sections_memory: Size = 64 * 1024**2  # long HTML pages split into sections
    render_memory: Size = 16 * 1024**2  # the rendered maps, page ranges and grep answers


class StoreConfig(_Section):
    """The databases (cache.db, jobs.db in state_dir). While a database error lasts, a write
    is retried every `probe_every` to find out that the cause is gone.

    `url`: `sqlite:` (the default: the two files in state_dir, one host) or
    `postgresql://user@host:port/db` — one database shared by several replicas (README,
    "Several replicas"). Its password comes from the URL, `$PGPASSWORD` or `~/.pgpass`.
    `pool`: PostgreSQL connections (and store actors) per replica."""

    busy_timeout: Duration = 5  # how long a statement waits for another writer's lock
    probe_every: Duration = 10  # while degraded, a write is retried this often
    url: str = "sqlite:"  # or `postgresql://user@host:port/db` (README "Several replicas")
    pool: int = 4  # PostgreSQL connections (and store actors) per replica


class DigestConfig(_Section):
    """The model that answers `question` and Firecrawl's `json`/`extract` (none: extractive)."""

    endpoint: str = ""  # an OpenAI-compatible chat completions base URL; empty: no model
    model: str = ""  # the model's name at that endpoint
    api_key_env: str = ""  # the environment variable holding its API key (never the key here)
    timeout: Duration = 40  # one call to the model
    max_input_tokens: int = 24_000  # the document's part of a prompt, at most
    concurrency: int = 2  # calls to the model at once


class EmbedConfig(_Section):
    """Embeddings that rank a long document's chunks for a question, beside BM25 (optional)."""

    endpoint: str = ""  # an OpenAI-compatible embeddings base URL; empty: BM25 alone
    model: str = ""  # the embedding model's name
    api_key_env: str = ""  # the environment variable holding its API key
    timeout: Duration = 30  # one call
    batch: int = 32  # chunks embedded a call
    remember_failures: int = 1024  # documents whose embedding failed, left alone for a while


class BatchConfig(_Section):
    """Batch jobs: /v1/batch, Firecrawl batch scrape, crawl and extract."""

    disabled: bool = False  # true: /v1/batch and Firecrawl jobs answer 503
    targets_per_job: int = 32  # URLs of one /v1/batch job
    jobs_per_caller: int = 1  # live /v1/batch jobs a caller may have
    jobs_total: int = 8  # live jobs of everyone
    workers: int = 1  # targets run at once (1 or 2)
    ttl: Duration = 24 * 3600  # an ended job and its results are kept this long
    max_bytes: Size = 256 * 1024**2  # jobs.db's results, oldest ended jobs evicted beyond it
    retry_every: Duration = 2  # a target answered busy is tried again this often
    retry_for: Duration = 600  # for at most this long; then it is stored as failed
    # Firecrawl batch scrape and crawl jobs (/v2/batch/scrape, /v2/crawl) run on the same
    # workers, round-robin and per-caller caps, with their own size cap: URLs a job may hold
    # (a crawl's `limit` may not exceed it either).
    firecrawl_urls_per_job: int = 1000
    # Firecrawl jobs beyond the live-job caps wait their turn (status `scraping`), not a 429:
    firecrawl_waiting_per_caller: int = 10  # jobs a caller may have waiting
    firecrawl_waiting_total: int = 100  # jobs everyone may have waiting
    # /v2/map: sitemap documents read per call (robots.txt's, /sitemap.xml, nested indexes).
    map_sitemaps: int = 20
    # With PostgreSQL (`[store] url`): a replica holds each job it runs for `lease`, renewed
    # every third of it; a job whose lease lapsed (its replica died) is taken over by another.
    lease: Duration = 15


class SearchConfig(_Section):
    """Search (`POST /v2/search`, the MCP search tool) through your SearXNG."""

    # A SearXNG instance whose JSON API answers `POST /v2/search` (its `/search?format=json`
    # must be enabled in SearXNG's settings). Empty: search is off and says how to turn it on.
    # It is fetched like any URL: the guard applies (`guard.allow_prefixes` for a local one).
    searxng_url: str = ""
    max_results: int = 20  # results per search (Firecrawl's `limit` is capped here)


class RenderConfig(_Section):
    """The browser path (sift.browser): headless Chromium behind sift's guarded proxy."""

    enabled: bool = True  # render when asked, where the browser is installed
    auto: bool = True  # re-render a page whose static answer got `hint: browser`
    # renders at once; one per caller; beyond: 429 / 503 busy. On 2 cores a warm browser
    # renders more pages a second with one slot than with two (measured: 0.9-1.35 against
    # 0.6-0.7 renders a second, on a loaded machine).
    slots: int = 1
    browser: str = "/usr/bin/chromium"  # the system's Chromium: `apt-get install chromium`
    deadline: Duration = 20  # a render answers with what it has by then; its child is killed
    max_rss: Size = 2 * 1024**3  # the browser's processes' memory (PSS), summed; over: killed
    recycle_after: int = 100  # renders one warm browser serves; 1: a browser per render
    # the browser starts at the first render and is given back after this long without one
    # (a warm idle browser holds about 500 MiB; a cold start adds seconds to a render); 0: never
    idle_after: Duration = 300
    max_bytes: Size = 20_000_000  # bytes one render may receive through the proxy
    user: str = "nobody"  # the browser runs as this user where sift runs as root


class WebhookConfig(_Section):
    """A Firecrawl job's `webhook` posts. With a secret, each body is signed as Firecrawl signs
    it: `X-Firecrawl-Signature: sha256=<HMAC-SHA256 of the body, hex>`."""

    secret: str = ""  # signs each body (X-Firecrawl-Signature); empty: unsigned
    attempts: int = 4  # posts of one event at most, `backoff` apart, doubling; then it failed
    backoff: Duration = 1  # the wait before a post's second try
    timeout: Duration = 10  # one post, connect to answer
    pending: int = 1000  # events waiting to be posted, all jobs; beyond it they are dropped
    max_body: Size = 8 * 1024**2  # a page event over it is posted without its document


class OcrConfig(_Section):
    """OCR of image-only PDF pages and of images, by the system's Tesseract in children."""

    tesseract: str = "/usr/bin/tesseract"  # `apt-get install tesseract-ocr`; missing: 422 hint ocr
    languages: str = "eng"  # Tesseract's names joined by `+` (`eng+rus`): `tesseract-ocr-<name>`
    dpi: int = 200  # pages are rendered at this for Tesseract: 300's recall at 150's cost (README)
    lead_pages: int = 4  # image-only pages a first answer (no `pages`) OCRs before answering
    page_time: Duration = 30  # a child's deadline grows by this per page it OCRs
    keep_bytes: Size = 1024**3  # scanned bodies kept (state_dir/scans) to OCR later ranges


class CallerConfig(_Section):
    """A caller of the API (`[[caller]]`, one a caller); none: a local token is made at start."""

    name: str  # who the caller is, in the log and the metrics
    token_sha256: str  # its token's SHA-256 in hex (`printf %s TOKEN | sha256sum`); one a caller
    # its cache class: `fleet` callers share cached pages, a `restricted` one keeps its own
    class_: Literal["fleet", "restricted"] = msgspec.field(default="fleet", name="class")


class ServerConfig(_Section):
    """Who may reach sift's listeners (the API and `sift mcp --listen`): a web page that
    rebinds a name to sift, or posts to it cross-origin, is refused before any work."""

    # `Host` values a request may carry, each with or without the listening port (an entry
    # with a port: that port only); the listen address and `public_url`'s host always may.
    allowed_hosts: list[str] = msgspec.field(
        default_factory=lambda: ["localhost", "127.0.0.1", "[::1]"]
    )
    # Browser origins (`https://app.example`) that may call sift; only these get CORS
    # headers. A request with any other `Origin` is a 403 (none: no browser page may).
    allowed_origins: list[str] = []
    # The URL callers reach sift at (behind a proxy): the links sift builds for them (the
    # reader URL's continuation, Firecrawl's `next`) start with it; default the listen address.
    public_url: str = ""


class IdentityConfig(_Section):
    """Web Bot Auth: every outgoing request signed (RFC 9421, Ed25519) with the operator's key,
    whose directory sift serves at `/.well-known/http-message-signatures-directory`."""

    enabled: bool = False  # sign every outgoing request (off: sift sends no signature)
    # The Ed25519 key (PEM, mode 0600), generated on first use; default `state_dir/identity.pem`.
    key_file: str = ""
    # The URL of the key directory as sites see it (`Signature-Agent`); default `public_url`
    # (else the listen address) + /.well-known/http-message-signatures-directory.
    signature_agent: str = ""


READ_MIN_TOKENS = 100  # a read's budget at least: room for the sources' lines and a passage
READ_MAX_TOKENS = 200_000  # and at most: one JSON answer an agent reads whole


class ReadConfig(_Section):
    """`POST /v1/read` (the MCP `read` tool, `sift read`): many sources, one budget."""

    max_urls: int = 10  # sources in one read (its `urls`)
    # the answer's budget in o200k_base tokens when a read names none (100 to 200,000): about
    # what an agent's tool result holds before its client cuts it
    max_tokens: int = 8_000


class McpConfig(_Section):
    """`sift mcp`: which tools its clients see, and the budget a client's answers get."""

    # the tools listed and callable (names, or the preset "coding": fetch, read, search);
    # empty: all. `--tools` replaces it; `--listen`'s URL may narrow it (`?tools=`).
    tools: list[str] = []
    # tools hidden (names or a preset); `--exclude-tools` replaces it, `?exclude_tools=` adds
    exclude_tools: list[str] = []
    # `max_tokens` by client name (its MCP `clientInfo.name`) when a call gives none, over the
    # table in README "MCP" (a client known to cut long tool results); 0: no default for it;
    # else 100 or more
    client_caps: dict[str, int] = {}


class Config(_Section):
    """sift's configuration (`sift config example` prints it whole)."""

    listen: str = "127.0.0.1:8731"  # host:port the HTTP API listens on
    # the token, cache.db and jobs.db; empty: $XDG_STATE_HOME/sift, else ~/.local/state/sift
    state_dir: str = ""
    out_cap: int = 50_000  # characters of one answer's text, at most
    # Every /v1/fetch and /v2/scrape answers within this (a request's `timeout` lowers it):
    # out of time, a PDF in extraction answers its pages so far, else 504; the work goes on.
    request_deadline: Duration = 55
    http: HttpConfig = msgspec.field(default_factory=HttpConfig)
    fetch: FetchConfig = msgspec.field(default_factory=FetchConfig)
    guard: GuardConfig = msgspec.field(default_factory=GuardConfig)
    gates: GatesConfig = msgspec.field(default_factory=GatesConfig)
    clean: CleanConfig = msgspec.field(default_factory=CleanConfig)
    pdf: PdfConfig = msgspec.field(default_factory=PdfConfig)
    cache: CacheConfig = msgspec.field(default_factory=CacheConfig)
    store: StoreConfig = msgspec.field(default_factory=StoreConfig)
    digest: DigestConfig = msgspec.field(default_factory=DigestConfig)
    embed: EmbedConfig = msgspec.field(default_factory=EmbedConfig)
    batch: BatchConfig = msgspec.field(default_factory=BatchConfig)
    search: SearchConfig = msgspec.field(default_factory=SearchConfig)
    render: RenderConfig = msgspec.field(default_factory=RenderConfig)
    webhook: WebhookConfig = msgspec.field(default_factory=WebhookConfig)
    ocr: OcrConfig = msgspec.field(default_factory=OcrConfig)
    server: ServerConfig = msgspec.field(default_factory=ServerConfig)  # core/config/edges.py
    identity: IdentityConfig = msgspec.field(default_factory=IdentityConfig)
    read: ReadConfig = msgspec.field(default_factory=ReadConfig)
    mcp: McpConfig = msgspec.field(default_factory=McpConfig)
    caller: list[CallerConfig] = []

    @property
    def state_path(self) -> Path:
        if self.state_dir:
            return Path(self.state_dir).expanduser()
        base = os.environ.get("XDG_STATE_HOME") or str(Path.home() / ".local" / "state")
        return Path(base) / "sift"
