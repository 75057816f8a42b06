"""Every route in sift's route table refuses a bad request in the one error shape.

`{"success": false, "error": "<one line>", "hint": …}` with `hint` optional and one of
browser|ocr|pages|retry, and `Cache-Control: no-store`: no token is a 401 (but on the public
/healthz and /metrics), and each route's own bad request (a bad body, an unknown id, a method
it does not have) is its 4xx. The reader URL is the one route whose errors are a line of text.
The cases are checked against the running app's table, so a new route needs its case here.
"""

from __future__ import annotations

from typing import Any

import pytest

from tests.support.sift_server import Response

HINTS = {"browser", "ocr", "pages", "retry"}
PUBLIC = {"healthz", "metrics", "signatures-directory", "page", "page-asset"}
TEXT = {"reader"}  # errors as one line of text, for shells
ID = "no-such-job"

# route name: (method, path, JSON body, the status that route answers it)
BAD: dict[str, tuple[str, str, object, int]] = {
    "page": ("POST", "/", {}, 405),
    "page-asset": ("DELETE", "/static/page.css", None, 405),
    "fetch": ("POST", "/v1/fetch", [], 400),
    "read": ("POST", "/v1/read", {"urls": []}, 400),
    "verify": ("POST", "/v1/verify", {"url": "http://127.0.0.1/"}, 400),
    "reader": ("GET", "/r/?max_chars=x", None, 400),
    "progress": ("GET", "/v1/progress", None, 400),
    "healthz": ("POST", "/healthz", {}, 405),
    "metrics": ("POST", "/metrics", {}, 405),
    "signatures-directory": ("POST", "/.well-known/http-message-signatures-directory", {}, 405),
    "v2-parse": ("POST", "/v2/parse", {"file": "nope"}, 400),
    "v2-parse-formats": ("POST", "/v2/parse/formats", {}, 405),
    "batch": ("POST", "/v1/batch", {"targets": "x"}, 400),
    "batch-job": ("GET", f"/v1/batch/{ID}", None, 404),
    "batch-target": ("GET", f"/v1/batch/{ID}/0", None, 404),
    "v2-concurrency-check": ("POST", "/v2/concurrency-check", {}, 405),
    "v2-queue-status": ("POST", "/v2/team/queue-status", {}, 405),
    "v2-crawl-params-preview": ("POST", "/v2/crawl/params-preview", {"url": "x"}, 400),
}
for v in ("v2", "v1"):
    BAD |= {
        f"{v}-scrape": ("POST", f"/{v}/scrape", {"url": 5}, 400),
        f"{v}-search": ("POST", f"/{v}/search", {"query": ""}, 400),
        f"{v}-batch-scrape": ("POST", f"/{v}/batch/scrape", {"urls": []}, 400),
        f"{v}-batch-scrape-status": ("GET", f"/{v}/batch/scrape/{ID}", None, 404),
        f"{v}-batch-scrape-errors": ("GET", f"/{v}/batch/scrape/{ID}/errors", None, 404),
        f"{v}-crawl": ("POST", f"/{v}/crawl", {"url": 5}, 400),
        f"{v}-crawl-status": ("DELETE", f"/{v}/crawl/{ID}", None, 404),
        f"{v}-crawl-active": ("POST", f"/{v}/crawl/active", {}, 405),
        f"{v}-crawl-errors": ("GET", f"/{v}/crawl/{ID}/errors", None, 404),
        f"{v}-map": ("POST", f"/{v}/map", {"url": ""}, 400),
        f"{v}-extract": ("POST", f"/{v}/extract", {"urls": []}, 400),
        f"{v}-extract-status": ("GET", f"/{v}/extract/{ID}", None, 404),
    }
    for what in ("credit", "token"):
        for tail in ("", "/historical"):
            path = f"/{v}/team/{what}-usage{tail}"
            BAD[path.removeprefix("/").replace("/team/", "-").replace("/", "-")] = (
                "POST",
                path,
                {},
                405,
            )


def assert_error(r: Response, status: int) -> None:
    assert r.status == status, r.body
    assert r.headers["Cache-Control"] == "no-store"
    body = r.json
    assert body["success"] is False
    assert isinstance(body["error"], str) and body["error"].strip()
    assert "\n" not in body["error"]
    assert set(body) <= {"success", "error", "hint"}, body
    assert body.get("hint", "browser") in HINTS


def assert_text_error(r: Response, status: int) -> None:
    assert r.status == status, r.body
    assert r.headers["Cache-Control"] == "no-store"
    assert r.headers["Content-Type"].startswith("text/plain")
    line = r.body.decode()
    assert line.startswith(f"{status} ") and line.endswith("\n") and line.count("\n") == 1


def first_match(rules: list[Any], path: str) -> str | None:
    """The name of the route that answers `path`: the first in the table that matches."""
    for rule in rules:
        if rule.matcher.regex.match(path.partition("?")[0]):
            return rule.name
    return None


def test_every_route_has_a_bad_request_case(sift):
    router = sift.app.wildcard_router
    names = [rule.name for rule in router.rules]
    assert None not in names, "every route is named"
    assert len(set(names)) == len(names)
    assert set(names) == set(BAD)
    for name, (_, path, _, _) in BAD.items():
        assert first_match(router.rules, path) == name, path


@pytest.mark.parametrize("name", sorted(BAD))
def test_a_bad_request_answers_the_one_error_shape(sift, name):
    method, path, body, status = BAD[name]
    check = assert_text_error if name in TEXT else assert_error
    if name not in PUBLIC:
        check(sift.request(method, path, body, token=None), 401)
    check(sift.request(method, path, body), status)


def test_firecrawl_errors_carry_the_hint(sift, origin):
    """Firecrawl's routes answer sift's own shape: the hint too (a video is for a browser)."""
    origin.set("/clip.mp4", b"\x00\x00\x00\x18ftypmp42", "video/mp4")
    r = sift.post("/v2/scrape", {"url": origin.url("/clip.mp4")})
    assert_error(r, 415)
    assert r.json["hint"] == "browser"


def test_firecrawl_upstream_failure_is_500_in_the_shape(sift, origin):
    """The SDK retries a 502 three times, repeating the work: Firecrawl's upstream failure is
    a 500, in the same shape."""
    r = sift.post("/v2/scrape", {"url": origin.refused_url("/")})
    assert_error(r, 500)
    r = sift.post("/v1/fetch", {"url": origin.refused_url("/")})
    assert_error(r, 502)
