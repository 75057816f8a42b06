"""A service no web page can drive: `Host` and `Origin` checked on every request to the API
and to `sift mcp --listen` on any address (421, 403, sift's error shape, before any work); no
CORS header unless the operator configures origins; the links sift builds never come from
`Host`; and the MCP gate never takes a token it could not check."""

from __future__ import annotations

import json
import socket
import urllib.parse
from pathlib import Path
from typing import Any

import httpx2
import pytest

from tests.support.mcp_client import mcp_listen
from tests.support.sift_server import FLEET_TOKEN, SiftServer, http_call

EVIL = "http://evil.example"
FOREIGN_HOST = "evil.example"
ROUTES = [  # every kind of route: sift's own, the reader URL, Firecrawl, public ones, unknown
    ("POST", "/v1/fetch"),
    ("GET", "/r/http://127.0.0.1:1/"),  # its errors are a line of text: checked below
    ("POST", "/v2/scrape"),
    ("POST", "/v1/batch"),
    ("GET", "/healthz"),
    ("GET", "/metrics"),
    ("GET", "/no/such/path"),
    ("GET", "/"),  # the page for people, and its assets: a rebinding page never gets them
    ("GET", "/static/page.js"),
]


def _call(sift: SiftServer, method: str, path: str, headers: dict[str, str]) -> Any:
    body = {"url": "http://127.0.0.1:1/"} if method == "POST" else None
    return sift.request(method, path, body, headers=headers)


def _is_sift_error(r: Any, status: int, words: str) -> None:
    """sift's error shape: JSON, or the reader URL's one line `<status> <error>`."""
    assert r.status == status, (r.status, r.body[:300])
    if r.headers["Content-Type"].startswith("text/plain"):
        line = r.body.decode()
        assert line.startswith(f"{status} ") and line.count("\n") == 1 and words in line, line
    else:
        body = r.json
        assert body["success"] is False and words in body["error"], body
    assert not any(h.lower().startswith("access-control-") for h in r.headers), r.headers


@pytest.mark.parametrize(("method", "path"), ROUTES)
def test_a_foreign_host_is_421_and_a_foreign_origin_403_on_every_route(sift, method, path):
    _is_sift_error(_call(sift, method, path, {"Host": FOREIGN_HOST}), 421, "allowed_hosts")
    port = f"{FOREIGN_HOST}:{sift.port}"  # the rebinding page's own name, with sift's port
    _is_sift_error(_call(sift, method, path, {"Host": port}), 421, "allowed_hosts")
    _is_sift_error(_call(sift, method, path, {"Origin": EVIL}), 403, "allowed_origins")
    # A page of another local origin (a dev server on another port) is foreign too.
    local = {"Origin": "http://localhost:3000"}
    _is_sift_error(_call(sift, method, path, local), 403, "allowed_origins")


def test_a_refusal_at_the_edge_is_counted(sift):
    def refused() -> float:
        text = sift.request("GET", "/metrics", token=None).body.decode()
        line = 'sift_requests_total{route="other",status="421"} '
        return sum(float(x.split()[-1]) for x in text.splitlines() if x.startswith(line))

    before = refused()
    sift.request("GET", "/healthz", headers={"Host": FOREIGN_HOST})
    assert refused() == before + 1


def test_the_default_hosts_are_taken_with_and_without_the_port(sift):
    for host in ("localhost", "127.0.0.1", "[::1]"):
        for value in (host, f"{host}:{sift.port}"):
            r = sift.request("GET", "/healthz", headers={"Host": value})
            assert r.status == 200, (value, r.body)
            assert not any(h.lower().startswith("access-control-") for h in r.headers)
    assert sift.request("GET", "/healthz", headers={"Host": "localhost:9"}).status == 421


def test_a_ready_answer_at_the_edge_is_refused_too(sift, origin):
    """The second identical request is answered at the edge (`web/ready.py`), before any
    handler: a foreign Host or Origin is refused there all the same."""
    url = origin.url("/article")
    assert sift.fetch(url).status == 200
    assert sift.fetch(url).status == 200  # now ready at the edge
    for headers, status in (({"Host": FOREIGN_HOST}, 421), ({"Origin": EVIL}, 403)):
        r = sift.post("/v1/fetch", {"url": url}, headers=headers)
        _is_sift_error(r, status, "allowed_")


