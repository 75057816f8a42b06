"""The rest of the Firecrawl surface with the real SDK: search (a fake SearXNG on loopback),
parse (uploads), the usage calls, extract jobs and the scrape `json` format (a fake model)."""

from __future__ import annotations

import json

import pytest
from firecrawl import Firecrawl
from firecrawl.v2.types import JsonFormat, ScrapeOptions

from tests.support.pdfs import THREE_TITLE, three_page_pdf
from tests.support.sift_server import FLEET_TOKEN, RESTRICTED_TOKEN

SCHEMA = {
    "type": "object",
    "properties": {"title": {"type": "string"}, "points": {"type": "integer"}},
    "required": ["title", "points"],
}


def client(sift):
    return Firecrawl(api_key=FLEET_TOKEN, api_url=sift.url)


# --- search -----------------------------------------------------------------------------


def test_search_through_searxng(make_sift, searx, origin):
    sift = make_sift({"search": {"searxng_url": searx.url}})
    res = client(sift).search("clean text", limit=2)
    assert [r.url for r in res.web] == [origin.url("/article"), origin.url("/text")]
    assert res.web[0].title == "An article" and res.web[0].description == "About things."
    assert searx.queries[-1] == {"q": "clean text", "format": "json", "categories": "general"}

    news = client(sift).search("clean text", sources=["news"], limit=5)
    assert news.news[2].date == "2026-12-01T00:00:00"
    assert searx.queries[-1]["categories"] == "news"


def test_search_scrapes_results_through_the_pipeline(make_sift, searx, origin):
    sift = make_sift({"search": {"searxng_url": searx.url}})
    before = origin.count("/article")
    res = client(sift).search("x", limit=1, scrape_options=ScrapeOptions(formats=["markdown"]))
    doc = res.web[0]
    assert "##" in doc.markdown
    assert doc.metadata.source_url == origin.url("/article")
    assert origin.count("/article") == before + 1
    client(sift).search("x", limit=1, scrape_options=ScrapeOptions(formats=["markdown"]))
    assert origin.count("/article") == before + 1  # the cache, like any fetch


def test_search_scrape_options_are_honoured_or_named(make_sift, searx, origin):
    """Each web result is scraped with the scrape options, as `/v2/scrape` would: formats and
    cleaning options honoured, the ones sift cannot honour named in the result's warning."""
    sift = make_sift({"search": {"searxng_url": searx.url}})
    opts = {"formats": ["markdown", "links"], "mobile": True, "excludeTags": ["table"]}
    r = sift.post("/v2/search", {"query": "x", "limit": 1, "scrapeOptions": opts})
    assert r.status == 200, r.body
    doc = r.json["data"]["web"][0]
    assert doc["metadata"]["sourceURL"] == origin.url("/article")
    assert "|" not in doc["markdown"]  # excludeTags: the article's table is left out
    assert isinstance(doc["links"], list)
    assert "`mobile`" in doc["warning"]
    bad = {"formats": ["markdown"], "includeTags": "main"}
    r = sift.post("/v2/search", {"query": "x", "limit": 1, "scrapeOptions": bad})
    assert r.status == 400 and "includeTags" in r.json["error"]


def test_search_v1_answers_a_list(make_sift, searx, origin):
    sift = make_sift({"search": {"searxng_url": searx.url}})
    r = sift.post("/v1/search", {"query": "x", "limit": 3})
    assert r.status == 200, r.body
    assert [d["url"] for d in r.json["data"]][:1] == [origin.url("/article")]
    r = sift.post("/v2/search", {"query": "x", "limit": 50})
    assert "at most 20 results" in r.json["warning"]  # a cap that says what it is


def test_search_without_searxng_says_how_to_configure_it(sift):
    r = sift.post("/v2/search", {"query": "anything"})
    assert r.status == 400
    assert "searxng_url" in r.json["error"] and r.json["success"] is False
    with pytest.raises(Exception, match="searxng_url"):
        client(sift).search("anything")


def test_search_bad_input(make_sift, searx):
    sift = make_sift({"search": {"searxng_url": searx.url}})
    assert sift.post("/v2/search", {"limit": 3}).status == 400
    assert sift.post("/v2/search", {"query": "x", "limit": 0}).status == 400
    assert sift.post("/v2/search", {"query": "x", "sources": [7]}).status == 400
    r = sift.post("/v2/search", {"query": "x", "sources": ["tweets"]})  # unknown: ignored
    assert r.status == 200 and r.json["data"] == {} and "tweets" in r.json["warning"]


# --- parse ------------------------------------------------------------------------------


def test_parse_uploads_through_the_extract_path(sift):
    html = (
        b"<html><head><title>Up</title></head><body><h1>Uploaded</h1>"
        + (b"<p>An uploaded page with enough words to be its own main content here.</p>" * 5)
        + b"</body></html>"
    )
    doc = client(sift).parse(html, filename="page.html")
    assert "Uploaded" in doc.markdown and doc.metadata.title

    pdf = client(sift).parse(three_page_pdf(), filename="three.pdf")
    assert pdf.metadata.num_pages == 3 and pdf.metadata.title == THREE_TITLE
    assert "--- page 2 ---" in pdf.markdown

    text = client(sift).parse(b"just some words\n", filename="notes.txt")
    assert "just some words" in text.markdown
    assert {f.format for f in client(sift).get_parse_formats()} >= {"pdf", "html", "text"}


