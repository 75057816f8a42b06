"""Firecrawl v2 details its clients rely on (issue 37), through HTTP and the SDK: a completed
crawl's cancel is a 409, search takes `json` and ignores sources it does not know, the queue
status is at the top level, a job's headers without a credential are taken, and an upload named
as an image that is none is a clear 422."""

from __future__ import annotations

import json

from firecrawl import Firecrawl

from tests.support.origin import Origin
from tests.support.sift_server import FLEET_TOKEN
from tests.support.until import until

SCHEMA = {"type": "object", "properties": {"title": {"type": "string"}}, "required": ["title"]}
BOUNDARY = "b0undary"


def _done(sift, path: str) -> None:
    until(lambda: sift.request("GET", path).json["status"] == "completed", path, 60)


def test_cancelling_a_completed_crawl_is_a_409(sift, origin):
    r = sift.post("/v2/crawl", {"url": origin.url("/article"), "sitemap": "skip", "limit": 1})
    assert r.status == 200, r.body
    crawl = r.json["id"]
    _done(sift, f"/v2/crawl/{crawl}")
    r = sift.request("DELETE", f"/v2/crawl/{crawl}")
    assert r.status == 409 and r.json == {"success": False, "error": "Crawl is already completed"}
    assert Firecrawl(api_key=FLEET_TOKEN, api_url=sift.url).cancel_crawl(crawl) is False


def test_search_takes_json_and_ignores_unknown_sources(make_sift, searx, fake_model):
    sift = make_sift({"search": {"searxng_url": searx.url}, "digest": {"endpoint": fake_model.url}})
    fake_model.replies = [json.dumps({"title": "An article"})]
    body = {
        "query": "x",
        "limit": 1,
        "sources": ["web", "alexandria"],
        "scrapeOptions": {"formats": ["markdown", {"type": "json", "schema": SCHEMA}]},
    }
    r = sift.post("/v2/search", body)
    assert r.status == 200, r.body
    assert r.json["data"]["web"][0]["json"] == {"title": "An article"}
    assert "alexandria" in r.json["warning"] and "alexandria" not in r.json["data"]
    plain = make_sift({"search": {"searxng_url": searx.url}})
    r = plain.post("/v2/search", body)  # no model: said before any search
    assert r.status == 400 and "model" in r.json["error"], r.body


def test_queue_status_fields_are_at_the_top_level(sift):
    r = sift.request("GET", "/v2/team/queue-status")
    assert r.status == 200
    for key in ("jobsInQueue", "activeJobsInQueue", "waitingJobsInQueue", "maxConcurrency"):
        assert isinstance(r.json[key], int), r.json
    assert "data" not in r.json
    queue = Firecrawl(api_key=FLEET_TOKEN, api_url=sift.url).get_queue_status()
    assert queue.max_concurrency == sift.cfg.gates.global_


def test_a_crawl_takes_headers_without_a_credential(sift):
    site = Origin(host="127.0.0.2").start()
    try:
        agents: list[str] = []

        async def page(h):
            agents.append(h.request.headers.get("User-Agent", ""))
            await h.send("<html><title>UA</title><main><p>A page that names no one.</p></main>")

        site.route("/ua", page)
        opts = {"headers": {"User-Agent": "my-crawler/1.0"}}
        r = sift.post(
            "/v2/crawl", {"url": site.url("/ua"), "sitemap": "skip", "scrapeOptions": opts}
        )
        assert r.status == 200, r.body
        _done(sift, f"/v2/crawl/{r.json['id']}")
        assert agents == ["my-crawler/1.0"]
        opts = {"headers": {"Cookie": "session=secret"}}
        r = sift.post("/v2/crawl", {"url": site.url("/ua"), "scrapeOptions": opts})
        assert r.status == 400 and "headers" in r.json["error"] and "secret" not in r.json["error"]
    finally:
        site.stop()


def _form(name: str, data: bytes, part_type: str) -> bytes:
    head = (
        f'--{BOUNDARY}\r\nContent-Disposition: form-data; name="file"; filename="{name}"\r\n'
        f"Content-Type: {part_type}\r\n\r\n"
    )
    return head.encode() + data + f"\r\n--{BOUNDARY}--\r\n".encode()


def test_an_upload_named_png_that_is_no_image_is_a_422(sift):
    ctype = {"Content-Type": f"multipart/form-data; boundary={BOUNDARY}"}
    for data in (b"plain words, not an image", b"\x00\x01\x02" * 10):
        for part_type in ("application/octet-stream", "image/png"):
            r = sift.post("/v2/parse", raw=_form("x.png", data, part_type), headers=ctype)
            assert r.status == 422, r.body
            assert r.json["error"].startswith("not an image: x.png") and "hint" not in r.json