def test_configured_hosts_and_origins_are_taken_with_cors_for_those_origins(make_sift, origin):
    app = "https://app.example"
    sift = make_sift({"server": {"allowed_hosts": ["sift.example"], "allowed_origins": [app]}})
    url = origin.url("/article")
    r = sift.post("/v1/fetch", {"url": url}, headers={"Host": "sift.example", "Origin": app})
    assert r.status == 200, r.body
    assert r.headers["Access-Control-Allow-Origin"] == app
    pre = sift.request(
        "OPTIONS",
        "/v1/fetch",
        token=None,
        headers={"Origin": app, "Access-Control-Request-Method": "POST"},
    )
    assert pre.status == 204 and pre.headers["Access-Control-Allow-Origin"] == app
    assert "Authorization" in pre.headers["Access-Control-Allow-Headers"]
    assert sift.request("GET", "/healthz", headers={"Origin": EVIL}).status == 403
    # The configured list replaces the default names; the listen address always stays.
    assert sift.request("GET", "/healthz", headers={"Host": "localhost"}).status == 421
    assert sift.request("GET", "/healthz", headers={"Host": "127.0.0.1"}).status == 200


def _long_page(origin: Any) -> str:
    words = " ".join(f"word{i}" for i in range(3000))
    origin.set("/hosts/long", f"<html><body><article><p>{words}</p></article></body></html>")
    return str(origin.url("/hosts/long"))


def test_the_readers_continuation_never_comes_from_host(make_sift, origin):
    url = _long_page(origin)
    sift = make_sift()
    r = sift.request("GET", f"/r/{url}?max_tokens=300", headers={"Host": "localhost"})
    assert r.status == 200, r.body
    link = r.body.decode().rpartition("[continue: ")[2]
    assert link.startswith(f"http://127.0.0.1:{sift.port}/r/"), link
    public = make_sift({"server": {"public_url": "https://sift.example/"}})
    r = public.request("GET", f"/r/{url}?max_tokens=300", headers={"Host": "localhost"})
    link = r.body.decode().rpartition("[continue: ")[2]
    assert link.startswith("https://sift.example/r/"), link


def test_firecrawl_job_links_never_come_from_host(make_sift, origin):
    urls = [origin.url("/article")]
    for overrides, base in (({}, None), ({"server": {"public_url": "https://sift.example"}}, 1)):
        sift = make_sift(overrides)
        want = "https://sift.example" if base else f"http://127.0.0.1:{sift.port}"
        r = sift.post("/v2/batch/scrape", {"urls": urls}, headers={"Host": "localhost"})
        assert r.status == 200, r.body
        assert r.json["url"].startswith(f"{want}/v2/batch/scrape/"), r.json


def _loopback_4() -> str:
    """127.0.0.4, where the SDK's own check (loopback names only) is off."""
    try:
        with socket.socket() as s:
            s.bind(("127.0.0.4", 0))
    except OSError:
        pytest.skip("127.0.0.4 is not a local address here")
    return "127.0.0.4"


def _mcp_post(url: str, headers: dict[str, str], token: str | None = FLEET_TOKEN) -> Any:
    init = {
        "jsonrpc": "2.0",
        "id": 1,
        "method": "initialize",
        "params": {
            "protocolVersion": "2025-06-18",
            "capabilities": {},
            "clientInfo": {"name": "test", "version": "1"},
        },
    }
    sent = {
        "Content-Type": "application/json",
        "Accept": "application/json, text/event-stream",
        **({"Authorization": f"Bearer {token}"} if token else {}),
        **headers,
    }
    with httpx2.Client(trust_env=False, timeout=30) as http:
        return http.post(url, content=json.dumps(init), headers=sent)


