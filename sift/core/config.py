"""Configuration: one TOML file decoded into msgspec structs; every key has a default.

Sizes and durations as `core/units.py` reads them. A bad key or value stops start-up naming it
(`$.section.key`). Every number of every section must be more than 0, or 0 or more where its
default is 0 or it is in `ZERO_ALLOWED`: `check` walks the sections, so no key is forgotten.
"""

from __future__ import annotations

import ipaddress
import os
import pwd
import re
import tomllib
from collections.abc import Iterator
from pathlib import Path
from typing import Any, Literal

import msgspec

from sift.core.edge_config import IdentityConfig, ServerConfig, edge_problem
from sift.core.read_config import ReadConfig
from sift.core.units import Duration as Duration  # re-exported: callers name them here
from sift.core.units import Size as Size
from sift.core.units import parse_duration as parse_duration
from sift.core.units import parse_size as parse_size


class _Section(msgspec.Struct, forbid_unknown_fields=True, kw_only=True):
    pass


class FetchConfig(_Section):
    max_body: Size = 5_000_000
    timeout: Duration = 20
    pdf_max_body: Size = 100_000_000
    pdf_timeout: Duration = 120  # PDFs and office files alike
    # office files and e-books (DOCX, PPTX, XLSX, ODF, RTF, EPUB, CSV/TSV): their cap
    office_max_body: Size = 50_000_000
    max_redirects: int = 5
    handles: int = 8
    actors: int = 1
    user_agent: str = "sift/0.1 (+https://github.com/sift)"
    # robots.txt in single fetches (crawl and map always honour it): read for `usage` only,
    # its rule for the URL named there too, or a disallowed URL refused (403).
    robots: Literal["ignore", "report", "respect"] = "ignore"


class HttpConfig(_Section):
    """Client connections: a client that stalls in a request head (or idles between requests)
    longer than `idle_timeout`, or in a body longer than `body_timeout`, is dropped."""

    idle_timeout: Duration = 20
    body_timeout: Duration = 60


class GuardConfig(_Section):
    allow_prefixes: list[str] = []
    allow_ports: list[int] = []


class GatesConfig(_Section):
    global_: int = msgspec.field(default=8, name="global")
    per_host: int = 2
    per_caller: int = 4
    wait: Duration = 10
    # Distinct documents being fetched or extracted at once (each shared by its requesters);
    # a request for one more is 429 busy. Bounds the requests waiting at the gates too.
    flights: int = 1024


class CleanConfig(_Section):
    workers: int = 2  # clean worker processes (one CleanActor each)
    deadline: Duration = 15  # per task, jq programs included; past it: 422, worker replaced
    input_cap: Size = 5_000_000  # bytes of a document the cleaner reads
    max_rss: Size = 512 * 1024**2  # a worker left over this resident size after a task is replaced
    max_tasks: int = 500  # a worker is replaced after this many tasks (0: never)
    queue: int = 16  # tasks waiting per worker (besides the one it runs); beyond it 503 busy


class PdfConfig(_Section):
    # auto: pdfium, pypdf for a file pdfium cannot open; a garbled page is tried on the other
    engine: Literal["pypdf", "pdfium", "auto"] = "auto"
    slots: int = 2
    queue: int = 4
    wait: Duration = 20
    deadline: Duration = 60
    # Added to `deadline` per page once a document's page count is known: a long document is
    # not cut off by a deadline sized for a short one (20,000 pages: 60 s + 200 s).
    page_time: Duration = 0.01
    max_pages: int = 20_000  # pages past this are not extracted (the map says how many there are)
    memory: Size = 2 * 1024**3
    spool_over: Size = 1_000_000  # a body over this waits for its slot on disk (state_dir/tmp)
    # Children extracting one document over 200 pages at once, sharing its pages (the CPU
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
    ttl: Duration = 24 * 3600
    max_bytes: Size = 512 * 1024**2
    memory: Size = 64 * 1024**2  # the hot set kept in memory on the event loop
    # Long documents as pages: HTML pages split into sections, and rendered maps, page ranges
    # and grep answers, remembered in memory for the agents that ask again (bytes of text).
    sections_memory: Size = 64 * 1024**2
    render_memory: Size = 16 * 1024**2


