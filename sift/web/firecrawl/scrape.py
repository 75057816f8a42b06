"""POST /v2/scrape and /v1/scrape: the Firecrawl scrape API, as the firecrawl-py SDK uses it.

Fields sift has no use for are accepted and ignored (an SDK ahead of sift must still work);
the known ones it cannot honour as asked are named in `data.warning` (`unhonoured`); formats
sift cannot produce are a 400 that says so. `maxAge`, `storeInCache`, `onlyMainContent`,
`includeTags`, `excludeTags` and `timeout` become the request's FetchParams (the pipeline
honours them); `html` is the cleaned HTML, `summary` the digest, `images` the page's images.
`waitFor` renders an HTML page where a browser is installed (every Firecrawl scrape is a
browser page); a busy browser leaves the page as fetched, with a warning, never a 429.
The target's own HTTP errors are `success: true` with `metadata.statusCode` and a notice
atop the markdown, as Firecrawl does (the notice: agents read the error page otherwise as
the article).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import msgspec
import tornado.web

from sift.core.envelope import Injection
from sift.core.errors import BadRequest, NoBrowser, OutOfTime
from sift.core.request import Action, FetchParams
from sift.digest import structured
from sift.service.document import Result
from sift.service.firecrawl import device, pdf_pages, scrape
from sift.service.params import check
from sift.service.steps import pipeline
from sift.web import ready
from sift.web.firecrawl.base import FirecrawlHandler, pending, with_scheme
from sift.web.firecrawl.extract import json_spec

# What a Firecrawl job (batch scrape, crawl) may ask; a scrape may also ask a screenshot.
JOB_FORMATS = frozenset(scrape.FORMATS)
# A scrape may also ask a screenshot, and `json` / `extract` (the model, with a schema).
FORMATS = JOB_FORMATS | {"screenshot", "json", "extract"}
ACTIONS = ("wait", "click", "scroll", "write", "press", "screenshot")
SHOTS = 5  # `screenshot` actions in one scrape: each a viewport's PNG in the answer
FULL_PAGE = "screenshot@fullPage"


def parse_formats(raw: Any, allowed: frozenset[str] = FORMATS, where: str = "a job") -> set[str]:
    if raw is None:
        return {"markdown"}
    if not isinstance(raw, list):
        raise BadRequest("invalid request: `formats` must be a list")
    names = set()
    for item in raw:
        name = item.get("type") if isinstance(item, dict) else item
        if not isinstance(name, str):
            raise BadRequest('invalid request: each of `formats` is a name or {"type": name}')
        if name == FULL_PAGE:  # v1's spelling of a full-page screenshot
            name = "screenshot"
        if name not in allowed:
            left_out = sorted(FORMATS - allowed)
            why = f" (not in {where}: {', '.join(left_out)})" if left_out else ""
            raise BadRequest(
                f"format {name!r} is not supported by sift{why}; "
                f"use {', '.join(sorted(allowed, key=str.lower))}"
            )
        names.add(name)
    return names or {"markdown"}


def format_notes(raw: Any) -> list[str]:
    """Notes for what the formats asked that sift does not do: a full-page screenshot."""
    for item in raw if isinstance(raw, list) else ():
        full = item == FULL_PAGE or (
            isinstance(item, dict) and item.get("type") == "screenshot" and item.get("fullPage")
        )
        if full:
            return ["screenshot `fullPage`: sift takes one viewport"]
    return []


def wait_notes(svc: Any, params: FetchParams, doc: Any) -> list[str]:
    """Why `waitFor` did not render an HTML page (a failed render says so itself)."""
    if not params.wait_for or doc.rendered or doc.content.kind != "html" or doc.status >= 400:
        return []
    if not svc.browser.available:
        return ["`waitFor`: no browser on this server; this is the page as fetched"]
    return []


def _ms(body: dict[str, Any], name: str, *, zero: bool = False) -> float | None:
    """A field in milliseconds as seconds; a 400 naming it when it is not a number."""
    value = body.get(name)
    if value is None:
        return None
    if isinstance(value, bool) or not isinstance(value, int | float) or value < 0:
        raise BadRequest(f"invalid request: `{name}` must be a number of milliseconds")
    if value == 0 and not zero:
        raise BadRequest(f"invalid request: `{name}` must be a positive number of milliseconds")
    return value / 1000


def _selectors(body: dict[str, Any], name: str) -> tuple[str, ...]:
    value = body.get(name)
    if value is None:
        return ()
    if not isinstance(value, list) or not all(isinstance(v, str) for v in value):
        raise BadRequest(f"invalid request: `{name}` must be a list of CSS selectors")
    return tuple(v for v in value if v.strip())


def _flag(body: dict[str, Any], name: str, default: bool) -> bool:
    value = body.get(name, default)
    if value is None:
        return default
    if not isinstance(value, bool):
        raise BadRequest(f"invalid request: `{name}` must be true or false")
    return value


def _actions(raw: Any) -> list[Action] | None:
    """Firecrawl `actions` of the kinds sift's browser runs; any other kind is a 400."""
    if raw is None or raw == []:
        return None
    if not isinstance(raw, list) or not all(isinstance(a, dict) for a in raw):
        raise BadRequest("invalid request: `actions` must be a list of objects")
    for a in raw:
        if a.get("type") not in ACTIONS:
            raise BadRequest(
                f"action {a.get('type')!r} is not supported by sift; use {', '.join(ACTIONS)}"
            )
    if sum(a.get("type") == "screenshot" for a in raw) > SHOTS:
        raise BadRequest(f"invalid request: at most {SHOTS} `screenshot` actions in one scrape")
    try:
        return msgspec.convert(raw, list[Action])
    except msgspec.ValidationError as exc:
        raise BadRequest(f"invalid request: `actions`: {exc}") from None


