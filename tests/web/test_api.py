"""The core through HTTP: /v1/fetch, errors, auth, body caps, /healthz, /metrics."""

from __future__ import annotations

import threading
import time

from tests.support.sift_server import RESTRICTED_TOKEN


def test_article_comes_back_as_markdown(sift, origin):
    r = sift.fetch(origin.url("/article"))
    assert r.status == 200, r.body
    env = r.json
    assert env["success"] is True and env["kind"] == "html" and env["status"] == 200
    text = env["content"]
    assert env["title"]
    assert text.startswith(f"# {env['title']}")
    assert "## " in text  # headings kept
    assert "\n- " in text or "\n* " in text  # a list
    assert "|---" in text.replace(" ", "").replace(":", "") or "| ---" in text  # a GFM table
    assert env["cached"] is False and env["truncated"] is False
    assert env["chars"] == len(text)
    assert env["final_url"] == origin.url("/article")
    for junk in ("Subscribe to our newsletter", "All rights reserved", "Buy now"):
        assert junk not in text, junk


def test_json_with_jq(sift, origin):
    r = sift.fetch(origin.url("/json"), jq=".items[0].name", context=False)
    assert r.status == 200, r.body
    assert r.json["kind"] == "json"
    assert r.json["content"].strip().startswith('"')


def test_a_jq_program_that_halts_with_an_error_fails_as_jq_does(sift, origin):
    """`halt_error` ends a jq run with an error (the jq command line's exit 5): a 422 with
    its message, never an empty 200; `halt` ends it with no more output."""
    r = sift.fetch(origin.url("/json"), jq='"no items" | halt_error', context=False)
    assert r.status == 422, r.body
    assert r.json["error"] == "jq failed: no items"
    r = sift.fetch(origin.url("/json"), jq=".items | length | halt_error(1)", context=False)
    assert r.status == 422 and r.json["error"].startswith("jq failed: "), r.body
    r = sift.fetch(origin.url("/json"), jq="1, halt, 2", context=False)
    assert r.status == 200 and r.json["content"].strip() == "1", r.body


def test_text_comes_back_as_is(sift, origin):
    r = sift.fetch(origin.url("/text"), context=False)
    assert r.status == 200, r.body
    assert r.json["kind"] == "text"
    assert r.json["content"].strip() == origin.text_body.strip()


def test_unsupported_type_is_415_with_browser_hint(sift, origin):
    origin.set("/clip.mp4", b"\x00\x00\x00\x18ftypmp42", "video/mp4")
    r = sift.fetch(origin.url("/clip.mp4"))
    assert r.status == 415
    assert r.json == {
        "success": False,
        "error": "unsupported content type video/mp4",
        "hint": "browser",
    }


def test_raw_mode_and_max_chars(sift, origin):
    r = sift.fetch(origin.url("/article"), mode="raw", context=False)
    assert r.status == 200
    assert "<html" in r.json["content"].lower()
    r = sift.fetch(origin.url("/article"), max_chars=300)
    assert r.status == 200
    head, _, text = r.json["content"].partition("\n\n")
    assert "Source: " in head
    assert 100 <= len(text) <= 300 and r.json["truncated"] is True  # the header on top
    bare = sift.fetch(origin.url("/article"), max_chars=300, context=False).json["content"]
    assert len(bare) <= 300


def test_bad_input_is_a_clear_400(sift, origin):
    cases = [
        (b"{not json", "malformed JSON"),
        (b'{"url": 5}', "url"),
        (b"{}", "url"),
        (b"[1, 2]", ""),
        (b'{"url": "http://x.test/", "mode": "fancy"}', "mode"),
        (b'{"url": "http://x.test/", "jq": ".[[["}', "jq"),
        (b'{"url": "http://x.test/", "max_chars": "many"}', "max_chars"),
        (b'{"url": "http://x.test/", "colour": "red"}', "colour"),
    ]
    for raw, needle in cases:
        r = sift.post("/v1/fetch", raw=raw)
        assert r.status == 400, (raw, r.status, r.body)
        assert r.json["success"] is False
        assert needle in r.json["error"], (raw, r.json)


def test_each_limit_holds_at_its_bound_and_refuses_past_it(sift, origin):
    """DESIGN §2's limits of `/v1/fetch`, each at its bound (taken) and one past it (a 400
    naming the field as the request spells it)."""
    page, js = origin.url("/article"), origin.url("/json")
    long_url = page + "?" + "a" * (8192 - len(page) - 1)
    sel = "." + "a" * 499
    wait = {"type": "wait", "milliseconds": 1}
    cases = [  # (field, taken, refused, words of the refusal)
        ("url", {"url": long_url}, {"url": long_url + "a"}, "`url`"),
        ("question", {"question": "q" * 2000}, {"question": "q" * 2001}, "`question`"),
        ("selectors", {"exclude_tags": [sel] * 50}, {"exclude_tags": [sel] * 51}, "selectors"),
        ("selector", {"include_tags": [sel]}, {"include_tags": [sel + "a"]}, "500 characters"),
        ("wait_for", {"wait_for": 60_000}, {"wait_for": 60_001}, "`wait_for`"),
        ("languages", {"languages": ["de-DE"] * 10}, {"languages": ["en"] * 11}, "`languages`"),
        ("max_tokens", {"max_tokens": 10_000_000}, {"max_tokens": 10_000_001}, "`max_tokens`"),
        ("jq", {"url": js, "jq": "." + " " * 4095}, {"url": js, "jq": "." * 4097}, "4096"),
        ("actions", {"actions": [wait] * 50}, {"actions": [wait] * 51}, "`actions`"),
    ]
    for name, taken, refused, words in cases:
        ok = sift.fetch(**{"url": page, **taken})
        assert ok.status != 400, (name, ok.body[:300])  # 50 actions: 501, no browser here
        bad = sift.fetch(**{"url": page, **refused})
        assert bad.status == 400 and bad.json["success"] is False, (name, bad.body[:300])
        assert words in bad.json["error"], (name, bad.json)