class StoreConfig(_Section):
    """The databases (cache.db, jobs.db in state_dir). While a database error lasts, a write
    is retried every `probe_every` to find out that the cause is gone.

    `url`: `sqlite:` (the default: the two files in state_dir, one host) or
    `postgresql://user@host:port/db` — one database shared by several replicas (README,
    "Several replicas"). Its password comes from the URL, `$PGPASSWORD` or `~/.pgpass`.
    `pool`: PostgreSQL connections (and store actors) per replica."""

    busy_timeout: Duration = 5  # how long a statement waits for another writer's lock
    probe_every: Duration = 10
    url: str = "sqlite:"
    pool: int = 4


class DigestConfig(_Section):
    endpoint: str = ""
    model: str = ""
    api_key_env: str = ""
    timeout: Duration = 40
    max_input_tokens: int = 24_000
    concurrency: int = 2


class EmbedConfig(_Section):
    endpoint: str = ""
    model: str = ""
    api_key_env: str = ""
    timeout: Duration = 30
    batch: int = 32
    remember_failures: int = 1024  # documents whose embedding failed, left alone for a while


class BatchConfig(_Section):
    disabled: bool = False
    targets_per_job: int = 32
    jobs_per_caller: int = 1
    jobs_total: int = 8
    workers: int = 1
    ttl: Duration = 24 * 3600
    max_bytes: Size = 256 * 1024**2
    retry_every: Duration = 2
    retry_for: Duration = 600
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
    max_bytes: Size = 20_000_000  # bytes one render may receive through the proxy
    user: str = "nobody"  # the browser runs as this user where sift runs as root


class WebhookConfig(_Section):
    # A Firecrawl job's `webhook` posts. With a secret, each body is signed as Firecrawl signs
    # it: `X-Firecrawl-Signature: sha256=<HMAC-SHA256 of the body, hex>`.
    secret: str = ""
    attempts: int = 4  # posts of one event at most, `backoff` apart, doubling; then it failed
    backoff: Duration = 1
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
    name: str
    token_sha256: str
    class_: Literal["fleet", "restricted"] = msgspec.field(default="fleet", name="class")


class Config(_Section):
    listen: str = "127.0.0.1:8731"
    state_dir: str = ""
    out_cap: int = 50_000
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
    server: ServerConfig = msgspec.field(default_factory=ServerConfig)  # core/edge_config.py
    identity: IdentityConfig = msgspec.field(default_factory=IdentityConfig)
    read: ReadConfig = msgspec.field(default_factory=ReadConfig)  # core/read_config.py
    caller: list[CallerConfig] = []

    @property
    def state_path(self) -> Path:
        if self.state_dir:
            return Path(self.state_dir).expanduser()
        base = os.environ.get("XDG_STATE_HOME") or str(Path.home() / ".local" / "state")
        return Path(base) / "sift"


class ConfigError(Exception):
    """A config file that cannot be used; the message names the key."""


def _dec_hook(type_: type, obj: Any) -> Any:
    if type_ is Size:
        return Size(parse_size(obj))
    if type_ is Duration:
        return Duration(parse_duration(obj))
    raise NotImplementedError


# Numbers that may be 0 although their default is not (a key whose default is 0 may always be 0).
ZERO_ALLOWED = {"fetch.max_redirects", "pdf.queue", "cache.ttl", "cache.memory", "clean.max_tasks"}


def _numbers(section: msgspec.Struct, prefix: str = "") -> Iterator[tuple[str, Any, Any]]:
    """(key, value, default) of every number in `section` and its subsections."""
    for f in msgspec.structs.fields(section):
        value = getattr(section, f.name)
        key = f"{prefix}{f.encode_name}"
        if isinstance(value, msgspec.Struct):
            yield from _numbers(value, key + ".")
        elif isinstance(value, int | float) and not isinstance(value, bool):
            yield key, value, f.default


def listen_address(listen: str) -> tuple[str, int]:
    """`host:port` (or `[v6]:port`, or `:port`) as (host, port); ValueError says what is wrong."""
    host, sep, port = listen.strip().rpartition(":")
    if not sep or not port.isdigit():
        raise ValueError(f'{listen!r} is not host:port (write e.g. "127.0.0.1:8731")')
    if int(port) > 65535:
        raise ValueError(f"port {port} is out of range (0-65535)")
    host = host.strip("[]") or "127.0.0.1"
    try:
        ipaddress.ip_address(host)
    except ValueError:
        if not re.fullmatch(r"(?!-)[A-Za-z0-9-]{1,63}(?:\.(?!-)[A-Za-z0-9-]{1,63})*\.?", host):
            raise ValueError(f"{host!r} is neither an IP address nor a host name") from None
    return host, int(port)