def params_from(body: dict[str, Any], formats: set[str] | None = None) -> FetchParams:
    url = body.get("url")
    if not isinstance(url, str):
        raise BadRequest("invalid request: `url` is required and must be a string")
    wait_for = body.get("waitFor")
    if wait_for is not None and (isinstance(wait_for, bool) or not isinstance(wait_for, int)):
        raise BadRequest("invalid request: `waitFor` must be a number of milliseconds")
    return check(
        FetchParams(
            url=url,
            context=False,
            timeout=_ms(body, "timeout"),
            wait_for=wait_for or None,
            actions=_actions(body.get("actions")),
            screenshot="screenshot" in (formats or ()),
            max_age=_ms(body, "maxAge", zero=True),
            store=_flag(body, "storeInCache", True),
            whole_page=not _flag(body, "onlyMainContent", True),
            include_tags=_selectors(body, "includeTags"),
            exclude_tags=_selectors(body, "excludeTags"),
            headers=_headers(body),
            mobile=_flag(body, "mobile", False),
            languages=_languages(body),
        )
    )


def _languages(body: dict[str, Any]) -> tuple[str, ...]:
    """`location.languages` (BCP 47 tags such as "de-DE", checked with the other options)."""
    location = body.get("location")
    if location is None:
        return ()
    if not isinstance(location, dict):
        raise BadRequest("invalid request: `location` must be an object")
    raw = location.get("languages") or []
    if not isinstance(raw, list) or not all(isinstance(tag, str) for tag in raw):
        raise BadRequest("invalid request: `location.languages` must be a list of language tags")
    return tuple(raw)


def device_notes(body: dict[str, Any], params: FetchParams, doc: Any) -> list[str]:
    """What `mobile` and `location` asked that this answer does not honour: only a render
    can (a phone's view, the browser's languages); a country never."""
    return device.notes(params, doc) + country_note(body)


def country_note(body: dict[str, Any]) -> list[str]:
    """`location.country`, never honoured: sift fetches from where it runs."""
    country = (body.get("location") or {}).get("country")
    if country:
        return [f"`location.country` {str(country)[:8]!r}: sift fetches from where it runs"]
    return []


def option_notes(body: dict[str, Any], parser: pdf_pages.PdfParser) -> list[str]:
    """What a scrape's options ask that sift cannot honour as asked, known before any fetch
    (`data.warning`; a job's documents carry them too)."""
    notes = ["parsers pdf mode `ocr`: sift OCRs only the pages without a text layer"] * parser.ocr
    notes += format_notes(body.get("formats")) + unhonoured(body)
    return notes + scrape.tracking_options(body.get("formats"))[1]


def unhonoured(body: dict[str, Any]) -> list[str]:
    """Notes for the known Firecrawl fields that sift cannot honour as asked (`data.warning`).

    Not listed: what sift does anyway (`removeBase64Images`, `blockAds`: the markdown holds
    neither), what the browser path honours (`waitFor` in a render, `actions`), and
    `skipTlsVerification`, which the SDK sends by default: sift always verifies TLS."""
    notes = []
    if body.get("proxy") in ("stealth", "enhanced"):
        notes.append(f"`proxy: {body['proxy']}`: sift fetches directly")
    if body.get("minAge"):
        notes.append("`minAge`: sift answers a fresh copy when it has no cached one")
    if body.get("checkPromptInjection"):  # Firecrawl fails the scrape on a finding
        notes.append(
            "`checkPromptInjection`: sift fails no scrape on it; what addresses an AI reader "
            "is reported in `metadata.injection`"
        )
    return notes


