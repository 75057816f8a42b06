"""The doors of the seam suite (`tests/web/test_seams.py`): one small adapter per entry point.

A door knows how to send a URL with options through its entry point and how to read back the
answer in one form (`Answer`): ok or the error with its status and hint, the content, the
warning. A job door submits a one-target job and polls it to its end; its answer is the
target's outcome (or the refusal of the submit). Each adapter checks its door's own error
form as it reads it — sift's JSON shape, Firecrawl's, `/r/`'s line of text, an MCP tool error,
the CLI's `sift: <error> (hint: …)` on stderr with exit status 1 — so every promise tested
through a door also tests that form. A door lists the promises that apply to it (`promises`),
and the ones a branch is fixing (`xfail`); adding a door is adding one adapter and one row.
"""

from __future__ import annotations

import functools
import json
import os
import re
import socket
import subprocess
import sys
import urllib.parse
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Protocol

from tests.support.sift_server import Response, http_call
from tests.support.until import until

HINTS = {"browser", "ocr", "pages", "retry"}
REPO = Path(__file__).resolve().parents[2]
WAIT = 90.0  # the bound on every poll of a job


@dataclass
class Answer:
    """What a door answered, in one form for every door."""

    ok: bool
    status: int | None = None  # HTTP status, a target's code; None where the door has none
    error: str = ""  # the one-line error
    hint: str | None = None
    content: str = ""
    warning: str = ""
    pending: bool = False  # Firecrawl's "ask again" answer (statusCode 202)
    raw: Any = None


class Sift(Protocol):
    """A running sift, in this process (`SiftServer`) or a real `sift serve`."""

    @property
    def url(self) -> str: ...


call = http_call  # one HTTP request to sift, as every door sends it


def one_line(text: str) -> str:
    # Bounded, though an error may quote the bad value it names (up to the body's cap).
    assert text and "\n" not in text.strip() and len(text) < 70_000, repr(text[:500])
    return text.strip()


def json_error(r: Response, firecrawl: bool = False) -> Answer:
    """sift's error shape (Firecrawl's: no `upstream_status`), checked; the status is the
    table's (a Firecrawl upstream failure is 500 by design)."""
    body = r.json
    allowed = {"success", "error", "hint", "payment_required"}  # a site's price (issue 35)
    allowed |= {"code"} if firecrawl else {"upstream_status"}
    assert isinstance(body, dict) and set(body) <= allowed, (r.status, body)
    assert body["success"] is False and isinstance(body["error"], str), body
    assert body.get("hint") in HINTS | {None}, body
    assert r.status >= 400, (r.status, body)
    return Answer(False, r.status, one_line(body["error"]), body.get("hint"), raw=body)


def split_hint(text: str) -> tuple[str, str | None]:
    m = re.search(r" \(hint: (\w+)\)$", text)
    if m is None:
        return text, None
    assert m.group(1) in HINTS, text
    return text[: m.start()], m.group(1)


class Door:
    """One entry point. `get` sends a URL (`timeout` in seconds, the caller's `headers`,
    `extra` fields in the door's own spelling) and reads the answer; `malformed` sends a body
    (or argument) the door cannot read; `fuzz` yields (what, answer) for many bad ones.

    `promises` names what the door keeps (a test function of `test_seams.py` each): `shape`
    (401 for a missing or unknown token, 400 for a malformed request), `url` (a URL sift cannot
    read), `guard` (a blocked URL, a redirect to one), `deadline`, `jq` (a runaway program),
    `privacy` and `question` (the caller's `headers` leave nothing behind), `refuse_headers`
    (a stored job never keeps them, nor drops them in silence), `restart`, `bounded`, `fuzz`
    (never a 500); `edge` (a foreign `Host` or `Origin` refused before any work, sent with
    `with_headers`), `identity` (every request sift sends is signed), `payment` (a site's
    price is a refusal), `jq_wait` (a jq program out of time waiting for a worker is a 422),
    `fence` (no line of a document passes for one of sift's).
    `xfail` maps a promise, or one test of it (`blocked`, `redirect`,
    `malformed`, `silent_headers`), to the reason it fails today."""

    name = "door"
    promises: frozenset[str] = frozenset()
    xfail: dict[str, str] = {}
    page = ""  # a small page of the origin, set by the rig: what a fuzzed request may fetch
    blocked_status = 403  # a blocked URL refused up front
    url_status = 400  # a URL sift cannot read

    def get(self, s: Sift, token: str | None, url: str, **opts: Any) -> Answer:
        raise NotImplementedError

    def malformed(self, s: Sift, token: str) -> Answer:
        raise NotImplementedError

    def with_headers(self, s: Sift, token: str, url: str, http: dict[str, str]) -> Answer:
        """`get` with these HTTP request headers (`Host`, `Origin`) on the door's request."""
        raise NotImplementedError

    def fuzz(self, s: Sift, token: str) -> Iterator[tuple[str, Answer]]:
        raise NotImplementedError

    def __repr__(self) -> str:
        return self.name


# -- fuzz values ------------------------------------------------------------------------------

# fmt: off
BAD_VALUES: list[Any] = [
    None, True, False, -1, 0, 2**63, 10**40, 1e308, -1e308, 0.5, "", "x", "\x00", "\u202e🙂",
    "a" * 9000, [], [1], ["x", None], {}, {"a": {"b": [None]}},
]
RAW_BODIES: list[bytes] = [
    b"", b"{", b"[]", b"null", b'"x"', b"5", b"\xff\xfe\x00", b'{"url": "\xff"}',
    b"[" * 5000 + b"]" * 5000, b'{"a":' * 3000 + b"1" + b"}" * 3000, b'{"url": 1e999}',
    b'{"url": "x", "url": 5}', b"{}",
]
# fmt: on


def field_bodies(base: dict[str, Any], fields: list[str]) -> Iterator[tuple[str, dict[str, Any]]]:
    for name in fields:
        for value in BAD_VALUES:
            yield f"{name}={str(value)[:20]!r}", {**base, name: value}


# -- HTTP doors with sift's envelope --------------------------------------------------------


class V1Fetch(Door):
    name = "v1_fetch"
    promises = frozenset(
        {"shape", "url", "guard", "deadline", "jq", "privacy", "question", "bounded", "fuzz"}
        | {"fence"}
        | {"edge", "identity", "payment", "jq_wait"}
    )
    FIELDS = [
        "url",
        "mode",
        "question",
        "pages",
        "grep",
        "jq",
        "context",
        "recover",
        "max_chars",
        "max_tokens",
        "offset",
        "timeout",
        "max_age",
        "store",
        "whole_page",
        "include_tags",
        "exclude_tags",
        "render",
        "wait_for",
        "actions",
        "screenshot",
        "headers",
    ]

    def body(self, url: str, timeout: float | None, headers: Any, extra: dict[str, Any]) -> Any:
        body: dict[str, Any] = {"url": url, **extra}
        if timeout is not None:
            body["timeout"] = timeout
        if headers is not None:
            body["headers"] = headers
        return body

    def get(
        self,
        s: Sift,
        token: str | None,
        url: str,
        *,
        timeout: float | None = None,
        headers: Any = None,
        extra: dict[str, Any] | None = None,
        **_: Any,
    ) -> Answer:
        r = call(
            s.url, "POST", "/v1/fetch", self.body(url, timeout, headers, extra or {}), token=token
        )
        return self.read(r)

    def read(self, r: Response) -> Answer:
        if r.status != 200:
            return json_error(r)
        env = r.json
        return Answer(True, 200, content=env["content"], warning=env.get("warning", ""), raw=env)

    def malformed(self, s: Sift, token: str) -> Answer:
        return self.read(call(s.url, "POST", "/v1/fetch", raw=b'{"url": ', token=token))

    def with_headers(self, s: Sift, token: str, url: str, http: dict[str, str]) -> Answer:
        return self.read(call(s.url, "POST", "/v1/fetch", {"url": url}, token=token, headers=http))

    def fuzz(self, s: Sift, token: str) -> Iterator[tuple[str, Answer]]:
        for raw in RAW_BODIES:
            yield repr(raw[:30]), self.read(call(s.url, "POST", "/v1/fetch", raw=raw, token=token))
        base = {"url": self.page}
        for what, body in field_bodies(base, self.FIELDS):
            yield what, self.read(call(s.url, "POST", "/v1/fetch", body, token=token))