def check(cfg: Config) -> None:
    """The checks a value's type cannot express; ConfigError names the key."""
    try:
        listen_address(cfg.listen)
    except ValueError as exc:
        raise ConfigError(f"config: `listen`: {exc}") from None
    for key, value, default in _numbers(cfg):
        if value < 0 or (value == 0 and default != 0 and key not in ZERO_ALLOWED):
            least = "0 or more" if key in ZERO_ALLOWED or default == 0 else "more than 0"
            raise ConfigError(f"config: `{key}` must be {least}, got {value}")
    if not cfg.store.url.startswith(("sqlite:", "postgresql://", "postgres://")):
        raise ConfigError("config: `store.url` must be `sqlite:` or `postgresql://…`")
    if cfg.pdf.children > 16:
        raise ConfigError("config: `pdf.children` must be 16 or fewer")
    if cfg.batch.workers > 2:
        raise ConfigError("config: `batch.workers` must be 1 or 2")
    if cfg.search.searxng_url and not cfg.search.searxng_url.startswith(("http://", "https://")):
        raise ConfigError("config: `search.searxng_url` must be an http:// or https:// URL")
    for p in cfg.guard.allow_prefixes:
        try:
            ipaddress.ip_network(p, strict=False)
        except ValueError:
            raise ConfigError(f"config: `guard.allow_prefixes`: not a prefix: {p!r}") from None
    for port in cfg.guard.allow_ports:
        if not 0 < port < 65536:
            raise ConfigError(f"config: `guard.allow_ports`: not a port: {port}")
    if cfg.render.enabled and os.geteuid() == 0:  # the browser drops to this user
        try:
            uid = pwd.getpwnam(cfg.render.user).pw_uid
        except KeyError:
            raise ConfigError(f"config: `render.user`: no such user {cfg.render.user!r}") from None
        if uid == 0:
            raise ConfigError("config: `render.user` must not be root")
    if (problem := edge_problem(cfg.server, cfg.identity)) is not None:
        raise ConfigError(f"config: {problem}")
    for c in cfg.caller:
        if not re.fullmatch(r"[0-9a-f]{64}", c.token_sha256):
            raise ConfigError(f"config: `caller.token_sha256` of {c.name!r} is not 64 hex digits")


def loads(text: str) -> Config:
    """Decode TOML text into a Config, or raise ConfigError naming the bad key."""
    try:
        raw = tomllib.loads(text)
    except tomllib.TOMLDecodeError as exc:
        raise ConfigError(f"config: not valid TOML: {exc}") from None
    return from_dict(raw)


def from_dict(raw: dict[str, Any]) -> Config:
    try:
        cfg = msgspec.convert(raw, Config, dec_hook=_dec_hook)
    except msgspec.ValidationError as exc:
        raise ConfigError(f"config: {exc}") from None
    plain: Config = _plain(cfg)
    check(plain)
    return plain


def _plain(value: Any) -> Any:
    """Sizes and durations as plain int/float, so they encode anywhere (msgspec, JSON)."""
    if isinstance(value, msgspec.Struct):
        changes = {f: _plain(getattr(value, f)) for f in value.__struct_fields__}
        return msgspec.structs.replace(value, **changes)
    if isinstance(value, list):
        return [_plain(v) for v in value]
    if isinstance(value, Size):
        return int(value)
    if isinstance(value, Duration):
        return float(value)
    return value


def load(path: str | os.PathLike[str] | None = None) -> Config:
    """The config from `path`, else `$SIFT_CONFIG`, else the embedded defaults."""
    path = path or os.environ.get("SIFT_CONFIG") or None
    if path is None:
        return Config()
    try:
        text = Path(path).read_text()
    except OSError as exc:
        raise ConfigError(f"config: cannot read {path}: {exc.strerror}") from None
    return loads(text)


def check_state_dir(cfg: Config) -> None:
    """The state directory exists (created if missing) and sift can write in it."""
    path = cfg.state_path
    what = f"config: `state_dir` {str(path)!r}"
    if path.exists() and not path.is_dir():
        raise ConfigError(f"{what} is not a directory")
    try:
        path.mkdir(parents=True, exist_ok=True)
    except OSError as exc:
        raise ConfigError(f"{what} cannot be created: {exc.strerror}") from None
    import tempfile  # late: only `serve` asks

    try:
        with tempfile.NamedTemporaryFile(dir=path, prefix=".write-test-"):
            pass
    except OSError as exc:
        raise ConfigError(f"{what} is not writable: {exc.strerror}") from None
