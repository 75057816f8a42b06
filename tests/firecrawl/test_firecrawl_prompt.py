"""A prompt turned into crawl options by the configured model (the fake one), through the
real firecrawl-py client: /v2/crawl/params-preview, and `prompt` on a crawl."""

from __future__ import annotations

import json

import pytest
from firecrawl import Firecrawl
from firecrawl.v2.utils.error_handler import BadRequestError

from tests.support.origin import install_site
from tests.support.sift_server import FLEET_TOKEN
from tests.support.until import until


def test_params_preview_asks_the_model(make_sift, fake_model, origin):
    sift = make_sift({"digest": {"endpoint": fake_model.url}})
    fake_model.replies = [json.dumps({"includePaths": ["^/docs/"], "limit": 5})]
    fc = Firecrawl(api_key=FLEET_TOKEN, api_url=sift.url)
    got = fc.crawl_params_preview(origin.url("/"), "only the docs, five pages")
    assert got.include_paths == ["^/docs/"] and got.limit == 5
    assert "only the docs, five pages" in fake_model.chats[-1]["messages"][1]["content"]


def test_params_preview_without_a_model_is_a_400_saying_so(sift, origin):
    fc = Firecrawl(api_key=FLEET_TOKEN, api_url=sift.url)
    with pytest.raises(BadRequestError) as err:
        fc.crawl_params_preview(origin.url("/"), "only the docs")
    assert "[digest] endpoint" in str(err.value)
    with pytest.raises(BadRequestError) as err:
        fc.start_crawl(origin.url("/site/"), prompt="only the docs")
    assert "[digest] endpoint" in str(err.value)


def test_a_crawl_prompt_becomes_its_options(make_sift, fake_model, origin):
    install_site(origin)
    sift = make_sift({"digest": {"endpoint": fake_model.url}})
    fake_model.replies = [json.dumps({"includePaths": ["^/site/docs/"], "sitemap": "skip"})]
    fc = Firecrawl(api_key=FLEET_TOKEN, api_url=sift.url)
    job = fc.start_crawl(origin.url("/site/"), prompt="the docs only", limit=10)
    until(lambda: fc.get_crawl_status(job.id).status != "scraping", "the crawl", 60, every=0.5)
    urls = {d.metadata.source_url for d in fc.get_crawl_status(job.id).data}
    assert urls and all(u == origin.url("/site/") or "/site/docs/" in u for u in urls), urls


def test_a_map_prompt_becomes_its_options(make_sift, fake_model, origin):
    install_site(origin)
    sift = make_sift({"digest": {"endpoint": fake_model.url}})
    fake_model.replies = [json.dumps({"search": "docs", "sitemap": "skip"})]
    r = sift.post("/v2/map", {"url": origin.url("/site/"), "prompt": "the documentation pages"})
    assert r.status == 200, r.body
    urls = [link["url"] for link in r.json["links"]]
    assert urls and all("docs" in u for u in urls), urls
    assert "the documentation pages" in fake_model.chats[-1]["messages"][1]["content"]
    off = make_sift()
    r = off.post("/v2/map", {"url": origin.url("/site/"), "prompt": "docs"})
    assert r.status == 400 and "[digest] endpoint" in r.json["error"]
