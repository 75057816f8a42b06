"""GET /r/<url>: the reader URL (issue 14 item 5) — markdown out, errors as one line of text,
the token in the header only, and the rule that splits the target from sift's options."""

from __future__ import annotations

import subprocess
import urllib.parse
from pathlib import Path

import pytest

from tests.support.origin import ARTICLE
from tests.support.pdfs import big_pdf
from tests.support.sift_server import FLEET_TOKEN

PDF = "application/pdf"


@pytest.fixture(scope="module")
def pdf400(tmp_path_factory: pytest.TempPathFactory) -> bytes:
    path: Path = tmp_path_factory.mktemp("pdf400r") / "big400.pdf"
    path.write_bytes(big_pdf(400))
    return path.read_bytes()


def read(sift, path: str, **kw):
    return sift.request("GET", path, **kw)


def test_reader_answers_markdown_with_the_context_header(sift, origin):
    origin.set("/rd/article", ARTICLE)
    r = read(sift, "/r/" + origin.url("/rd/article"))
    assert r.status == 200, r.body
    assert r.headers["Content-Type"] == "text/markdown; charset=utf-8"
    text = r.body.decode()
    assert text.startswith("# How Cities Are Rethinking Urban Heat\nSource: ")
    assert "Cool roofs" in text and "Sponsored" not in text
    assert text.endswith("\n")


def test_reader_pages_grep_and_q_as_query(sift, origin, pdf400):
    origin.set("/rd/big.pdf", pdf400, PDF)
    url = origin.url("/rd/big.pdf")
    first = read(sift, f"/r/{url}").body.decode()
    assert "· 400 pages" in first and f"{url}#pages=1-20" in first[:10_000]
    pages = read(sift, f"/r/{url}?pages=3-4").body.decode()
    assert "marker-3." in pages and "marker-4." in pages and "marker-5." not in pages
    page = read(sift, f"/r/{url}?page=7").body.decode()
    assert "marker-7." in page and "marker-8." not in page
    grep = read(sift, f"/r/{url}?grep=" + urllib.parse.quote(r"marker-3\d\b")).body.decode()
    assert "marker-31." in grep and "marker-39." in grep and "marker-40." not in grep
    assert origin.count("/rd/big.pdf") == 1
    origin.set("/rd/q", ARTICLE)
    answer = read(sift, "/r/" + origin.url("/rd/q") + "?q=which+city+planted+street+trees")
    assert answer.status == 200 and "Melbourne" in answer.body.decode()


def test_reader_keeps_the_targets_own_query(sift, origin):
    seen: list[str] = []

    async def echo(h):
        seen.append(h.request.query)
        await h.send(ARTICLE.replace("Urban Heat", f"Urban Heat {h.get_argument('city', '')}"))

    origin.route("/rd/search", echo)
    r = read(sift, "/r/" + origin.url("/rd/search") + "?city=Lyon&x=a%20b&max_chars=300")
    assert r.status == 200, r.body
    assert seen == ["city=Lyon&x=a%20b"]  # sift's option left out, the rest byte for byte
    text = r.body.decode()
    assert "Urban Heat Lyon" in text
    body = text.split("\n", 2)[2]  # `max_chars` caps the content, not the header's two lines
    body = body.partition("\n\n[continue: ")[0]  # nor the line naming the rest
    assert len(body.strip()) <= 300, body
    # the encoded form: the whole target, its `q` included, and the query is sift's
    target = urllib.parse.quote(origin.url("/rd/search") + "?city=Oslo&q=1", safe="")
    r = read(sift, f"/r/{target}?max_chars=500")
    assert r.status == 200 and "Urban Heat Oslo" in r.body.decode()
    assert seen[-1] == "city=Oslo&q=1"
    r = read(sift, f"/r/{target}?colour=red")
    assert r.status == 400 and r.body.decode().startswith("400 unknown option 'colour'")


def test_reader_fragment_in_the_encoded_target(sift, origin, pdf400):
    origin.set("/rd/enc.pdf", pdf400, PDF)
    target = urllib.parse.quote(origin.url("/rd/enc.pdf") + "#pages=9", safe="")
    r = read(sift, f"/r/{target}")
    body = r.body.decode()
    assert r.status == 200 and "marker-9." in body and "marker-10." not in body


def test_reader_errors_are_one_line_of_text(sift, origin):
    r = read(sift, "/r/http://10.1.2.3/")
    assert r.status == 403
    assert r.headers["Content-Type"].startswith("text/plain")
    line = r.body.decode()
    assert line.startswith("403 blocked") and line.count("\n") == 1 and line.endswith("\n")
    r = read(sift, "/r/" + origin.url("/status/404"))
    assert r.status == 502 and r.body.decode().startswith("502 upstream 404")
    r = read(sift, "/r/")
    assert r.status == 400 and r.body.decode().count("\n") == 1
    r = read(sift, "/r/" + origin.url("/rd/x.pdf") + "?pages=9-1")
    assert r.status in (400, 502) and r.body.decode().count("\n") == 1


def test_reader_needs_the_token_in_the_header(sift, origin):
    r = read(sift, "/r/" + origin.url("/article"), token=None)
    assert r.status == 401 and r.body.decode() == "401 unauthorized\n"
    r = read(sift, "/r/" + origin.url("/article") + f"?token={FLEET_TOKEN}", token=None)
    assert r.status == 401 and "Authorization: Bearer" in r.body.decode()
    assert FLEET_TOKEN not in r.body.decode()
    r = read(sift, "/r/" + origin.url("/article") + f"?key={FLEET_TOKEN}")
    assert r.status == 400 and "refused" in r.body.decode()
    assert origin.count("/article?key") == 0


def test_reader_with_curl_as_a_person_types_it(sift, origin, pdf400):
    """curl drops the `#` part itself: sift's options go in the query."""
    origin.set("/rd/curl.pdf", pdf400, PDF)
    out = subprocess.run(
        [
            "curl",
            "-s",
            "-H",
            f"Authorization: Bearer {FLEET_TOKEN}",
            f"{sift.url}/r/{origin.url('/rd/curl.pdf')}?pages=3-4",
        ],
        capture_output=True,
        text=True,
        timeout=60,
        check=True,
    )
    assert "marker-3." in out.stdout and "marker-5." not in out.stdout