class Scrape(Door):
    """POST /v2/scrape (and /v1/scrape): Firecrawl's shape; out of time is 200 with
    `statusCode: 202` and a note to ask again, never an error the SDK retries."""

    blocked_status = 400  # Firecrawl's SDK reads a 403 as "Website Not Supported"
    promises = frozenset(
        {"shape", "url", "guard", "deadline", "privacy", "question", "bounded", "fuzz"}
        | {"fence"}
        | {"edge", "identity", "payment"}
    )
    FIELDS = [
        "url",
        "formats",
        "timeout",
        "waitFor",
        "actions",
        "maxAge",
        "storeInCache",
        "onlyMainContent",
        "includeTags",
        "excludeTags",
        "headers",
        "parsers",
        "mobile",
        "location",
        "proxy",
        "jsonOptions",
        "minAge",
        "skipTlsVerification",
    ]

    def __init__(self, version: str) -> None:
        self.path = f"/{version}/scrape"
        self.name = f"{version}_scrape"

    def get(
        self,
        s: Sift,
        token: str | None,
        url: str,
        *,
        timeout: float | None = None,
        headers: Any = None,
        extra: dict[str, Any] | None = None,
        **_: Any,
    ) -> Answer:
        body: dict[str, Any] = {"url": url, "formats": ["markdown"], **(extra or {})}
        if timeout is not None:
            body["timeout"] = int(timeout * 1000)
        if headers is not None:
            body["headers"] = headers
        return self.read(call(s.url, "POST", self.path, body, token=token))

    def read(self, r: Response) -> Answer:
        if r.status != 200:
            return json_error(r, firecrawl=True)
        data = r.json["data"]
        meta = data["metadata"]
        if meta.get("statusCode") == 202 and data.get("warning"):
            one_line(data["warning"])
            return Answer(True, 202, warning=data["warning"], pending=True, raw=r.json)
        text = data.get("markdown", "") + (data.get("summary") or "")
        return Answer(True, 200, content=text, warning=data.get("warning", ""), raw=r.json)

    def malformed(self, s: Sift, token: str) -> Answer:
        return self.read(call(s.url, "POST", self.path, raw=b"{nope", token=token))

    def with_headers(self, s: Sift, token: str, url: str, http: dict[str, str]) -> Answer:
        body = {"url": url, "formats": ["markdown"]}
        return self.read(call(s.url, "POST", self.path, body, token=token, headers=http))

    def fuzz(self, s: Sift, token: str) -> Iterator[tuple[str, Answer]]:
        for raw in RAW_BODIES:
            yield repr(raw[:30]), self.read(call(s.url, "POST", self.path, raw=raw, token=token))
        for what, body in field_bodies({"url": self.page}, self.FIELDS):
            yield what, self.read(call(s.url, "POST", self.path, body, token=token))


class Reader(Door):
    """GET /r/<url>: markdown, or one line of text `<status> <error> (hint: …)`."""

    name = "reader"
    promises = frozenset(
        {"shape", "url", "guard", "deadline", "bounded", "fuzz", "edge", "identity", "payment"}
        | {"fence"}
    )

    def get(self, s: Sift, token: str | None, url: str, *, query: str = "", **_: Any) -> Answer:
        return self.read(call(s.url, "GET", "/r/" + url + query, token=token))

    def with_headers(self, s: Sift, token: str, url: str, http: dict[str, str]) -> Answer:
        return self.read(call(s.url, "GET", "/r/" + url, token=token, headers=http))

    def read(self, r: Response) -> Answer:
        text = r.body.decode()
        if r.status == 200:
            assert r.headers["Content-Type"] == "text/markdown; charset=utf-8"
            body, _, warning = text.rstrip("\n").rpartition("\n\n[warning: ")
            if not body:
                body, warning = text, ""
            return Answer(True, 200, content=text, warning=warning.removesuffix("]"))
        assert r.headers["Content-Type"].startswith("text/plain"), r.headers
        line = one_line(text)
        assert text.endswith("\n") and line.startswith(f"{r.status} "), (r.status, text)
        error, hint = split_hint(line.removeprefix(f"{r.status} "))
        return Answer(False, r.status, error, hint)

    def malformed(self, s: Sift, token: str) -> Answer:
        return self.get(s, token, self.page, query="?max_chars=many")

    def fuzz(self, s: Sift, token: str) -> Iterator[tuple[str, Answer]]:
        page = self.page
        paths = [
            "",
            "%",
            "%zz",
            "http://[",
            "http://[::1",
            "https%3A%2F%2F",
            "https%3A%2F%2F%",
            "http:/127.0.0.2/",
            "http://",
            "ftp://127.0.0.2/",
            "http://127.0.0.2 b/",
            "\u00e9",
            "http://127.0.0.2:99999/",
            "http://127.0.0.2:-1/",
            page + "?pages=",
            page + "?pages=9-1",
            page + "?pages=x",
            page + "?grep=(",
            page + "?grep=" + "a" * 300,
            page + "?q=",
            page + "?max_chars=-1",
            page + "?max_chars=" + "9" * 40,
            page + "?max_tokens=0",
            page + "?offset=-1",
            page + "?offset=" + "9" * 40,
            page + "?page=1&pages=2",
            page + "#pages=x",
            page + "#grep=%ZZ",
            page + "?q=%ff",
            "https%3A%2F%2F127.0.0.2%2F?unknown=1",
            "https%3A%2F%2F127.0.0.2%2F?max_chars=x",
        ]
        for p in paths:
            quoted = urllib.parse.quote(p, safe=":/?&=%#[]")
            yield p[:40], self.read(call(s.url, "GET", "/r/" + quoted, token=token))
        for method in ("POST", "PUT", "DELETE"):
            yield method, self.read(call(s.url, method, "/r/" + page, raw=b"{}", token=token))


# -- job doors over HTTP --------------------------------------------------------------------


class JobDoor(Door):
    """A door whose answer comes from a job: submit, poll to the end, read the target."""

    def get(self, s: Sift, token: str | None, url: str, **opts: Any) -> Answer:
        started = self.submit(s, token, url, **opts)
        if isinstance(started, Answer):
            return started
        return self.finish(s, token, started)

    def submit(self, s: Sift, token: str | None, url: str, **opts: Any) -> str | Answer:
        raise NotImplementedError

    def finish(self, s: Sift, token: str | None, job_id: str) -> Answer:
        raise NotImplementedError

    def cancel(self, s: Sift, token: str, job_id: str) -> None:
        raise NotImplementedError


