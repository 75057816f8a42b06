"""GET /r/<url>: the reader URL — the clean markdown of a page, for shells and people.

The answer is `text/markdown; charset=utf-8` with /v1/fetch's context header; an error is one
line of text (`403 blocked: …`) with its status. The token goes in `Authorization: Bearer`
only: a URL ends up in shell histories, proxies and logs, so a `token` or `key` parameter is
never read as one, and is refused (401 without a header, else 400: it would reach the target).

How the request target splits into the target URL and sift's options (`pages`/`page`, `grep`,
`q`, `max_chars`, `max_tokens`, `offset`):

- Typed as is — `/r/https://example.com/a.pdf?pages=3-4`: everything after `/r/` is the target,
  except the query parameters named like sift's options, which are sift's. A target whose own
  query uses one of those names is sent in the encoded form.
- Encoded — `/r/https%3A%2F%2Fexample.com%2Fsearch%3Fq%3Dx?pages=3`: the segment after `/r/`
  is the percent-encoded target (it starts `http%3A` or `https%3A`) and the whole query is
  sift's; anything else there is a 400.

A fragment in the target (`#pages=41-60`, `#grep=…`, `#q=…`; curl does not send one, but
other clients and the encoded form do) navigates as in /v1/fetch; the query wins.
"""

from __future__ import annotations

import re
from typing import Any
from urllib.parse import parse_qsl, quote, unquote, unquote_plus, urlencode

from sift.core.errors import BadRequest, SiftError, Unauthorized
from sift.core.request import FetchParams, next_fields
from sift.service.params import check
from sift.service.steps import pipeline
from sift.web.base import BaseHandler
from sift.web.hosts import link_base

PREFIX = "/r/"
OPTIONS = {"pages": "pages", "page": "pages", "grep": "grep", "q": "question"}
NUMBERS = ("max_chars", "max_tokens", "offset")
NAMES = {*OPTIONS, *NUMBERS}
SECRETS = {"token", "key", "api_key", "apikey", "access_token"}
NOT_IN_URL = "sift reads the token only from the Authorization: Bearer header, never the URL"
_ENCODED = re.compile(r"^https?%3a", re.I)
_ONE_SLASH = re.compile(r"^(https?):/(?!/)", re.I)  # a proxy folded `//` into `/`


def split_target(uri: str) -> tuple[str, dict[str, str]]:
    """(target URL, sift's options) of a `/r/…` request target, by the rule above."""
    rest = uri[len(PREFIX) :]
    if _ENCODED.match(rest):
        segment, _, query = rest.partition("?")
        options = _options(query.split("&") if query else [])
        unknown = sorted(set(options) - NAMES)
        if unknown:
            raise BadRequest(
                f"unknown option {unknown[0]!r}; sift's are pages, grep, q, {', '.join(NUMBERS)}"
            )
        return unquote(segment), options
    rest, hashmark, frag = rest.partition("#")
    path, _, query = rest.partition("?")
    parts = query.split("&") if query else []
    ours = [p for p in parts if unquote(p.partition("=")[0]) in NAMES]
    theirs = [p for p in parts if p not in ours]  # the target's own, byte for byte
    target = _ONE_SLASH.sub(r"\1://", path) + ("?" + "&".join(theirs) if theirs else "")
    return target + hashmark + frag, _options(ours)


def _options(parts: list[str]) -> dict[str, str]:
    """Decoded `name=value` pairs; as in fragments, `+` is a space in `q` only (in `grep` it
    is a regex operator)."""
    found = {}
    for part in parts:
        name, _, value = part.partition("=")
        name = unquote(name)
        found[name] = unquote_plus(value) if name == "q" else unquote(value)
    return found