def _headers(body: dict[str, Any]) -> dict[str, str] | None:
    """Firecrawl's `headers`: the caller's own, sent upstream (`sift.fetch.headers`)."""
    headers = body.get("headers")
    if headers is not None and (
        not isinstance(headers, dict) or not all(isinstance(v, str) for v in headers.values())
    ):
        raise BadRequest("invalid request: `headers` must be an object of strings")
    return headers or None


@tornado.web.stream_request_body
class ScrapeHandler(FirecrawlHandler):
    route = "/v2/scrape"

    def initialize(self, svc: Any, callers: Any, route: str = "/v2/scrape") -> None:
        super().initialize(svc, callers)
        self.route = route

    async def post(self) -> None:
        assert self.caller is not None
        asked = self._asked(self.json_body())
        try:
            result = await pipeline.within(
                self.svc,
                self.caller,
                asked.params,
                self.trace,
                self.svc.cfg.request_deadline,
                strict=False,
                gone=self.gone,
                wait_renders=True,
            )
        except OutOfTime as late:
            self.send_json({"success": True, "data": pending(asked.source, late)})
            return
        data = await self._data(asked, result)
        answer = msgspec.json.encode({"success": True, "data": data})
        if asked.spec is None and "summary" not in asked.formats:  # no model's answer is kept
            ready.keep(self, asked.params, result.doc, self.body, answer)
        self.send_encoded(answer)

    def _asked(self, body: dict[str, Any]) -> _Asked:
        """The scrape asked in `body`, checked before any fetch (a 400; a render without a
        browser: 501), with the notes on what sift cannot honour as asked."""
        asked = body.get("url")
        if isinstance(asked, str):
            body["url"] = with_scheme(asked)  # `sourceURL` stays as asked
        formats = parse_formats(body.get("formats"))
        params = params_from(body, formats)
        source = asked if isinstance(asked, str) and body["url"] != asked else params.url
        git_diff = scrape.tracking_options(body.get("formats"))[0]
        if "changeTracking" in formats:  # compared with what the site serves now
            params = msgspec.structs.replace(params, max_age=0)
        if params.must_render and not self.svc.browser.available:
            what = "format 'screenshot'" if params.screenshot else "`actions`"
            try:
                self.svc.browser.check()
            except NoBrowser as exc:
                raise NoBrowser(f"{what} needs a browser: {exc.message}") from None
        parser = pdf_pages.parse(body)
        notes = option_notes(body, parser)
        spec = json_spec(body)
        if spec is not None:
            structured.check_request(self.svc.cfg.digest, *spec)  # no model: 400 before the fetch
        return _Asked(body, formats, params, source, git_diff, parser, notes, spec)

    async def _data(self, asked: _Asked, result: Result) -> dict[str, Any]:
        """The Firecrawl `data` of the scrape's document, every format asked."""
        params, doc = asked.params, result.doc
        notes = asked.notes + wait_notes(self.svc, params, doc)
        notes += device_notes(asked.body, params, doc)
        options = scrape.Options(
            notes=tuple(notes),
            max_pages=asked.parser.max_pages,
            asked=asked.source,
            git_diff=asked.git_diff,
        )
        data, _ = await scrape.document(self.svc, params, result, asked.formats, options)
        if (shots := device.actions(doc)) is not None:
            data["actions"] = shots
        pdf_pages.apply(data, doc, asked.parser, self.svc.cfg.out_cap)
        if asked.spec is not None:
            content = result.envelope.content
            data["json"] = await structured.extract(self.svc.cfg.digest, content, *asked.spec)
            found = data["metadata"].get("injection", [])
            scrape.report_injection(data, [Injection(**f) for f in found], data["json"])
        return data


@dataclass(frozen=True)
class _Asked:
    """A scrape request as checked: its body, formats and FetchParams, the URL as asked
    (`sourceURL`), changeTracking's `git-diff`, the PDF parser's options, the notes on what
    sift does not honour, and the `json` format's (prompt, schema)."""

    body: dict[str, Any]
    formats: set[str]
    params: FetchParams
    source: str
    git_diff: bool
    parser: pdf_pages.PdfParser
    notes: list[str]
    spec: tuple[str | None, dict[str, Any] | None] | None