class Batch(JobDoor):
    """POST /v1/batch, GET /v1/batch/{id} until it ends, GET /v1/batch/{id}/0."""

    name = "batch"
    promises = frozenset(
        {"shape", "url", "guard", "deadline", "jq", "refuse_headers", "restart", "bounded", "fuzz"}
        | {"fence"}
    )
    # refused up front at submit (the guard's pre-check, no name resolution): 422
    blocked_status = url_status = 422

    def target(self, url: str, timeout: float | None, headers: Any, extra: Any) -> Any:
        return V1Fetch().body(url, timeout, headers, extra or {})

    def submit(
        self,
        s: Sift,
        token: str | None,
        url: str,
        *,
        timeout: float | None = None,
        headers: Any = None,
        extra: dict[str, Any] | None = None,
        **_: Any,
    ) -> str | Answer:
        body = {"targets": [self.target(url, timeout, headers, extra)]}
        r = call(s.url, "POST", "/v1/batch", body, token=token)
        if r.status != 202:
            return json_error(r)
        return str(r.json["job_id"])

    def finish(self, s: Sift, token: str | None, job_id: str) -> Answer:
        def ended() -> Any:
            r = call(s.url, "GET", f"/v1/batch/{job_id}", token=token)
            assert r.status == 200, r.body
            return r.json if r.json["status"] not in ("queued", "running") else None

        until(ended, f"batch job {job_id}", WAIT)
        r = call(s.url, "GET", f"/v1/batch/{job_id}/0", token=token)
        assert r.status == 200, r.body
        t = r.json
        if t["status"] == "done":
            env = t["result"]
            return Answer(True, 200, content=env["content"], warning=env.get("warning", ""))
        assert t["status"] == "failed", t
        return Answer(False, t.get("code"), one_line(t["error"]), t.get("hint"), raw=t)

    def cancel(self, s: Sift, token: str, job_id: str) -> None:
        call(s.url, "DELETE", f"/v1/batch/{job_id}", token=token)

    def malformed(self, s: Sift, token: str) -> Answer:
        return json_error(call(s.url, "POST", "/v1/batch", raw=b'{"targets": [', token=token))

    def fuzz(self, s: Sift, token: str) -> Iterator[tuple[str, Answer]]:
        def send(raw: bytes | None = None, body: Any = None) -> Answer:
            r = call(s.url, "POST", "/v1/batch", body, raw=raw, token=token)
            if r.status == 202:
                self.cancel(s, token, r.json["job_id"])
                return Answer(True, 202)
            return json_error(r)

        for raw in RAW_BODIES:
            yield repr(raw[:30]), send(raw=raw)
        for value in BAD_VALUES:
            yield f"targets={str(value)[:20]!r}", send(body={"targets": value})
            yield f"[targets]={str(value)[:20]!r}", send(body={"targets": [value]})
        for what, target in field_bodies({"url": self.page}, V1Fetch.FIELDS):
            yield what, send(body={"targets": [target]})


class FirecrawlJob(JobDoor):
    """A Firecrawl batch scrape or crawl: POST, GET the status until it is not `scraping`,
    the document in `data`, or the URL's entry in `/errors`."""

    def __init__(self, kind: str) -> None:
        self.kind = kind
        self.path = "/v2/batch/scrape" if kind == "scrape" else "/v2/crawl"
        self.name = "fc_batch_scrape" if kind == "scrape" else "fc_crawl"
        self.promises = frozenset(
            {"shape", "url", "guard", "deadline", "refuse_headers", "restart", "bounded", "fuzz"}
            | {"fence"}
        )
        self.blocked_status = 400  # Firecrawl's SDK reads a 403 as "Website Not Supported"

    def body(self, url: str, timeout: float | None, headers: Any, extra: Any) -> dict[str, Any]:
        opts: dict[str, Any] = {"formats": ["markdown"]}
        if timeout is not None:
            opts["timeout"] = int(timeout * 1000)
        if headers is not None:
            opts["headers"] = headers
        if self.kind == "scrape":
            return {"urls": [url], **opts, **(extra or {})}
        return {"url": url, "limit": 1, "sitemap": "skip", "scrapeOptions": opts, **(extra or {})}

    def submit(
        self,
        s: Sift,
        token: str | None,
        url: str,
        *,
        timeout: float | None = None,
        headers: Any = None,
        extra: dict[str, Any] | None = None,
        **_: Any,
    ) -> str | Answer:
        r = call(s.url, "POST", self.path, self.body(url, timeout, headers, extra), token=token)
        if r.status != 200:
            return json_error(r, firecrawl=True)
        if self.kind == "scrape" and r.json.get("invalidURLs"):
            return Answer(False, None, "invalid URL", raw=r.json)
        return str(r.json["id"])

    def finish(self, s: Sift, token: str | None, job_id: str) -> Answer:
        def ended() -> Any:
            r = call(s.url, "GET", f"{self.path}/{job_id}", token=token)
            assert r.status == 200, r.body
            return r.json if r.json["status"] != "scraping" else None

        status = until(ended, f"{self.name} job {job_id}", WAIT)
        assert status["status"] == "completed", status
        if status["data"]:
            doc = status["data"][0]
            return Answer(
                True,
                doc["metadata"]["statusCode"],
                content=doc["markdown"],
                warning=doc.get("warning", ""),
                raw=status,
            )
        r = call(s.url, "GET", f"{self.path}/{job_id}/errors", token=token)
        [err] = r.json["errors"]
        return Answer(False, int(err["code"]), one_line(err["error"]), raw=r.json)

    def cancel(self, s: Sift, token: str, job_id: str) -> None:
        call(s.url, "DELETE", f"{self.path}/{job_id}", token=token)

    def malformed(self, s: Sift, token: str) -> Answer:
        return json_error(call(s.url, "POST", self.path, raw=b"{nope", token=token), True)

    def fuzz(self, s: Sift, token: str) -> Iterator[tuple[str, Answer]]:
        def send(raw: bytes | None = None, body: Any = None) -> Answer:
            r = call(s.url, "POST", self.path, body, raw=raw, token=token)
            if r.status == 200:
                self.cancel(s, token, r.json["id"])
                return Answer(True, 200)
            return json_error(r, firecrawl=True)

        for raw in RAW_BODIES:
            yield repr(raw[:30]), send(raw=raw)
        base = self.body(self.page, None, None, None)
        fields = (
            [
                "urls",
                "formats",
                "timeout",
                "ignoreInvalidURLs",
                "webhook",
                "headers",
                "maxConcurrency",
                "onlyMainContent",
            ]
            if self.kind == "scrape"
            else [
                "url",
                "limit",
                "maxDiscoveryDepth",
                "maxDepth",
                "includePaths",
                "excludePaths",
                "sitemap",
                "scrapeOptions",
                "allowSubdomains",
                "prompt",
                "crawlEntireDomain",
                "delay",
                "ignoreSitemap",
                "sitemapOnly",
            ]
        )
        for what, body in field_bodies(base, fields):
            yield what, send(body=body)
        if self.kind == "crawl":
            for what, opts in field_bodies({"formats": ["markdown"]}, ["formats", "timeout"]):
                yield "scrapeOptions." + what, send(body={**base, "scrapeOptions": opts})


class Extract(JobDoor):
    """POST /v2/extract (the configured model), GET /v2/extract/{id} until it ends."""

    name = "fc_extract"
    blocked_status = 400  # Firecrawl's SDK reads a 403 as "Website Not Supported"
    promises = frozenset({"shape", "url", "guard", "deadline", "restart", "fuzz"})

    def submit(
        self,
        s: Sift,
        token: str | None,
        url: str,
        *,
        timeout: float | None = None,
        headers: Any = None,
        extra: dict[str, Any] | None = None,
        **_: Any,
    ) -> str | Answer:
        assert timeout is None and headers is None  # extract has neither
        body = {"urls": [url], "prompt": "the page's title", **(extra or {})}
        r = call(s.url, "POST", "/v2/extract", body, token=token)
        if r.status != 200:
            return json_error(r, firecrawl=True)
        return str(r.json["id"])

    def finish(self, s: Sift, token: str | None, job_id: str) -> Answer:
        def ended() -> Any:
            r = call(s.url, "GET", f"/v2/extract/{job_id}", token=token)
            assert r.status == 200, r.body
            return r.json if r.json["status"] != "processing" else None

        job = until(ended, f"extract job {job_id}", WAIT)
        if job["status"] == "completed":
            return Answer(
                True, 200, content=json.dumps(job["data"]), warning=job.get("warning", ""), raw=job
            )
        assert job["status"] == "failed", job
        return Answer(False, None, one_line(job["error"]), raw=job)

    def malformed(self, s: Sift, token: str) -> Answer:
        return json_error(call(s.url, "POST", "/v2/extract", raw=b"[1, 2", token=token), True)

    def fuzz(self, s: Sift, token: str) -> Iterator[tuple[str, Answer]]:
        def send(raw: bytes | None = None, body: Any = None) -> Answer:
            r = call(s.url, "POST", "/v2/extract", body, raw=raw, token=token)
            return Answer(True, 200) if r.status == 200 else json_error(r, firecrawl=True)

        for raw in RAW_BODIES:
            yield repr(raw[:30]), send(raw=raw)
        base = {"urls": [self.page], "prompt": "the title"}
        for what, body in field_bodies(base, ["urls", "prompt", "schema"]):
            yield what, send(body=body)
        for value in BAD_VALUES:
            yield f"urls[0]={str(value)[:20]!r}", send(body={**base, "urls": [value]})
            r = call(
                s.url,
                "GET",
                f"/v2/extract/{urllib.parse.quote(str(value)[:50], safe='')}",
                token=token,
            )
            yield (
                f"GET {str(value)[:20]!r}",
                json_error(r, True) if r.status != 200 else Answer(True, 200),
            )


