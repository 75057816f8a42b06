"""Has it changed? `if_none_match` on /v1/fetch (unchanged with no content; changed with a
unified diff against the cached earlier version), its privacy, and Firecrawl's
`changeTracking` format on /v2/scrape through the firecrawl-py SDK (new, same, changed with
a git diff, removed)."""

from __future__ import annotations

from firecrawl import Firecrawl

from tests.support.sift_server import FLEET_TOKEN


def test_the_same_document_answers_unchanged_and_a_changed_one_its_diff(sift, site):
    url = site.url("/changing")
    first = sift.fetch(url)
    h1 = first.json["content_hash"]
    assert len(h1) == 32 and "unchanged" not in first.json

    same = sift.fetch(url, if_none_match=h1)
    assert same.status == 200, same.json
    assert same.json["unchanged"] is True and same.json["content"] == ""
    assert same.json["content_hash"] == h1 and same.json["chars"] == 0
    assert site.origin.count("/changing") == 2  # asking whether it changed asks the site

    site.change()
    changed = sift.fetch(url, if_none_match=h1)
    assert changed.json["unchanged"] is False
    assert "Update 2: the orchid bloomed again." in changed.json["content"]
    diff = changed.json["changes"]
    assert diff.startswith(f"--- {h1}")
    assert "\n+Update 2: the orchid bloomed again." in diff
    assert not [line for line in diff.splitlines()[2:] if line.startswith("-")]

    # a version no longer cached: the new answer, with no diff to give
    later = sift.fetch(url, if_none_match=h1)
    assert later.json["unchanged"] is False and "changes" not in later.json


def test_an_unchanged_answer_counts_no_tokens(sift, site):
    """`tokens` counts the answer's content: an unchanged answer has none."""
    url = site.url("/changing")
    h1 = sift.fetch(url).json["content_hash"]
    same = sift.fetch(url, if_none_match=h1).json
    assert same["unchanged"] is True and same["content"] == ""
    assert same["tokens"] == 0


def test_a_view_answers_unchanged_by_its_own_content_hash(sift, site):
    """The `content_hash` of an answer cleaned with the caller's options is one
    `if_none_match` takes back: the same view answers unchanged, and a changed page not."""
    url = site.url("/changing")
    view = {"whole_page": True, "exclude_tags": ["nav"]}
    h1 = sift.fetch(url, **view).json["content_hash"]
    same = sift.fetch(url, if_none_match=h1, **view)
    assert same.status == 200, same.json
    assert same.json["unchanged"] is True and same.json["content_hash"] == h1
    site.change()
    changed = sift.fetch(url, if_none_match=h1, **view)
    assert changed.status == 200, changed.json
    assert changed.json["unchanged"] is False
    assert "Update 2: the orchid bloomed again." in changed.json["content"]


def test_if_none_match_is_checked(sift, site):
    r = sift.fetch(site.url("/changing"), if_none_match="not a hash")
    assert r.status == 400
    assert r.json["error"] == "invalid request: `if_none_match` is the `content_hash` of an answer"


def test_a_private_request_compares_without_the_cache(sift, site):
    url = site.url("/changing")
    private = {"Cookie": "session=1"}
    h1 = sift.fetch(url, headers=private).json["content_hash"]
    assert sift.fetch(url, headers=private, if_none_match=h1).json["unchanged"] is True
    site.change()
    r = sift.fetch(url, headers=private, if_none_match=h1)
    assert r.json["unchanged"] is False and "changes" not in r.json  # no version was kept
    assert sift.fetch(url).json["cached"] is False  # nothing of it is cached


def test_firecrawl_change_tracking_new_same_changed_removed(sift, site):
    client = Firecrawl(api_key=FLEET_TOKEN, api_url=sift.url)
    url = site.url("/changing")
    formats = ["markdown", {"type": "changeTracking", "modes": ["git-diff"]}]

    doc = client.scrape(url, formats=formats)
    assert doc.change_tracking == {
        "previousScrapeAt": None,
        "changeStatus": "new",
        "visibility": "visible",
    }
    doc = client.scrape(url, formats=formats)
    tracked = doc.change_tracking
    assert tracked["changeStatus"] == "same" and tracked["previousScrapeAt"].endswith("Z")
    assert "diff" not in tracked

    site.change()
    tracked = client.scrape(url, formats=formats).change_tracking
    assert tracked["changeStatus"] == "changed"
    assert "+Update 2: the orchid bloomed again." in tracked["diff"]["text"]
    (file,) = tracked["diff"]["json"]["files"]
    added = [c for chunk in file["chunks"] for c in chunk["changes"] if c["type"] == "add"]
    assert added and added[-1]["content"] == "+Update 2: the orchid bloomed again."
    assert file["additions"] == len(added)

    site.origin.set("/changing", "<html><body>gone</body></html>", status=404)
    tracked = client.scrape(url, formats=["markdown", "changeTracking"]).change_tracking
    assert tracked["changeStatus"] == "removed" and "diff" not in tracked


def test_firecrawl_change_tracking_names_what_it_does_not_do(sift, site):
    client = Firecrawl(api_key=FLEET_TOKEN, api_url=sift.url)
    fmt = {"type": "changeTracking", "modes": ["json"], "tag": "weekly"}
    doc = client.scrape(site.url("/tagged"), formats=["markdown", fmt])
    assert doc.change_tracking["changeStatus"] == "new"
    assert "`json` mode" in doc.warning and "`tag`" in doc.warning


def test_a_batch_scrape_tracks_changes_per_target(sift, site):
    client = Firecrawl(api_key=FLEET_TOKEN, api_url=sift.url)
    url = site.url("/changing")
    sift.fetch(url)  # a fresh cached copy: a tracked target asks the site all the same
    job = client.batch_scrape([url], formats=["markdown", "changeTracking"], poll_interval=1)
    assert job.status == "completed", job
    assert job.data[0].change_tracking["changeStatus"] == "same"
    site.change()
    job = client.batch_scrape([url], formats=["markdown", "changeTracking"], poll_interval=1)
    assert job.data[0].change_tracking["changeStatus"] == "changed"
    assert site.origin.count("/changing") == 3


def test_a_partial_answers_content_hash_is_taken_back(sift, site):
    """A document answered in part when out of time has `content_hash`
    `partial:<pages>:<url>`: sent back as `if_none_match`, it names no whole version, so
    the answer is the document (changed), never a 400."""
    url = site.url("/changing")
    r = sift.fetch(url, if_none_match=f"partial:12:{url}")
    assert r.status == 200, r.json
    assert r.json["unchanged"] is False and "orchid" in r.json["content"]
    assert sift.fetch(url, if_none_match="partial:x:" + url).status == 400