def test_parse_caps_and_bad_input(make_sift):
    sift = make_sift({"fetch": {"max_body": 2000}})
    boundary = "b0undary"

    def form(name: str, data: bytes) -> bytes:
        return (
            (
                f"--{boundary}\r\n"
                f'Content-Disposition: form-data; name="file"; filename="{name}"\r\n'
                f"Content-Type: application/octet-stream\r\n\r\n"
            ).encode()
            + data
            + f"\r\n--{boundary}--\r\n".encode()
        )

    ctype = {"Content-Type": f"multipart/form-data; boundary={boundary}"}
    r = sift.post("/v2/parse", raw=form("big.txt", b"x" * 3000), headers=ctype)
    assert r.status == 413 and "too large" in r.json["error"]
    r = sift.post("/v2/parse", raw=form("small.txt", b"fine words"), headers=ctype)
    assert r.status == 200 and "fine words" in r.json["data"]["markdown"]
    r = sift.post("/v2/parse", raw=form("x.bin", b"\x00\x01\x02" * 10), headers=ctype)
    assert r.status == 415
    assert sift.post("/v2/parse", {"file": "nope"}).status == 400


# --- usage ------------------------------------------------------------------------------


def test_usage_calls_answer_from_sifts_state(sift):
    c = client(sift)
    conc = c.get_concurrency()
    assert conc.concurrency == 0 and conc.max_concurrency == sift.cfg.gates.global_
    queue = c.get_queue_status()
    assert queue.jobs_in_queue == 0 and queue.max_concurrency == sift.cfg.gates.global_
    assert c.get_credit_usage().remaining_credits == 0
    assert c.get_token_usage().remaining_tokens == 0
    assert c.v2.get_credit_usage_historical().periods == []
    raw = sift.request("GET", "/v2/team/credit-usage").json
    assert "does not meter credits" in raw["warning"]  # 0 is said not to be a balance
    assert sift.request("GET", "/v2/team/queue-status", token="bad").status == 401


def test_usage_v1_client(sift):
    from firecrawl import V1FirecrawlApp

    app = V1FirecrawlApp(api_key=FLEET_TOKEN, api_url=sift.url)
    assert app.get_credit_usage().data.remaining_credits == 0
    assert app.get_token_usage().data.remaining_tokens == 0


# --- extract and the json format --------------------------------------------------------


@pytest.mark.filterwarnings("ignore::DeprecationWarning")  # the SDK deprecates extract
def test_extract_job_through_the_model(make_sift, fake_model, origin):
    sift = make_sift({"digest": {"endpoint": fake_model.url}})
    fake_model.replies = ['```json\n{"title": "An article", "points": 3}\n```']
    res = client(sift).extract(
        [origin.url("/article")], prompt="the title", schema=SCHEMA, poll_interval=1, timeout=60
    )
    assert res.status == "completed", res
    assert res.data == {"title": "An article", "points": 3}
    assert (
        f"=== source: {origin.url('/article')} ==="
        in fake_model.chats[-1]["messages"][1]["content"]
    )


@pytest.mark.filterwarnings("ignore::DeprecationWarning")
def test_extract_answer_off_schema_is_asked_again_then_fails(make_sift, fake_model, origin):
    sift = make_sift({"digest": {"endpoint": fake_model.url}})
    fake_model.replies = ['{"title": "x"}', '{"title": "x", "points": 3}']
    res = client(sift).extract([origin.url("/text")], schema=SCHEMA, poll_interval=1, timeout=60)
    assert res.data == {"title": "x", "points": 3}
    assert "points" in fake_model.chats[-1]["messages"][1]["content"].split("refused:")[1]

    fake_model.replies = ["not json", "still not json"]
    res = client(sift).extract([origin.url("/text")], prompt="p", poll_interval=1, timeout=60)
    assert res.status == "failed" and "not JSON" in res.error


def test_extract_refusals(make_sift, fake_model, origin, sift):
    body = {"urls": [origin.url("/article")], "prompt": "title"}
    r = sift.post("/v2/extract", body)  # no model configured
    assert r.status == 400 and "[digest] endpoint" in r.json["error"]
    on = make_sift({"digest": {"endpoint": fake_model.url}})
    assert on.post("/v2/extract", {**body, "urls": ["http://10.0.0.1/"]}).status == 400
    assert on.post("/v2/extract", {**body, "schema": {"type": "nope"}}).status == 400
    assert on.post("/v2/extract", {"urls": [origin.url("/a")]}).status == 400
    fake_model.hold_chat = True  # the job is still running when sift stops: cancelled, no leak
    started = on.post("/v2/extract", body).json
    assert on.request("GET", f"/v2/extract/{started['id']}", token=RESTRICTED_TOKEN).status == 404
    assert fake_model.chat_arrived.wait(30)
    assert on.request("GET", f"/v2/extract/{started['id']}").json["status"] == "processing"


def test_json_format_through_the_model(make_sift, fake_model, origin):
    sift = make_sift({"digest": {"endpoint": fake_model.url}})
    fake_model.replies = [json.dumps({"title": "An article", "points": 7})]
    fmt = JsonFormat(type="json", prompt="title and points", schema=SCHEMA)
    doc = client(sift).scrape(origin.url("/article"), formats=["markdown", fmt])
    assert doc.json == {"title": "An article", "points": 7}
    assert doc.markdown


def test_json_format_without_a_model_is_a_clear_400(sift, origin):
    fmt = {"type": "json", "prompt": "the title"}
    r = sift.post("/v2/scrape", {"url": origin.url("/article"), "formats": [fmt]})
    assert r.status == 400 and "needs a model" in r.json["error"]