class FirecrawlWebhook(JobDoor):
    """A Firecrawl job's `webhook`: a URL sift posts to on the caller's behalf. The door's URL
    is the webhook's (its `headers` the webhook's); the job is a batch scrape of the door's
    page, and its answer carries the status's `warning`, where failed posts are named."""

    name = "fc_webhook"
    promises = frozenset({"shape", "url", "hook", "fuzz"})

    def submit(
        self,
        s: Sift,
        token: str | None,
        url: str,
        *,
        headers: Any = None,
        extra: dict[str, Any] | None = None,
        **_: Any,
    ) -> str | Answer:
        hook = {"url": url, **({"headers": headers} if headers is not None else {})}
        body = {"urls": [self.page], "webhook": hook, **(extra or {})}
        r = call(s.url, "POST", "/v2/batch/scrape", body, token=token)
        return str(r.json["id"]) if r.status == 200 else json_error(r, firecrawl=True)

    def finish(self, s: Sift, token: str | None, job_id: str) -> Answer:
        def ended() -> Any:
            r = call(s.url, "GET", f"/v2/batch/scrape/{job_id}", token=token)
            assert r.status == 200, r.body
            return r.json if r.json["status"] != "scraping" else None

        status = until(ended, f"{self.name} job {job_id}", WAIT)
        doc = status["data"][0]
        raw = {**status, "id": job_id}
        return Answer(
            True, 200, content=doc["markdown"], warning=status.get("warning", ""), raw=raw
        )

    def malformed(self, s: Sift, token: str) -> Answer:
        body = {"urls": [self.page], "webhook": {"url": self.page, "events": "all"}}
        return json_error(call(s.url, "POST", "/v2/batch/scrape", body, token=token), True)

    def fuzz(self, s: Sift, token: str) -> Iterator[tuple[str, Answer]]:
        def send(body: Any) -> Answer:
            r = call(s.url, "POST", "/v2/batch/scrape", body, token=token)
            if r.status == 200:
                call(s.url, "DELETE", f"/v2/batch/scrape/{r.json['id']}", token=token)
                return Answer(True, 200)
            return json_error(r, firecrawl=True)

        base = {"url": "http://127.0.0.2/hook"}
        for what, hook in field_bodies(base, ["url", "headers", "metadata", "events"]):
            yield what, send({"urls": [self.page], "webhook": hook})
        for value in BAD_VALUES:
            yield f"webhook={str(value)[:20]!r}", send({"urls": [self.page], "webhook": value})


class Map(Door):
    """POST /v2/map: the site's URLs (robots.txt, sitemaps, the page's links); the answer's
    content is the list, one URL a line."""

    name = "fc_map"
    blocked_status = 400  # Firecrawl's SDK reads a 403 as "Website Not Supported"
    promises = frozenset({"shape", "url", "guard", "deadline", "fuzz"})
    FIELDS = [
        "url",
        "search",
        "limit",
        "includeSubdomains",
        "sitemap",
        "ignoreSitemap",
        "sitemapOnly",
        "timeout",
        "prompt",
    ]

    def get(self, s: Sift, token: str | None, url: str, **_: Any) -> Answer:
        return self.read(call(s.url, "POST", "/v2/map", {"url": url, "limit": 10}, token=token))

    def read(self, r: Response) -> Answer:
        if r.status != 200:
            return json_error(r, firecrawl=True)
        return Answer(True, 200, content="\n".join(link["url"] for link in r.json["links"]))

    def malformed(self, s: Sift, token: str) -> Answer:
        return self.read(call(s.url, "POST", "/v2/map", raw=b'{"url": 5', token=token))

    def fuzz(self, s: Sift, token: str) -> Iterator[tuple[str, Answer]]:
        for raw in RAW_BODIES:
            yield repr(raw[:30]), self.read(call(s.url, "POST", "/v2/map", raw=raw, token=token))
        for what, body in field_bodies({"url": self.page, "limit": 5}, self.FIELDS):
            yield what, self.read(call(s.url, "POST", "/v2/map", body, token=token))


class ParamsPreview(Door):
    """POST /v2/crawl/params-preview: a prompt turned into crawl options by the model; the
    answer's content is the options as JSON. Nothing is fetched (the URL is only checked)."""

    name = "fc_params_preview"
    promises = frozenset({"shape", "url", "fuzz"})

    def get(self, s: Sift, token: str | None, url: str, **_: Any) -> Answer:
        body = {"url": url, "prompt": "only the documentation"}
        return self.read(call(s.url, "POST", "/v2/crawl/params-preview", body, token=token))

    def read(self, r: Response) -> Answer:
        if r.status != 200:
            return json_error(r, firecrawl=True)
        return Answer(True, 200, content=json.dumps(r.json["data"]))

    def malformed(self, s: Sift, token: str) -> Answer:
        raw = b'{"url": 5, "prompt": ['
        return self.read(call(s.url, "POST", "/v2/crawl/params-preview", raw=raw, token=token))

    def fuzz(self, s: Sift, token: str) -> Iterator[tuple[str, Answer]]:
        path = "/v2/crawl/params-preview"
        for raw in RAW_BODIES:
            yield repr(raw[:30]), self.read(call(s.url, "POST", path, raw=raw, token=token))
        base = {"url": self.page, "prompt": "the docs"}
        for what, body in field_bodies(base, ["url", "prompt"]):
            yield what, self.read(call(s.url, "POST", path, body, token=token))


# -- Firecrawl's parse and search -----------------------------------------------------------

BOUNDARY = "seam-b0undary"


def multipart(name: str, data: bytes, options: bytes | None = None) -> bytes:
    parts = [
        f'--{BOUNDARY}\r\nContent-Disposition: form-data; name="file"; filename="{name}"\r\n'
        "Content-Type: application/octet-stream\r\n\r\n".encode()
        + data
        + b"\r\n"
    ]
    if options is not None:
        parts.append(
            f'--{BOUNDARY}\r\nContent-Disposition: form-data; name="options"\r\n\r\n'.encode()
            + options
            + b"\r\n"
        )
    return b"".join(parts) + f"--{BOUNDARY}--\r\n".encode()


FORM = {"Content-Type": f"multipart/form-data; boundary={BOUNDARY}"}


class Parse(Door):
    """POST /v2/parse: an upload, not a URL; answers Firecrawl's document."""

    name = "fc_parse"
    promises = frozenset({"shape", "deadline", "bounded", "fence", "fuzz"})

    def upload(
        self,
        s: Sift,
        token: str | None,
        name: str,
        data: bytes,
        options: bytes | None = None,
        headers: dict[str, str] | None = None,
    ) -> Answer:
        r = call(
            s.url,
            "POST",
            "/v2/parse",
            raw=multipart(name, data, options),
            headers=headers or FORM,
            token=token,
            timeout=120,
        )
        if r.status != 200:
            return json_error(r, firecrawl=True)
        data_ = r.json["data"]
        return Answer(True, 200, content=data_["markdown"], warning=data_.get("warning", ""))

    def get(self, s: Sift, token: str | None, url: str, **_: Any) -> Answer:
        return self.upload(s, token, "page.txt", b"words for an upload\n")

    def malformed(self, s: Sift, token: str) -> Answer:
        return json_error(call(s.url, "POST", "/v2/parse", {"file": "x"}, token=token), True)

    def fuzz(self, s: Sift, token: str) -> Iterator[tuple[str, Answer]]:
        def send(raw: bytes, ctype: str) -> Answer:
            r = call(
                s.url, "POST", "/v2/parse", raw=raw, headers={"Content-Type": ctype}, token=token
            )
            return Answer(True, 200) if r.status == 200 else json_error(r, True)

        form = FORM["Content-Type"]
        for raw in RAW_BODIES:
            yield repr(raw[:30]), send(raw, form)
            yield "json " + repr(raw[:30]), send(raw, "application/json")
        cases = [
            (multipart("a.html", b""), form),
            (multipart("a.pdf", b"%PDF-1.7\n%broken"), form),
            (multipart("a.json", b"{nope"), form),
            (multipart("a.txt", b"\xff\xfe\x00" * 100), form),
            (multipart("", b"x"), form),
            (multipart("../../etc/passwd", b"x"), form),
            (multipart("a.txt", b"x", b"{nope"), form),
            (multipart("a.txt", b"x", b"[1]"), form),
            (multipart("a.txt", b"x", b'{"formats": 5}'), form),
            (multipart("a.txt", b"x", b'{"formats": [{"type": 5}, null, "json"]}'), form),
            (b"--x\r\n\r\n--x--", "multipart/form-data; boundary=x"),
            (multipart("a.txt", b"x"), "multipart/form-data"),
            (multipart("a.txt", b"x"), "multipart/form-data; boundary="),
            (b"garbage", form),
        ]
        for i, (raw, ctype) in enumerate(cases):
            yield f"case {i}", send(raw, ctype)