class ReaderHandler(BaseHandler):
    route = "/r/{url}"

    def set_default_headers(self) -> None:
        self.set_header("Content-Type", "text/plain; charset=utf-8")
        self.set_header("Cache-Control", "no-store")

    def prepare(self) -> None:
        query = (self.request.uri or "").partition("?")[2]  # `?token` bare or empty too
        names = (name.lower() for name, _ in parse_qsl(query, keep_blank_values=True))
        secret = any(name in SECRETS for name in names)
        try:
            super().prepare()
        except Unauthorized:
            if secret:
                raise Unauthorized(f"unauthorized: {NOT_IN_URL}") from None
            raise
        if secret:  # it would reach the target: refused, whoever's key it is
            raise BadRequest(
                f"a `token` or `key` parameter is refused: {NOT_IN_URL} (a target that needs "
                "its own key goes in the encoded form, /r/https%3A%2F%2F…)"
            )

    async def get(self, _path: str) -> None:
        assert self.caller is not None
        target, options = split_target(self.request.uri or PREFIX)
        if not target:
            raise BadRequest("no URL after /r/; e.g. /r/https://example.com/")
        fields: dict[str, Any] = {OPTIONS[k]: v for k, v in options.items() if k in OPTIONS}
        if "page" in options and "pages" in options:
            fields["pages"] = options["pages"]
        for name in NUMBERS:
            if name in options:
                if not options[name].isdigit() or len(options[name]) > 15:
                    raise BadRequest(f"invalid request: `{name}` must be a whole number")
                fields[name] = int(options[name])
        params = check(FetchParams(url=target, **fields))
        result = await pipeline.within(
            self.svc,
            self.caller,
            params,
            self.trace,
            self.svc.cfg.request_deadline,
            gone=self.gone,
        )
        answer = result.envelope
        text = answer.content
        warning = _unsaid(answer.warning or "", text)
        if warning:
            text += f"\n\n[warning: {warning}]"
        if answer.next:
            text += f"\n\n[continue: {self._next_url(target, options, answer.next)}]"
        self.set_header("Content-Type", "text/markdown; charset=utf-8")
        data = (text if text.endswith("\n") else text + "\n").encode()
        self.bytes_out = len(data)
        self.finish(data)

    def _next_url(self, target: str, options: dict[str, str], nxt: int | str) -> str:
        """The reader URL of the rest: this one with `next`'s fields, in the encoded form
        when the target has a query or fragment of its own."""
        fields = next_fields(nxt)
        dropped = ("offset", "page", "pages") if "pages" in fields else ("offset",)
        query = {k: v for k, v in options.items() if k not in dropped}
        query.update({k: str(v) for k, v in fields.items()})
        plain = "?" not in target and "#" not in target
        where = target if plain else quote(target, safe="")
        return f"{link_base(self)}{PREFIX}{where}?{urlencode(query)}"

    def write_error(self, status_code: int, **kwargs: Any) -> None:
        """One line of text: the status, the error, and the hint when there is one."""
        exc = kwargs.get("exc_info", (None, None, None))[1]
        if isinstance(exc, SiftError):
            err = exc
        elif status_code == 405:
            err = BadRequest(f"method {self.request.method} not allowed here; use {self.allow()}")
        else:
            err = SiftError() if status_code >= 500 else BadRequest(self._reason or "bad request")
        self.error = self.error or err
        if err.retry_after is not None:
            self.set_header("Retry-After", str(err.retry_after))
        if status_code == 405:
            self.set_header("Allow", self.allow())
        hint = f" (hint: {err.hint})" if err.hint else ""
        line = " ".join(f"{self.get_status()} {err.message}{hint}".split())
        self.set_header("Content-Type", "text/plain; charset=utf-8")
        data = (line + "\n").encode()
        self.bytes_out = len(data)
        self.finish(data)


def _unsaid(warning: str, text: str) -> str:
    """The warning less the note the text ends with (a cut range says how to get the rest in
    both): said once. Only the last line, which sift wrote, is read."""
    last = text.rstrip().rpartition("\n")[2]
    if last.startswith("[") and last.endswith("]") and len(last) > 2:
        warning = warning.replace(last[1:-1], "")
    return "; ".join(part.strip() for part in warning.split("; ") if part.strip())