def test_mcp_listen_on_any_address_refuses_a_foreign_origin_and_host(sift, tmp_path):
    host = _loopback_4()
    with mcp_listen(sift.url, tmp_path / "mcp.log", host=host) as url:
        assert _mcp_post(url, {}).status_code == 200  # the client as it is: taken
        for headers, status, words in (
            ({"Origin": EVIL}, 403, "allowed_origins"),
            ({"Host": FOREIGN_HOST}, 421, "allowed_hosts"),
            ({"Host": f"{FOREIGN_HOST}:{urllib.parse.urlsplit(url).port}"}, 421, "allowed_"),
        ):
            r = _mcp_post(url, headers)
            assert r.status_code == status, (headers, r.text)
            assert r.json()["success"] is False and words in r.json()["error"], r.text
        # Refused before the token is looked at: no token, still the 403.
        assert _mcp_post(url, {"Origin": EVIL}, token=None).status_code == 403


def test_mcp_listen_takes_configured_hosts_and_origins(sift, tmp_path):
    config = tmp_path / "sift.toml"
    app = "https://app.example"
    config.write_text(f'[server]\nallowed_hosts = ["mcp.example"]\nallowed_origins = ["{app}"]\n')
    with mcp_listen(sift.url, tmp_path / "mcp.log", config=config) as url:
        assert _mcp_post(url, {"Host": "mcp.example", "Origin": app}).status_code == 200
        assert _mcp_post(url, {"Origin": "http://localhost:3000"}).status_code == 403
        # a page of sift's own name and port (its own origin) is no foreign page
        own = urllib.parse.urlsplit(url).netloc
        assert _mcp_post(url, {"Host": own, "Origin": f"http://{own}"}).status_code == 200


def test_the_mcp_gate_never_takes_a_token_it_could_not_check(tmp_path: Path):
    """sift is down: the gate cannot ask whether a token is good, so it takes none (503 that
    says why), where it used to let any token through to the tools."""
    with socket.socket() as s:
        # Bound, never listening: connections are refused, and the port stays ours (closed,
        # the next free port handed out, the gate's own listener's, could be this one).
        s.bind(("127.0.0.1", 0))
        down = f"http://127.0.0.1:{s.getsockname()[1]}"
        with mcp_listen(down, tmp_path / "mcp.log") as url:
            r = _mcp_post(url, {}, token="any-token-at-all")
            assert r.status_code == 503, r.text
            assert r.json()["success"] is False and "cannot be checked" in r.json()["error"]
            assert _mcp_post(url, {}, token=None).status_code == 401


def test_refused_requests_cost_no_work(sift, origin):
    """A refused fetch never reaches the origin."""
    url = origin.url("/hosts/untouched")
    origin.set("/hosts/untouched", "<html><body><p>never read</p></body></html>")
    for headers in ({"Host": FOREIGN_HOST}, {"Origin": EVIL}):
        r = http_call(
            sift.url, "POST", "/v1/fetch", {"url": url}, token=FLEET_TOKEN, headers=headers
        )
        assert r.status in (421, 403)
    assert origin.count("/hosts/untouched") == 0


def test_host_rules_read_every_spelling_of_a_host():
    """The rules themselves (`core/hosts.py`): case, brackets, ports, malformed values."""
    from sift.core.config import ServerConfig
    from sift.core.hosts import HostRules

    rules = HostRules(
        ServerConfig(allowed_hosts=["localhost", "[::1]", "pinned.example:8443"]), "0.0.0.0"
    )
    taken = [
        "LOCALHOST",
        "localhost:8731",
        "[::1]",
        "[::1]:8731",
        "0.0.0.0:8731",
        "pinned.example:8443",
    ]
    refused = [
        "",
        "localhost:1",
        "::1",
        "[::1",
        "[::1]x",
        "a:b:c",
        "localhost:99999",
        "pinned.example",
    ]
    for value in taken:
        assert rules.refusal(value, None, 8731) is None, value
    for value in refused:
        assert rules.refusal(value, None, 8731) is not None, value
    assert rules.refusal(None, "null", 8731) is not None  # a sandboxed page's origin
    assert rules.refusal("localhost:8731", "http://localhost:8731", 8731) is None  # its own page
    assert rules.cors("http://localhost:8731") is None  # same-origin needs no CORS header