class Search(Door):
    """POST /v2/search through the fake SearXNG; the URL is the one result, scraped with
    `scrapeOptions`: its document, or the `not scraped: …` warning of the result."""

    name = "fc_search"
    blocked_status = 400  # Firecrawl's SDK reads a 403 as "Website Not Supported"
    promises = frozenset({"shape", "guard", "deadline", "bounded", "fuzz"})

    def __init__(self) -> None:
        self.searx: Any = None  # set by the rig

    def get(self, s: Sift, token: str | None, url: str, **_: Any) -> Answer:
        self.searx.results = [{"url": url, "title": "a result", "content": "about it"}]
        body = {"query": "seam", "limit": 1, "scrapeOptions": {"formats": ["markdown"]}}
        r = call(s.url, "POST", "/v2/search", body, token=token)
        if r.status != 200:
            return json_error(r, firecrawl=True)
        [item] = r.json["data"]["web"]
        warning = item.get("warning", "")
        if warning.startswith("not scraped: "):
            error, hint = split_hint(one_line(warning.removeprefix("not scraped: ")))
            return Answer(False, None, error, hint, raw=r.json)
        return Answer(True, 200, content=item.get("markdown", ""), warning=warning, raw=r.json)

    def malformed(self, s: Sift, token: str) -> Answer:
        return json_error(call(s.url, "POST", "/v2/search", raw=b'{"query"', token=token), True)

    def fuzz(self, s: Sift, token: str) -> Iterator[tuple[str, Answer]]:
        self.searx.results = [{"url": self.page, "title": "t", "content": "c"}]

        def send(raw: bytes | None = None, body: Any = None) -> Answer:
            r = call(s.url, "POST", "/v2/search", body, raw=raw, token=token)
            return Answer(True, 200) if r.status == 200 else json_error(r, True)

        for raw in RAW_BODIES:
            yield repr(raw[:30]), send(raw=raw)
        base = {"query": "q", "limit": 1}
        for what, body in field_bodies(
            base, ["query", "limit", "sources", "scrapeOptions", "tbs", "location", "timeout"]
        ):
            yield what, send(body=body)
        for what, opts in field_bodies({"formats": ["markdown"]}, ["formats", "timeout"]):
            yield "scrapeOptions." + what, send(body={**base, "scrapeOptions": opts})
        for value in BAD_VALUES:
            yield f"sources=[{str(value)[:20]!r}]", send(body={**base, "sources": [value]})


# -- MCP, both transports --------------------------------------------------------------------


def mcp_env(**extra: str) -> dict[str, str]:
    """No config and no token file: only what the test gives counts."""
    empty = str(Path(__file__).parent / "no-such-state-home")
    base = {k: v for k, v in os.environ.items() if not k.startswith("SIFT_")}
    return {
        **base,
        "SIFT_CONFIG": "",
        "SIFT_TOKEN": "",
        "SIFT_URL": "",
        "XDG_STATE_HOME": empty,
        **extra,
    }


class McpSession:
    """One MCP client session held open across tests: the SDK's `Client` in a blocking
    portal's event loop (its own thread), called from the test's thread."""

    def __init__(self, client_cm: Any) -> None:
        import anyio.from_thread

        self._portal_cm = anyio.from_thread.start_blocking_portal()
        self.portal = self._portal_cm.__enter__()
        self._client_cm = self.portal.wrap_async_context_manager(client_cm)
        try:
            self.client = self._client_cm.__enter__()
        except BaseException:
            self._portal_cm.__exit__(None, None, None)
            raise

    def call(self, tool: str, args: dict[str, Any]) -> Any:
        return self.portal.call(functools.partial(self.client.call_tool, tool, args))

    def close(self) -> None:
        try:
            self._client_cm.__exit__(None, None, None)
        finally:
            self._portal_cm.__exit__(None, None, None)


def stdio_session(server: str, token: str, **options: Any) -> McpSession:
    from mcp import Client
    from mcp.client.stdio import StdioServerParameters

    params = StdioServerParameters(
        command=sys.executable,
        args=["-m", "sift", "mcp"],
        env=mcp_env(SIFT_URL=server, SIFT_TOKEN=token),
        cwd=str(REPO),
    )
    return McpSession(Client(params, **options))


def stdio_refusal(server: str, token: str) -> Answer:
    """`sift mcp` over stdio with a token sift refuses: it exits 1 before `initialize`, its
    one line on stderr."""
    done = subprocess.run(
        [sys.executable, "-m", "sift", "mcp"],
        env=mcp_env(SIFT_URL=server, SIFT_TOKEN=token),
        cwd=str(REPO),
        stdin=subprocess.DEVNULL,
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert done.returncode == 1, done
    return Answer(False, None, one_line(done.stderr.strip().splitlines()[-1]))


def http_refusal(url: str, token: str | None, http: dict[str, str] | None = None) -> Answer:
    """`initialize` over streamable HTTP with a token sift refuses (a 401 in sift's shape), or
    with `http` headers it refuses (a foreign `Host` or `Origin`: 421, 403)."""
    import httpx2

    headers = {"Accept": "application/json, text/event-stream", **(http or {})}
    if token is not None:
        headers["Authorization"] = f"Bearer {token}"
    body = {
        "jsonrpc": "2.0",
        "id": 1,
        "method": "initialize",
        "params": {
            "protocolVersion": "2025-06-18",
            "capabilities": {},
            "clientInfo": {"name": "seams", "version": "0"},
        },
    }
    r = httpx2.post(url, json=body, headers=headers, trust_env=False)
    return json_error(Response(r.status_code, dict(r.headers), r.content))


def http_session(url: str, token: str, **options: Any) -> McpSession:
    from contextlib import asynccontextmanager

    import httpx2
    from mcp import Client
    from mcp.client.streamable_http import streamable_http_client

    @asynccontextmanager
    async def opened() -> Any:
        headers = {"Authorization": f"Bearer {token}"}
        async with (
            httpx2.AsyncClient(headers=headers, trust_env=False, timeout=120) as http,
            Client(streamable_http_client(url, http_client=http), **options) as client,
        ):
            yield client

    return McpSession(opened())


class McpListen:
    """`sift mcp --listen 127.0.0.1:PORT --server SIFT` as a child process."""

    def __init__(self, server: str, log: Path) -> None:
        with socket.socket() as sock:
            sock.bind(("127.0.0.1", 0))
            self.port = sock.getsockname()[1]
        self.log = log.open("w")
        self.proc = subprocess.Popen(
            [
                sys.executable,
                "-m",
                "sift",
                "mcp",
                "--listen",
                f"127.0.0.1:{self.port}",
                "--server",
                server,
            ],
            env=mcp_env(),
            cwd=str(REPO),
            stdout=self.log,
            stderr=subprocess.STDOUT,
        )

        def up() -> bool:
            assert self.proc.poll() is None, log.read_text()
            try:
                socket.create_connection(("127.0.0.1", self.port), timeout=1).close()
                return True
            except OSError:
                return False

        until(up, "sift mcp --listen", 30)

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.port}/mcp"

    def stop(self) -> None:
        self.proc.terminate()
        self.proc.wait(10)
        self.log.close()