def test_oversized_body_is_413(sift):
    r = sift.post("/v1/fetch", raw=b'{"url": "' + b"a" * 70_000 + b'"}')
    assert r.status == 413
    assert r.json["success"] is False and "KiB" in r.json["error"]


def test_auth(sift, origin):
    assert sift.fetch(origin.url("/text"), token=None).status == 401
    r = sift.fetch(origin.url("/text"), token="wrong")
    assert r.status == 401 and r.json == {"success": False, "error": "unauthorized"}
    assert sift.fetch(origin.url("/text"), token=RESTRICTED_TOKEN).status == 200
    assert sift.request("GET", "/healthz", token=None).status == 200


def test_unknown_path_and_method(sift):
    r = sift.request("GET", "/nope")
    assert r.status == 404 and r.json["success"] is False
    r = sift.request("GET", "/v1/fetch")
    assert r.status == 405 and "GET" in r.json["error"] and r.json["success"] is False


def test_upstream_errors(sift, origin):
    r = sift.fetch(origin.url("/status/404"))
    assert r.status == 502
    assert r.json["error"].startswith("upstream 404")
    assert r.json["upstream_status"] == 404
    r = sift.fetch(origin.refused_url())
    assert r.status == 502 and "refused" in r.json["error"]


def test_guard_refuses_private_targets(sift):
    for url in (
        "http://10.0.0.1/",
        "http://[::1]/",
        "ftp://example.com/",
        "http://u:p@example.com/",
    ):
        r = sift.fetch(url)
        assert r.status == 403, (url, r.body)
        assert r.json["error"].startswith("blocked: ")


def test_healthz_answers_while_a_slow_fetch_is_in_flight(sift, origin):
    """The bridge regression test: the IOLoop never blocks on an actor."""
    done = threading.Event()
    statuses = []

    def slow() -> None:
        statuses.append(sift.fetch(origin.url("/slow?secs=3")).status)
        done.set()

    t = threading.Thread(target=slow)
    t.start()
    time.sleep(0.5)  # let the slow request reach the fetcher
    started = time.monotonic()
    r = sift.request("GET", "/healthz", token=None)
    elapsed = time.monotonic() - started
    assert r.status == 200 and r.json["ok"] is True and r.json["store"] == "ok"
    assert not done.is_set(), "the slow request should still be in flight"
    assert elapsed < 1.0  # wide margin: the slow one takes 3 s
    t.join(20)
    assert statuses == [200]


def test_metrics_parse_and_carry_no_urls(sift, origin):
    from prometheus_client.parser import text_string_to_metric_families

    sift.fetch(origin.url("/article"))
    r = sift.request("GET", "/metrics", token=None)
    assert r.status == 200
    text = r.body.decode()
    families = {f.name for f in text_string_to_metric_families(text)}
    for name in ("sift_requests", "sift_request_seconds", "sift_fetch", "sift_cache"):
        assert name in families, name
    assert "127.0.0.1" not in text and "/article" not in text


def _a_path(pattern: str) -> str:
    """A path a route's pattern matches: each group `0`, each character class its first."""
    import re

    path = re.sub(r"\((?:[^()\\]|\\.)*\)", "0", pattern.rstrip("$"))
    return re.sub(r"\[(.)[^\]]*\]", r"\1", path)


def test_every_405_says_allow(sift):
    """Over every route of the app: a method the route does not have is a 405 in sift's
    shape (`/r/`: its one line of text) with `Allow` naming the methods it has."""
    import tornado.web

    from sift.web.app import make_app

    app = make_app(None, None)  # type: ignore[arg-type]  # the route table only
    rules = app.wildcard_router.rules
    assert len(rules) > 30
    for rule in rules:
        pattern = rule.matcher.regex.pattern  # type: ignore[attr-defined]
        path = _a_path(pattern)
        assert rule.matcher.regex.match(path), (pattern, path)  # type: ignore[attr-defined]
        handler = rule.target
        has = {
            m
            for m in ("GET", "POST", "PUT", "DELETE", "PATCH")
            if getattr(handler, m.lower()) is not getattr(tornado.web.RequestHandler, m.lower())
        }
        assert has, pattern
        for method in sorted({"GET", "POST", "PUT", "DELETE", "PATCH"} - has):
            r = sift.request(method, path, raw=b"" if method != "GET" else None)
            assert r.status == 405, (method, path, r.status, r.body)
            assert set(r.headers["Allow"].split(", ")) == has, (method, path)
            if path.startswith("/r/"):
                assert r.body.startswith(b"405 method")
            else:
                assert r.json["success"] is False and method in r.json["error"]
