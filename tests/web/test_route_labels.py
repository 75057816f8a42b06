"""`/metrics` labels every request with its own route's template (DESIGN §2, GET /metrics:
"Route labels are fixed templates"): a real route is never `other` (the label of paths sift
does not have) nor another route's template (`/v1/search` counted as `/v2/search`)."""

from __future__ import annotations

import re

import pytest

from sift.web.app import routes

JOB = "abcdefghijklmnop"
EXTRACT = "00000000-0000-0000-0000-000000000000"

ROUTES = [
    ("/v1/progress", "/v1/progress"),
    ("/v2/crawl/active", "/v2/crawl/active"),
    ("/v1/crawl/active", "/v1/crawl/active"),
    ("/v1/search", "/v1/search"),
    ("/v2/parse/formats", "/v2/parse/formats"),
    ("/v1/extract", "/v1/extract"),
    (f"/v1/extract/{EXTRACT}", "/v1/extract/{id}"),
    (f"/v2/extract/{EXTRACT}", "/v2/extract/{id}"),
    ("/v2/concurrency-check", "/v2/concurrency-check"),
    ("/v2/team/queue-status", "/v2/team/queue-status"),
    ("/v2/team/credit-usage", "/v2/team/credit-usage"),
    ("/v1/team/token-usage/historical", "/v1/team/token-usage/historical"),
    (
        "/.well-known/http-message-signatures-directory",
        "/.well-known/http-message-signatures-directory",
    ),
    (f"/v1/crawl/{JOB}/errors", "/v1/crawl/{id}/errors"),
]


def _count(sift, route: str, status: int) -> float:
    body = sift.request("GET", "/metrics", token=None).body.decode()
    line = f'sift_requests_total{{route="{route}",status="{status}"}} '
    found = re.search("^" + re.escape(line) + r"(\S+)$", body, re.M)
    return float(found.group(1)) if found else 0.0


@pytest.mark.parametrize(("path", "route"), ROUTES)
def test_a_request_is_counted_under_its_own_route(sift, path, route):
    status = sift.request("GET", path).status
    before = _count(sift, route, status)
    assert sift.request("GET", path).status == status
    assert _count(sift, route, status) == before + 1, (path, route, status)


def test_a_path_sift_does_not_have_is_other(sift):
    before = _count(sift, "other", 404)
    assert sift.request("GET", "/v1/parse/https://example.com/secret").status == 404
    assert _count(sift, "other", 404) == before + 1


def _paths() -> list[str]:
    """A path of every route sift has, its ids filled in."""
    fill = {r"(\d{1,6})": "0", r"([^/]{1,64})": "page.js", r"(.*)": "x"}
    paths = []
    for spec in routes({}):
        groups = re.findall(r"\([^)]*\)", spec.regex.pattern)
        path = spec.matcher.reverse(*(fill.get(g, JOB) for g in groups))
        assert path is not None, spec.regex.pattern
        paths.append(path)
    return paths


def test_no_route_of_the_table_is_counted_as_other_nor_by_its_id(sift):
    for path in _paths():
        before = _count(sift, "other", sift.request("GET", path).status)
        status = sift.request("GET", path).status
        assert _count(sift, "other", status) == before, path
    body = sift.request("GET", "/metrics", token=None).body.decode()
    assert JOB not in body and 'route="/r/x"' not in body