class Mcp(Door):
    """The `fetch` tool of `sift mcp`, over stdio or streamable HTTP: the text, or a tool error
    with sift's one line (and hint)."""

    promises = frozenset(
        {"shape", "url", "guard", "deadline", "jq", "bounded", "fuzz", "identity", "payment"}
        | {"fence"}
        | {"jq_wait"}
    )

    def __init__(self, transport: str) -> None:
        self.transport = transport
        self.name = f"mcp_{transport}"
        if transport == "http":  # `sift mcp --listen` checks Host and Origin itself
            self.promises = Mcp.promises | {"edge"}
        self.edge: Any = None  # (token, headers) -> Answer: initialize with them, set by the rig
        self.sessions: dict[str | None, McpSession] = {}
        self.opener: Any = None  # (token) -> McpSession, set by the rig
        self.refusal: Any = None  # (token) -> Answer: why a session did not start, set by the rig

    def options(self) -> dict[str, Any]:
        """The session's `Client` options (a door may declare an extension)."""
        return {}

    def session(self, token: str | None) -> McpSession:
        if token not in self.sessions:
            self.sessions[token] = self.opener(token)
        return self.sessions[token]

    def close(self) -> None:
        for session in self.sessions.values():
            session.close()

    def tool(
        self, token: str | None, args: dict[str, Any], name: str = "fetch", lines: bool = True
    ) -> Answer:
        """The tool's answer; `lines=False` reads an error without checking it is one line. A
        token sift refuses fails at `initialize`: the answer is then how the session was
        refused."""
        try:
            session = self.session(token)
        except Exception:
            return self.refusal(token)
        result = session.call(name, args)
        text = "".join(c.text for c in result.content if c.type == "text")
        if result.is_error:
            error, hint = split_hint(one_line(text) if lines else text)
            return Answer(False, None, error, hint, raw=result)
        body, _, warning = text.rpartition("\n\n[warning: ")
        ok = Answer(True, 200, content=text, warning=warning.removesuffix("]") if body else "")
        ok.raw = result
        return ok

    def get(
        self, s: Sift, token: str | None, url: str, *, extra: dict[str, Any] | None = None, **_: Any
    ) -> Answer:
        return self.tool(token, {"url": url, **(extra or {})})

    def malformed(self, s: Sift, token: str) -> Answer:
        return self.tool(token, {"url": self.page, "max_chars": "many"})

    def with_headers(self, s: Sift, token: str, url: str, http: dict[str, str]) -> Answer:
        return self.edge(token, http)  # refused at `initialize`, before any tool

    def fuzz(self, s: Sift, token: str) -> Iterator[tuple[str, Answer]]:
        args = ["url", "pages", "grep", "question", "max_chars", "raw", "jq", "render"]
        args += ["max_tokens", "start_index"]
        values: list[Any] = [None, 5, -1, 1e308, "", "\x00", [], {}, "a" * 9000]
        for name in args:
            for value in values:
                yield (
                    f"{name}={str(value)[:20]!r}",
                    self.tool(token, {"url": self.page, name: value}, lines=False),
                )
        yield "no url", self.tool(token, {}, lines=False)
        yield "unknown arg", self.tool(token, {"url": self.page, "nope": 1}, lines=False)
        for tool, bad in (
            ("batch_status", {"job_id": 5}),
            ("batch_status", {"job_id": "../x"}),
            ("batch_result", {"job_id": "x", "idx": -1}),
            ("map", {"url": 5}),
            ("crawl", {"url": "", "limit": 0}),
            ("crawl_status", {"job_id": "%00"}),
            ("batch_status", {"job_id": "x", "wait_seconds": -1}),
            ("search", {"query": ""}),
            ("search", {"query": "x", "limit": "many"}),
        ):
            yield f"{tool} {bad}", self.tool(token, bad, tool, lines=False)


# -- the CLI ---------------------------------------------------------------------------------


def cli(
    server: str, token: str | None, *args: str, stdin: str | None = None, timeout: float = 120
) -> subprocess.CompletedProcess[str]:
    env = mcp_env(SIFT_URL=server, SIFT_TOKEN=token or "")
    return subprocess.run(
        [sys.executable, "-m", "sift", *args],
        input=stdin,
        capture_output=True,
        text=True,
        env=env,
        cwd=str(REPO),
        timeout=timeout,
    )


def cli_answer(run: subprocess.CompletedProcess[str]) -> Answer:
    """Exit 0: the text on stdout. Exit 1: `sift: <error> (hint: …)`, one line on stderr."""
    assert "Traceback" not in run.stderr, run.stderr
    if run.returncode == 0:
        warnings = [ln for ln in run.stderr.splitlines() if ln.startswith("sift: warning: ")]
        return Answer(
            True,
            200,
            content=run.stdout,
            warning=warnings[0].removeprefix("sift: warning: ") if warnings else "",
        )
    assert run.returncode == 1, (run.returncode, run.stderr)
    line = one_line(run.stderr)
    assert line.startswith("sift: "), run.stderr
    error, hint = split_hint(line.removeprefix("sift: "))
    return Answer(False, None, error, hint, raw=run)


class CliFetch(Door):
    """`sift fetch URL` against the server (`$SIFT_URL`, `$SIFT_TOKEN`)."""

    name = "cli_fetch"
    promises = frozenset(
        {"shape", "url", "guard", "deadline", "jq", "bounded", "fuzz", "identity", "payment"}
        | {"fence"}
        | {"jq_wait"}
    )

    def get(
        self, s: Sift, token: str | None, url: str, *, extra: dict[str, Any] | None = None, **_: Any
    ) -> Answer:
        flags = [f"--{k.replace('_', '-')}={v}" for k, v in (extra or {}).items()]
        return cli_answer(cli(s.url, token, "fetch", *flags, url))

    def malformed(self, s: Sift, token: str) -> Answer:
        return self.get(s, token, self.page, extra={"pages": "9-1"})

    def fuzz(self, s: Sift, token: str) -> Iterator[tuple[str, Answer]]:
        cases = [
            ["--pages", "x"],
            ["--grep", "("],
            ["--jq", ".["],
            ["--max-chars", "-5"],
            ["--question", ""],
            ["--raw", "--jq", "."],
        ]
        for extra in cases:
            yield " ".join(extra), cli_answer(cli(s.url, token, "fetch", *extra, self.page))
        for url in ("", "http://", "\u00e9", "-", "http://[", "http://127.0.0.2:99999/"):
            yield repr(url), cli_answer(cli(s.url, token, "fetch", "--", url))


class CliBatch(JobDoor):
    """`sift batch submit FILE`, `sift batch wait ID`, `sift batch get ID 0`."""

    name = "cli_batch"
    url_status = 422
    promises = frozenset(
        {"shape", "url", "guard", "deadline", "jq", "refuse_headers", "bounded", "fuzz"} | {"fence"}
    )

    def submit(
        self,
        s: Sift,
        token: str | None,
        url: str,
        *,
        timeout: float | None = None,
        headers: Any = None,
        extra: dict[str, Any] | None = None,
        **_: Any,
    ) -> str | Answer:
        target = V1Fetch().body(url, timeout, headers, extra or {})
        run = cli(s.url, token, "batch", "submit", "-", stdin=json.dumps({"targets": [target]}))
        if run.returncode != 0:
            return cli_answer(run)
        return run.stdout.strip()

    def finish(self, s: Sift, token: str | None, job_id: str) -> Answer:
        waited = cli(s.url, token, "batch", "wait", "--interval", "0.2", job_id)
        assert f"job {job_id}: " in waited.stdout, waited.stderr  # done, or failed: exit 1
        return cli_answer(cli(s.url, token, "batch", "get", job_id, "0"))

    def malformed(self, s: Sift, token: str) -> Answer:
        return cli_answer(cli(s.url, token, "batch", "submit", "-", stdin='{"targets": 5}'))

    def fuzz(self, s: Sift, token: str) -> Iterator[tuple[str, Answer]]:
        for stdin in (
            "",
            "{",
            "[]",
            "[5]",
            '{"targets": [{"url": 5}]}',
            "null",
            "\x00\n",
            '[{"url": "x", "mode": "fancy"}]',
        ):
            yield repr(stdin), cli_answer(cli(s.url, token, "batch", "submit", "-", stdin=stdin))
        for args in (
            ["status", "no-such-job"],
            ["get", "no-such-job", "0"],
            ["cancel", "-" * 16],
            ["status", "%2e%2e"],
        ):
            yield " ".join(args), cli_answer(cli(s.url, token, "batch", *args))


# -- many sources, one budget; a quote checked (issue 36) -------------------------------------

ERROR_KEYS = {"success", "error", "hint", "payment_required", "upstream_status"}


def read_source(state: dict[str, Any], content: str, raw: Any) -> Answer:
    """A read of one URL as a door's answer: the source's error in sift's shape (checked), or
    the read's text."""
    if state["status"] != "error":
        return Answer(True, 200, content=content, raw=raw)
    err = state["error"]
    assert set(err) <= ERROR_KEYS and err["success"] is False, err
    assert err.get("hint") in HINTS | {None} and state["code"] >= 400, state
    return Answer(False, state["code"], one_line(err["error"]), err.get("hint"), raw=err)


class V1Read(Door):
    """`POST /v1/read` of one URL: the read fails only on a bad request; a source that fails
    is that source's error in the answer (sift's shape, its status)."""

    name = "v1_read"
    promises = frozenset(
        {"shape", "url", "guard", "deadline", "privacy", "fuzz", "edge", "identity", "payment"}
        | {"read_bounds", "fence"}
    )
    FIELDS = ["urls", "question", "max_tokens", "pages", "headers", "render", "timeout", "max_age"]

    def get(
        self,
        s: Sift,
        token: str | None,
        url: str,
        *,
        timeout: float | None = None,
        headers: Any = None,
        extra: dict[str, Any] | None = None,
        **_: Any,
    ) -> Answer:
        return self.read_many(s, token, [url], timeout=timeout, headers=headers, **(extra or {}))

    def read_many(self, s: Sift, token: str | None, urls: list[str], **fields: Any) -> Answer:
        body = {"urls": urls, **{k: v for k, v in fields.items() if v is not None}}
        return self.read(call(s.url, "POST", "/v1/read", body, token=token))

    def read(self, r: Response) -> Answer:
        if r.status != 200:
            return json_error(r)
        env = r.json
        assert len(env["sources"]) == 1 or env["sources"][0]["status"] != "error", env
        return read_source(env["sources"][0], env["content"], env)

    def malformed(self, s: Sift, token: str) -> Answer:
        return self.read(call(s.url, "POST", "/v1/read", raw=b'{"urls": ', token=token))

    def with_headers(self, s: Sift, token: str, url: str, http: dict[str, str]) -> Answer:
        body = {"urls": [url]}
        return self.read(call(s.url, "POST", "/v1/read", body, token=token, headers=http))

    def oversized(self, s: Sift, token: str) -> Answer:
        body = {"urls": [self.page], "question": "x" * (65 * 1024)}
        return self.read(call(s.url, "POST", "/v1/read", body, token=token))

    def fuzz(self, s: Sift, token: str) -> Iterator[tuple[str, Answer]]:
        for raw in RAW_BODIES:
            yield repr(raw[:30]), self.read(call(s.url, "POST", "/v1/read", raw=raw, token=token))
        for what, body in field_bodies({"urls": [self.page]}, self.FIELDS):
            yield what, self.read(call(s.url, "POST", "/v1/read", body, token=token))
        for what, body in field_bodies({"urls": [{"url": self.page}]}, ["pages", "jq", "url"]):
            yield f"urls[0] {what}", self.read(call(s.url, "POST", "/v1/read", body, token=token))


class V1Verify(Door):
    """`POST /v1/verify` of a quote in a URL: the answer (found or not), or sift's error."""

    name = "v1_verify"
    promises = frozenset(
        {"shape", "url", "guard", "deadline", "fuzz", "edge", "identity", "payment"}
        | {"verify_privacy"}
    )
    FIELDS = ["url", "quote", "content_hash", "refetch", "pages", "headers", "timeout"]
    QUOTE = "A small page for the seam suite."

    def get(
        self,
        s: Sift,
        token: str | None,
        url: str,
        *,
        timeout: float | None = None,
        headers: Any = None,
        extra: dict[str, Any] | None = None,
        **_: Any,
    ) -> Answer:
        body: dict[str, Any] = {"url": url, "quote": self.QUOTE, **(extra or {})}
        if timeout is not None:
            body["timeout"] = timeout
        if headers is not None:
            body["headers"] = headers
        return self.read(call(s.url, "POST", "/v1/verify", body, token=token))

    def read(self, r: Response) -> Answer:
        if r.status != 200:
            return json_error(r)
        assert isinstance(r.json["found"], bool), r.json
        return Answer(True, 200, content=json.dumps(r.json), raw=r.json)

    def malformed(self, s: Sift, token: str) -> Answer:
        return self.read(call(s.url, "POST", "/v1/verify", raw=b'{"url": ', token=token))

    def with_headers(self, s: Sift, token: str, url: str, http: dict[str, str]) -> Answer:
        body = {"url": url, "quote": self.QUOTE}
        return self.read(call(s.url, "POST", "/v1/verify", body, token=token, headers=http))

    def fuzz(self, s: Sift, token: str) -> Iterator[tuple[str, Answer]]:
        for raw in RAW_BODIES:
            yield repr(raw[:30]), self.read(call(s.url, "POST", "/v1/verify", raw=raw, token=token))
        for what, body in field_bodies({"url": self.page, "quote": self.QUOTE}, self.FIELDS):
            yield what, self.read(call(s.url, "POST", "/v1/verify", body, token=token))


class CliRead(Door):
    """`sift read URL` against the server: the text, a failed source as `sift: <error>`."""

    name = "cli_read"
    promises = frozenset(
        {"shape", "url", "guard", "deadline", "fuzz", "identity", "payment", "read_bounds"}
        | {"fence"}
    )

    def get(
        self, s: Sift, token: str | None, url: str, *, extra: dict[str, Any] | None = None, **_: Any
    ) -> Answer:
        return self.read_many(s, token, [url], **(extra or {}))

    def read_many(self, s: Sift, token: str | None, urls: list[str], **fields: Any) -> Answer:
        flags = [f"--{k.replace('_', '-')}={v}" for k, v in fields.items()]
        return cli_answer(cli(s.url, token, "read", *flags, "--", *urls))

    def malformed(self, s: Sift, token: str) -> Answer:
        return self.get(s, token, self.page, extra={"max_tokens": "5"})

    def fuzz(self, s: Sift, token: str) -> Iterator[tuple[str, Answer]]:
        for extra in (["--max-tokens", "-5"], ["--pages", "x"], ["--question", "x" * 3000]):
            yield " ".join(extra), cli_answer(cli(s.url, token, "read", *extra, self.page))
        for url in ("", "http://", "\u00e9", "-", "http://[", "http://127.0.0.2:99999/"):
            yield repr(url), cli_answer(cli(s.url, token, "read", "--", url))


class CliVerify(Door):
    """`sift verify URL QUOTE`: found (exit 0) or not found (`sift: not found in …`, exit 1)
    are both answers; an error is `sift: <error>`."""

    name = "cli_verify"
    promises = frozenset({"shape", "url", "guard", "deadline", "fuzz", "identity", "payment"})

    def get(
        self, s: Sift, token: str | None, url: str, *, extra: dict[str, Any] | None = None, **_: Any
    ) -> Answer:
        flags = [f"--{k.replace('_', '-')}={v}" for k, v in (extra or {}).items()]
        run = cli(s.url, token, "verify", *flags, "--", url, V1Verify.QUOTE)
        if run.returncode == 1 and run.stderr.startswith("sift: not found in "):
            return Answer(True, 200, content=run.stderr, raw=run)
        return cli_answer(run)

    def malformed(self, s: Sift, token: str) -> Answer:
        return cli_answer(cli(s.url, token, "verify", "--", self.page, " "))

    def fuzz(self, s: Sift, token: str) -> Iterator[tuple[str, Answer]]:
        for args in (
            ["--hash", "zz", "--", self.page, "x"],
            ["--", self.page, "x" * 30_000],
            ["--", "", "x"],
            ["--", "http://", "x"],
            ["--", "http://[", "x"],
            ["--", "\u00e9", "\x01"],
            ["--refetch", "--", "http://127.0.0.2:99999/", "x"],
        ):
            yield " ".join(args)[:40], cli_answer(cli(s.url, token, "verify", *args))


class McpRead(Mcp):
    """The `read` tool of `sift mcp`: the read's text, or (every source failed) the first
    source's error as a tool error."""

    def __init__(self, transport: str) -> None:
        super().__init__(transport)
        self.name = f"mcp_read_{transport}"
        self.promises = frozenset(
            {"shape", "url", "guard", "deadline", "fuzz", "identity", "payment", "read_bounds"}
            | {"fence"}
            | ({"edge"} if transport == "http" else set())
        )

    def get(
        self, s: Sift, token: str | None, url: str, *, extra: dict[str, Any] | None = None, **_: Any
    ) -> Answer:
        return self.read_many(s, token, [url], **(extra or {}))

    def read_many(self, s: Sift, token: str | None, urls: list[str], **fields: Any) -> Answer:
        return self.tool(token, {"urls": urls, **fields}, "read")

    def malformed(self, s: Sift, token: str) -> Answer:
        return self.tool(token, {"urls": "many"}, "read")

    def fuzz(self, s: Sift, token: str) -> Iterator[tuple[str, Answer]]:
        values: list[Any] = [None, 5, -1, 1e308, "", "\x00", [], {}, "a" * 9000, [None]]
        for name in ("urls", "question", "max_tokens", "pages"):
            for value in values:
                args = {"urls": [self.page], name: value}
                yield f"{name}={str(value)[:20]!r}", self.tool(token, args, "read", lines=False)


class McpVerify(Mcp):
    """The `verify` tool of `sift mcp`: where the quote is (or that it is not), or the error."""

    def __init__(self, transport: str) -> None:
        super().__init__(transport)
        self.name = f"mcp_verify_{transport}"
        self.promises = frozenset(
            {"shape", "url", "guard", "deadline", "fuzz", "identity", "payment"}
            | ({"edge"} if transport == "http" else set())
        )

    def get(
        self, s: Sift, token: str | None, url: str, *, extra: dict[str, Any] | None = None, **_: Any
    ) -> Answer:
        return self.tool(token, {"url": url, "quote": V1Verify.QUOTE, **(extra or {})}, "verify")

    def malformed(self, s: Sift, token: str) -> Answer:
        return self.tool(token, {"url": self.page, "quote": 5}, "verify")

    def fuzz(self, s: Sift, token: str) -> Iterator[tuple[str, Answer]]:
        values: list[Any] = [None, 5, -1, 1e308, "", "\x00", [], {}, "a" * 30_000]
        for name in ("url", "quote", "content_hash", "refetch"):
            for value in values:
                args = {"url": self.page, "quote": V1Verify.QUOTE, name: value}
                yield f"{name}={str(value)[:20]!r}", self.tool(token, args, "verify", lines=False)


class McpTask(Mcp):
    """`batch_fetch` of `sift mcp` run as an MCP task (2026-07-28's tasks extension, declared
    by the session's client): the task followed with `tasks/get` to its end, then the target's
    text through `batch_result`; a refusal before the job is the tool's error, a target that
    failed its error in the task's result."""

    def __init__(self, transport: str) -> None:
        super().__init__(transport)
        self.name = f"mcp_task_{transport}"
        self.promises = frozenset(
            {"shape", "url", "guard", "fuzz", "fence"}
            | ({"edge"} if transport == "http" else set())
        )

    def options(self) -> dict[str, Any]:
        from tests.support.mcp_tasks import TasksClient

        return {"extensions": [TasksClient()]}

    def get(
        self, s: Sift, token: str | None, url: str, *, extra: dict[str, Any] | None = None, **_: Any
    ) -> Answer:
        started = self.tool(token, {"urls": [url], **(extra or {})}, "batch_fetch")
        if not started.ok:
            return started
        ended = started.raw.structured_content  # the task's result, once the job ended
        target = ended["outcomes"][0]
        if target["status"] != "done":
            error, hint = split_hint(one_line(target["error"]))
            return Answer(False, None, error, target.get("hint") or hint, raw=ended)
        return self.tool(token, {"job_id": ended["job_id"], "idx": 0}, "batch_result")

    def malformed(self, s: Sift, token: str) -> Answer:
        return self.tool(token, {"urls": "many"}, "batch_fetch")

    def fuzz(self, s: Sift, token: str) -> Iterator[tuple[str, Answer]]:
        values: list[Any] = [None, 5, -1, 1e308, "", "\x00", [], {}, "a" * 9000, [None]]
        for name in ("urls", "pages", "grep", "question"):
            for value in values:
                args = {"urls": [self.page], name: value}
                a = self.tool(token, args, "batch_fetch", lines=False)
                yield f"{name}={str(value)[:20]!r}", a


class McpReadTask(McpRead):
    """`read` of `sift mcp` run as an MCP task (2026-07-28's tasks extension, declared by the
    session's client): every read of three sources or more (the URL given thrice), the task
    followed with `tasks/get` to its end; a read sift will not hold as a job (a URL its guard
    refuses at once, a question too long for the task's id) answers inline."""

    def __init__(self, transport: str) -> None:
        super().__init__(transport)
        self.name = f"mcp_read_task_{transport}"
        self.promises = frozenset(
            {"shape", "url", "guard", "fuzz", "fence", "identity"}
            | ({"edge"} if transport == "http" else set())
        )  # no "payment": a refused source is asked by the job, then again by the read

    def options(self) -> dict[str, Any]:
        from tests.support.mcp_tasks import TasksClient

        return {"extensions": [TasksClient()]}

    def read_many(self, s: Sift, token: str | None, urls: list[str], **fields: Any) -> Answer:
        return self.tool(token, {"urls": (urls * 3)[: max(3, len(urls))], **fields}, "read")

    def fuzz(self, s: Sift, token: str) -> Iterator[tuple[str, Answer]]:
        values: list[Any] = [None, 5, -1, 1e308, "", "\x00", [], {}, "a" * 9000, [None]]
        for name in ("question", "max_tokens", "pages"):
            for value in values:
                args = {"urls": [self.page] * 3, name: value}
                yield f"{name}={str(value)[:20]!r}", self.tool(token, args, "read", lines=False)


@dataclass
class Doors:
    """Every door, by name."""

    all: list[Door] = field(default_factory=list)

    def with_promise(self, promise: str) -> list[Door]:
        return [d for d in self.all if promise in d.promises]


DOORS = Doors(
    [
        V1Fetch(),
        Scrape("v2"),
        Scrape("v1"),
        Reader(),
        Mcp("stdio"),
        Mcp("http"),
        CliFetch(),
        Batch(),
        CliBatch(),
        FirecrawlJob("scrape"),
        FirecrawlJob("crawl"),
        Extract(),
        FirecrawlWebhook(),
        Map(),
        ParamsPreview(),
        Parse(),
        Search(),
        V1Read(),
        V1Verify(),
        CliRead(),
        CliVerify(),
        McpRead("stdio"),
        McpRead("http"),
        McpVerify("stdio"),
        McpVerify("http"),
        McpTask("stdio"),
        McpTask("http"),
        McpReadTask("stdio"),
        McpReadTask("http"),
    ]
)
