"""The browser path (issue 16): headless Chromium behind sift's guarded proxy.

Every test here renders in the system Chromium (skipped where it is not installed) on
loopback: the origin on 127.0.0.1 is allowed (`allow_prefixes`), and sentinels on 127.0.0.2
are not — so any connection a sentinel sees is a request the guard let through.
"""

from __future__ import annotations

import contextlib
import os
import tempfile
import threading
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import psutil
import pytest

from tests.support.browser import BROWSER, GUARD, RENDER, SCRIPT_PAGE, Sentinel
from tests.support.sift_server import FLEET_TOKEN, RESTRICTED_TOKEN

pytestmark = pytest.mark.skipif(
    not os.access(BROWSER, os.X_OK), reason="no chromium (apt-get install chromium)"
)


@pytest.fixture(scope="module", autouse=True)
def warm_browser() -> None:
    """Launch Chromium once, with sift's arguments and a proxy nobody listens on, before the
    tests: its first start on a fresh machine (files not yet in the page cache, fontconfig's
    cache built) can take longer than the half of a render's budget a launch is given."""
    from playwright.sync_api import sync_playwright

    from sift.browser.child import ARGS

    with tempfile.TemporaryDirectory(prefix="sift-warm-") as home, sync_playwright() as pw:
        browser = pw.chromium.launch(
            executable_path=BROWSER,
            args=[*ARGS, "--proxy-server=http://127.0.0.1:9"],
            env={"HOME": home, "PATH": "/usr/bin:/bin"},
            timeout=120_000,
        )
        browser.close()


@pytest.fixture
def sentinels() -> Iterator[list[Sentinel]]:
    made = [Sentinel() for _ in range(5)]
    yield made
    for s in made:
        s.close()


def browser_pids() -> set[int]:
    """Live (not zombie) Chromium processes of this test process's temporary directory (every
    Chromium process names its profile there, even once orphaned), and its profiles as negative
    numbers (a profile left in the temporary directory is something left behind too)."""
    tmp = tempfile.gettempdir()
    found = {-hash(p) for p in Path(tmp).glob("*sift-render-*")}
    found |= {-hash(p) for p in Path(tmp).glob("playwright*profile*")}
    for p in psutil.process_iter(["name", "exe", "status"]):
        if p.info["status"] == psutil.STATUS_ZOMBIE:
            continue
        if "chrom" in (p.info["name"] or "") or "chromium" in (p.info["exe"] or ""):
            with contextlib.suppress(psutil.Error):
                if tmp in " ".join(p.cmdline()):
                    found.add(p.pid)
    return found


def pages_open() -> set[int]:
    """Chromium's page processes (renderers) started from this test process (sift runs in
    it): a render's own are gone once it answered (its context closed)."""
    found = set()
    for p in psutil.Process().children(recursive=True):
        with contextlib.suppress(psutil.Error):
            if "--type=renderer" in p.cmdline():
                found.add(p.pid)
    return found


def assert_pages_closed(sift, origin) -> None:
    """Every page process open now is gone once the next render has answered: a render's own
    close with its context, and the context readied for the next render (opened after this
    one answered, maybe already here) is taken and closed by that next render."""
    now = pages_open()
    r = sift.fetch(origin.url(f"/article?next={time.monotonic_ns()}"), render=True)
    assert r.status == 200, r.body
    deadline = time.monotonic() + 5
    while (left := now & pages_open()) and time.monotonic() < deadline:
        time.sleep(0.2)
    assert not left, f"page processes left behind: {sorted(left)}"


def assert_no_browser_left(before: set[int]) -> None:
    deadline = time.monotonic() + 5
    while (left := browser_pids() - before) and time.monotonic() < deadline:
        time.sleep(0.2)
    assert not left, f"browser processes or profiles left behind: {sorted(left)}"


def test_script_page_renders_and_static_says_browser(make_sift, origin):
    origin.set("/b/script", SCRIPT_PAGE)
    static = make_sift({"guard": GUARD})  # rendering off
    r = static.fetch(origin.url("/b/script"))
    assert r.status == 200
    assert r.json["hint"] == "browser"
    assert "quick brown fox" not in r.json["content"]
    off = static.fetch(origin.url("/b/script"), render=True)
    assert off.status == 501 and "render" in off.json["error"]

    before = browser_pids()
    sift = make_sift({"guard": GUARD, "render": RENDER})
    r = sift.fetch(origin.url("/b/script"), render=True)
    assert r.status == 200, r.body
    env = r.json
    assert env["rendered"] is True
    assert "quick brown fox was rendered by JavaScript" in env["content"]
    assert "Written by script" in env["content"]
    assert "warning" not in env
    # cached apart from the static answer: the static one still says browser
    again = sift.fetch(origin.url("/b/script"), render=True)
    assert again.json["cached"] is True and "quick brown fox" in again.json["content"]
    assert_pages_closed(sift, origin)
    sift.stop()  # the warm browser ends with sift
    assert_no_browser_left(before)


def test_auto_rerenders_a_script_only_page(make_sift, origin):
    origin.set("/b/auto", SCRIPT_PAGE)
    sift = make_sift({"guard": GUARD, "render": RENDER})
    r = sift.fetch(origin.url("/b/auto"))
    assert r.status == 200, r.body
    assert r.json["rendered"] is True
    assert "quick brown fox" in r.json["content"]


def test_every_request_of_the_page_goes_through_the_guard(make_sift, origin, sentinels):
    xhr, img, redirected, ws, frame = sentinels
    origin.set(
        "/b/hostile",
        f"""<html><head><title>Hostile</title></head><body><div id="app"></div>
<img src="http://{img.netloc}/pixel.png"><iframe src="http://{frame.netloc}/"></iframe>
<img src="{origin.url("/redirect")}?to=http://{redirected.netloc}/after-redirect">
<script>
fetch('http://{xhr.netloc}/latest/meta-data/').catch(() => {{}});
try {{ new WebSocket('ws://{ws.netloc}/socket'); }} catch (e) {{}}
document.getElementById('app').innerHTML = '<h1>Hostile page</h1><p>' +
  'This page tries to reach private services from the browser. '.repeat(6) + '</p>';
</script></body></html>""",
    )
    sift = make_sift({"guard": GUARD, "render": {**RENDER, "auto": False}})
    r = sift.fetch(origin.url("/b/hostile"), render=True)
    assert r.status == 200, r.body
    env = r.json
    assert "tries to reach private services" in env["content"]
    for s in sentinels:
        assert s.connections == 0, f"the sentinel {s.netloc} saw a connection"
    warning = env["warning"]
    for s in sentinels:
        assert s.netloc in warning, (s.netloc, warning)
    assert "loopback" in warning
    assert_pages_closed(sift, origin)


def test_a_main_document_redirected_to_a_blocked_address_is_403(make_sift, origin, sentinels):
    sift = make_sift({"guard": GUARD, "render": RENDER})
    target = f"{origin.url('/redirect')}?to=http://{sentinels[0].netloc}/"
    r = sift.fetch(target, render=True)
    assert r.status == 403, r.body
    assert r.json["error"].startswith("blocked:")
    assert sentinels[0].netloc in r.json["error"]
    assert sentinels[0].connections == 0


def test_a_page_that_never_stops_loading_ends_at_the_deadline(make_sift, origin):
    origin.set(
        "/b/endless",
        f"""<html><head><title>Endless</title></head><body><div id="app"></div>
<script>
document.getElementById('app').innerHTML = '<p>' +
  'Some text rendered before the page finished loading, which it never does. '.repeat(6) + '</p>';
</script><img src="{origin.url("/slow")}?secs=120"></body></html>""",
    )
    sift = make_sift({"guard": GUARD, "render": {**RENDER, "deadline": "6s"}})
    started = time.monotonic()
    r = sift.fetch(origin.url("/b/endless"), render=True)
    took = time.monotonic() - started
    assert r.status == 200, r.body
    env = r.json
    assert "rendered before the page finished loading" in env["content"]
    assert "still loading" in env["warning"]
    assert took < 6 + 20  # generous: the deadline held, not the 120 s of the image
    assert_pages_closed(sift, origin)


# A page that allocates without end (16 x 16 MiB every 10 ms, each filled).
HOG = """<html><body><p>hog</p><script>
const keep = [];
function grow() { for (let i = 0; i < 16; i++) { const a = new Uint8Array(16 << 20);
  a.fill(1); keep.push(a); } setTimeout(grow, 10); }
grow();
</script></body></html>"""


def test_a_page_that_allocates_without_end_is_killed(make_sift, origin):
    origin.set("/b/hog", HOG)
    sift = make_sift({"guard": GUARD, "render": {**RENDER, "max_rss": "700MiB", "deadline": "30s"}})
    r = sift.fetch(origin.url("/b/hog"), render=True, wait_for=20_000)
    assert r.status == 422, r.body
    assert "more than 700 MiB" in r.json["error"]
    # The next render, sent at once, works: while the struck page's memory is given back it
    # waits, and is not killed with that page if the browser is (as it was before).
    r = sift.fetch(origin.url("/article"), render=True)
    assert r.status == 200, r.body
    assert_pages_closed(sift, origin)  # the killed page's process among them


# A page that waits for HOLD, then allocates STEP x 16 MiB every 10 ms until it holds CAP.
GROWER = """<html><body><p>grower</p><script>
const keep = [];
function grow() { for (let i = 0; i < STEP; i++) { const a = new Uint8Array(16 << 20);
  a.fill(1); keep.push(a); } if (keep.length * 16 < CAP) setTimeout(grow, 10); }
fetch("HOLD").then(grow);
</script></body></html>"""


def test_a_render_sent_during_a_memory_strike_is_not_killed_with_the_browser(make_sift, origin):
    """Two pages grow at once: the faster is killed (the strike), the slower goes on over
    `max_rss`, so when the strike's grace ends the whole browser is killed. A render sent
    right after the strike waits for that and runs on the next browser; it used to start on
    the struck one and die with it, answering the other pages' "more than 700 MiB"."""
    tag = time.monotonic_ns()
    pages = {"fast": ("16", "1e9"), "slow": ("1", "1536")}  # MiB: without end / 1.5 GiB
    for name, (step, cap) in pages.items():
        hold = origin.url(f"/hold/{name}-{tag}")
        page = GROWER.replace("HOLD", hold).replace("STEP", step).replace("CAP", cap)
        origin.set(f"/b/{name}", page)
    origin.set("/b/after-strike", SCRIPT_PAGE)
    sift = make_sift(
        {"guard": GUARD, "render": {**RENDER, "max_rss": "700MiB", "deadline": "30s", "slots": 3}}
    )
    answers: dict[str, Any] = {}

    def render(name: str, token: str) -> None:
        url = origin.url(f"/b/{name}")
        answers[name] = sift.fetch(url, render=True, wait_for=20_000, token=token)

    threads = [
        threading.Thread(target=render, args=("slow", RESTRICTED_TOKEN)),
        threading.Thread(target=render, args=("fast", FLEET_TOKEN)),
    ]
    try:
        for t, name in zip(threads, ["slow", "fast"], strict=True):
            t.start()
            assert origin.wait_arrived(f"{name}-{tag}", timeout=60)  # its page is live
    finally:
        for name in pages:
            origin.release(f"{name}-{tag}")
    threads[1].join(60)
    assert answers["fast"].status == 422, answers["fast"].body
    assert "more than 700 MiB" in answers["fast"].json["error"]
    # In flight when the grace ends (it waits 3 s), while the slow page is still over the limit.
    r = sift.fetch(origin.url("/b/after-strike"), render=True, wait_for=3000)
    assert r.status == 200, r.body
    assert "quick brown fox was rendered by JavaScript" in r.json["content"]
    threads[0].join(60)
    assert answers["slow"].status == 422, answers["slow"].body
    assert_pages_closed(sift, origin)


def test_firecrawl_scrape_with_screenshot(make_sift, origin):
    from firecrawl import Firecrawl

    origin.set("/b/fc", SCRIPT_PAGE)
    sift = make_sift({"guard": GUARD, "render": RENDER})
    client = Firecrawl(api_key=FLEET_TOKEN, api_url=sift.url)
    doc = client.scrape(origin.url("/b/fc"), formats=["markdown", "screenshot"], wait_for=1000)
    assert doc.markdown and "quick brown fox" in doc.markdown
    assert doc.screenshot and doc.screenshot.startswith("data:image/png;base64,iVBOR")
    assert doc.metadata.title and doc.metadata.status_code == 200


def renders(sift) -> float:
    """Renders started, of any outcome (the metric; it may count other tests' renders)."""
    text = sift.request("GET", "/metrics", token=None).body.decode()
    lines = [line for line in text.splitlines() if line.startswith("sift_renders_total{")]
    return sum(float(line.rsplit(" ", 1)[1]) for line in lines)


# A page with its text in the HTML, and one more paragraph that only a browser shows: never
# auto-rendered (it is not script-only), so only `waitFor` renders it.
SCRIPT_ADDS = (
    """<html><head><title>Script adds</title></head><body><article><h1>Static</h1><p>
"""
    + "The static paragraph of this page is in its HTML for any client to read. " * 6
    + """
</p><div id="more"></div></article><script>
document.getElementById('more').innerHTML = '<p>A sentence only a browser shows.</p>';
</script></body></html>"""
)


def test_scrape_wait_for_renders_an_html_page(make_sift, origin):
    """Firecrawl's `waitFor` > 0 renders (every Firecrawl scrape is a browser page; the SDK
    sends it only when its caller does); `/v1/fetch`'s `wait_for` alone starts no render."""
    origin.set("/b/wait", SCRIPT_ADDS)
    sift = make_sift({"guard": GUARD, "render": RENDER})
    before = renders(sift)
    r = sift.fetch(origin.url("/b/wait"), wait_for=500)
    assert r.status == 200 and "rendered" not in r.json
    assert "only a browser shows" not in r.json["content"]
    assert renders(sift) == before  # no render was started
    r = sift.post("/v2/scrape", {"url": origin.url("/b/wait"), "waitFor": 500})
    assert r.status == 200, r.body
    data = r.json["data"]
    assert "A sentence only a browser shows." in data["markdown"]
    assert "warning" not in data
    assert renders(sift) == before + 1
    # the JSON, text and error pages a render cannot improve are answered as fetched
    r = sift.post("/v2/scrape", {"url": origin.url("/json"), "waitFor": 500})
    assert r.status == 200 and renders(sift) == before + 1
    # with the caller's own headers too, on that render's own context
    body = {"url": origin.url("/b/wait"), "waitFor": 500, "headers": {"Cookie": "a=b"}}
    r = sift.post("/v2/scrape", body)
    assert r.status == 200, r.body
    assert "A sentence only a browser shows." in r.json["data"]["markdown"]
    assert "warning" not in r.json["data"] and renders(sift) == before + 2


def test_scrape_wait_for_with_the_browser_busy_answers_the_page(make_sift, origin):
    """A render asked only through `waitFor` that finds the browser busy (this caller's
    render in flight: 429; every slot taken: 503) answers the page as fetched, with a
    warning, never an error."""
    origin.set(
        "/b/held", SCRIPT_PAGE.replace("</body>", f'<img src="{origin.url("/hold/wf")}"></body>')
    )
    origin.set("/b/wait-busy", SCRIPT_ADDS)
    sift = make_sift({"guard": GUARD, "render": {**RENDER, "auto": False}})
    held: list[int] = []
    t = threading.Thread(
        target=lambda: held.append(sift.fetch(origin.url("/b/held"), render=True).status)
    )
    t.start()
    try:
        assert origin.wait_arrived("wf", timeout=60)  # the render holds the one slot
        for token in (FLEET_TOKEN, RESTRICTED_TOKEN):
            body = {"url": origin.url("/b/wait-busy"), "waitFor": 500}
            r = sift.post("/v2/scrape", body, token=token)
            assert r.status == 200, r.body
            data = r.json["data"]
            assert "The static paragraph" in data["markdown"]
            assert "only a browser shows" not in data["markdown"]
            assert "busy" in data["warning"] and "render" in data["warning"]
    finally:
        origin.release("wf")
        t.join(60)
    assert held == [200]


# Nearly no text, mostly script, even once rendered: the clean alone would say "browser".
SHORT_SCRIPT_PAGE = (
    """<html><head><title>Short</title></head><body><div id="app"></div>
<script>var bundle = '"""
    + "x" * 4000
    + """';
document.getElementById('app').innerHTML = '<p>Rendered by script: a short note.</p>';
</script></body></html>"""
)


def test_a_rendered_answer_never_says_browser(make_sift, origin):
    origin.set("/b/short", SHORT_SCRIPT_PAGE)
    sift = make_sift({"guard": GUARD, "render": RENDER})
    for _ in range(2):  # rendered, then the cached render
        r = sift.fetch(origin.url("/b/short"))
        assert r.status == 200, r.body
        assert r.json["rendered"] is True and "a short note" in r.json["content"]
        assert r.json.get("hint") is None
    r = sift.post("/v2/scrape", {"url": origin.url("/b/short")})
    assert "a short note" in r.json["data"]["markdown"]
    assert "needs a browser" not in r.json["data"].get("warning", "")


def test_full_page_screenshot_is_named(make_sift, origin):
    """sift takes one viewport: a `fullPage` screenshot (v2's option, v1's format name) is
    answered with one, and a warning that says so."""
    sift = make_sift({"guard": GUARD, "render": RENDER})
    for fmt in ({"type": "screenshot", "fullPage": True}, "screenshot@fullPage"):
        r = sift.post("/v2/scrape", {"url": origin.url("/article"), "formats": ["markdown", fmt]})
        assert r.status == 200, r.body
        data = r.json["data"]
        assert data["screenshot"].startswith("data:image/png;base64,")
        assert "fullPage" in data["warning"] and "viewport" in data["warning"]


MEMBERS = """<html><head><title>Members</title></head><body><div id="app"></div>
<button id="more">more</button><div id="out"></div><img src="OTHER/b/pixel">
<script>
const app = document.getElementById('app');
app.innerHTML = '<h1>Welcome back, member</h1><p>' +
  'Your private dashboard, rendered by script for the logged-in reader. '.repeat(6) + '</p>';
if (document.cookie.includes('session=private-7')) app.innerHTML += '<p>script sees the cookie</p>';
fetch('/b/api').then(r => r.text()).then(t => { app.innerHTML += '<p>api said ' + t + '</p>'; });
document.getElementById('more').onclick = () => { document.getElementById('out').innerHTML =
  '<p>' + 'Members-only text shown after the button was clicked. '.repeat(4) + '</p>'; };
</script></body></html>"""


def test_a_render_with_the_callers_cookie_sees_the_logged_in_page(make_sift, origin):
    """The caller's `headers` go with the render, on its own context only: the logged-in
    page (its script sees the cookie, its same-origin API call carries them), actions and a
    screenshot on it; another host never gets them; nothing of it is cached."""
    secret = {"Cookie": "session=private-7", "Authorization": "Bearer member-token"}
    other = origin.url("/").replace("127.0.0.1", "localhost").rstrip("/")

    async def members_app(h):
        logged_in = "session=private-7" in h.request.headers.get("Cookie", "")
        page = MEMBERS.replace("OTHER", other)
        await h.send((page if logged_in else SCRIPT_PAGE.replace("fox", "stranger")).encode())

    async def api(h):
        bearer = h.request.headers.get("Authorization") == secret["Authorization"]
        await h.send(b"token-ok" if bearer else b"no-token", "text/plain")

    origin.route("/b/members", members_app)
    origin.route("/b/api", api)
    origin.set("/b/pixel", "x")
    url = origin.url("/b/members")
    sift = make_sift({"guard": {"allow_prefixes": ["127.0.0.1/32", "::1/128"]}, "render": RENDER})
    before = renders(sift)
    # script-only: rendered, with the caller's headers (a wait for the page's own API call)
    r = sift.fetch(url, headers=secret, wait_for=1000)
    assert r.status == 200, r.body
    assert r.json["rendered"] is True and r.json["cached"] is False
    content = r.json["content"]
    assert "Welcome back, member" in content and "script sees the cookie" in content
    assert "api said token-ok" in r.json["content"]
    assert origin.requests("/b/pixel")
    for h in origin.requests("/b/pixel"):  # another host never gets them
        assert "Cookie" not in h and "Authorization" not in h
    shot = sift.post(
        "/v2/scrape",
        {
            "url": url,
            "headers": secret,
            "formats": ["markdown", "screenshot"],
            "actions": [
                {"type": "click", "selector": "#more"},
                {"type": "wait", "milliseconds": 200},
            ],
        },
    )
    assert shot.status == 200, shot.body
    data = shot.json["data"]
    assert "Members-only text shown after the button was clicked" in data["markdown"]
    assert data["screenshot"].startswith("data:image/png;base64,")
    assert renders(sift) == before + 2
    # nothing of it was kept: the same URL without the headers is the stranger's page
    for asked in ({"render": True}, {}):
        r = sift.fetch(url, **asked)
        assert r.status == 200, r.body
        assert "Welcome back" not in r.json["content"] and "stranger" in r.json["content"]
    again = sift.fetch(url, headers=secret, render=True)
    assert again.json["cached"] is False and "Welcome back" in again.json["content"]


def test_scrape_actions_and_their_limits(make_sift, origin):
    origin.set(
        "/b/click",
        """<html><head><title>Click</title></head><body><button id="more">more</button>
<div id="out"></div><script>
document.getElementById('more').onclick = () => { document.getElementById('out').innerHTML =
  '<p>' + 'Text that appears only after the button was clicked. '.repeat(6) + '</p>'; };
</script></body></html>""",
    )
    sift = make_sift({"guard": GUARD, "render": {**RENDER, "auto": False}})
    url = origin.url("/b/click")
    bad = sift.post("/v2/scrape", {"url": url, "actions": [{"type": "executeJavascript"}]})
    assert bad.status == 400 and "executeJavascript" in bad.json["error"]
    body = {
        "url": url,
        "actions": [{"type": "click", "selector": "#more"}, {"type": "wait", "milliseconds": 200}],
    }
    r = sift.post("/v2/scrape", body)
    assert r.status == 200, r.body
    assert "appears only after the button was clicked" in r.json["data"]["markdown"]


def test_render_slots_are_busy_per_caller(make_sift, origin):
    slow = f'<img src="{origin.url("/slow")}?secs=30"></body>'
    origin.set("/b/busy", SCRIPT_PAGE.replace("</body>", slow))
    sift = make_sift({"guard": GUARD, "render": {**RENDER, "deadline": "5s", "auto": False}})
    results: list[int] = []
    t = threading.Thread(
        target=lambda: results.append(sift.fetch(origin.url("/b/busy"), render=True).status)
    )
    t.start()
    time.sleep(1.0)
    second = sift.post("/v2/scrape", {"url": origin.url("/b/busy"), "formats": ["screenshot"]})
    other = sift.fetch(origin.url("/b/busy"), render=True, token=RESTRICTED_TOKEN)
    t.join()
    assert results == [200]
    assert second.status == 429  # this caller's render is in flight
    assert second.headers.get("Retry-After")
    assert other.status == 503, other.body  # every slot is taken
    assert other.headers.get("Retry-After") and "slots busy" in other.json["error"]


def test_cli_fetch_render_in_process(tmp_path, origin):
    import json
    import subprocess
    import sys

    origin.set("/b/cli", SCRIPT_PAGE)
    cfg = tmp_path / "sift.toml"
    cfg.write_text(
        f'state_dir = "{tmp_path / "state"}"\n[guard]\nallow_prefixes = ["127.0.0.1/32"]\n'
        f'[render]\nbrowser = "{BROWSER}"\nauto = false\n'
    )
    env = {k: v for k, v in os.environ.items() if not k.startswith("SIFT_")}
    base = [sys.executable, "-m", "sift", "--config", str(cfg), "fetch", "--json"]
    static = subprocess.run(
        [*base, origin.url("/b/cli")], capture_output=True, text=True, env=env, timeout=120
    )
    assert static.returncode == 0, static.stderr
    assert json.loads(static.stdout)["hint"] == "browser"
    out = subprocess.run(
        [*base, "--render", origin.url("/b/cli")],
        capture_output=True,
        text=True,
        env=env,
        timeout=120,
    )
    assert out.returncode == 0, out.stderr
    assert "quick brown fox" in json.loads(out.stdout)["content"]


NETNS_SNIPPET = """
import json, socket, tempfile, threading
from pathlib import Path
from tests.support.origin import Origin
from tests.support.sift_server import SiftServer

seen = {}
def sentinel(ip, port):
    s = socket.socket(); s.bind((ip, port)); s.listen(8); seen[f"{ip}:{port}"] = 0
    def accept():
        while True:
            c, _ = s.accept(); seen[f"{ip}:{port}"] += 1; c.close()
    threading.Thread(target=accept, daemon=True).start()

sentinel("169.254.169.254", 80)
sentinel("10.0.0.5", 80)
origin = Origin("127.0.0.1").start()
origin.set("/page", '''<html><body><div id="app"></div>
<img src="http://10.0.0.5/pixel.png">
<script>
fetch('http://169.254.169.254/latest/meta-data/').catch(() => {});
fetch('http://metadata.test/latest/meta-data/').catch(() => {});
document.getElementById('app').innerHTML = '<p>' +
  'A page that reaches for the cloud metadata service. '.repeat(6) + '</p>';
</script></body></html>''')
sift = SiftServer(Path(tempfile.mkdtemp()), {
    "guard": {"allow_prefixes": ["127.0.0.1/32"]},
    "render": {"enabled": True, "browser": "/usr/bin/chromium"},
}).start()
try:
    r = sift.fetch(origin.url("/page"), render=True)
    print(json.dumps({"status": r.status, "env": r.json, "seen": seen}))
finally:
    sift.stop()
    origin.stop()
"""


def test_private_and_metadata_addresses_in_a_namespace():
    from tests.support import netns

    netns.require_netns()
    out = netns.run_json(
        NETNS_SNIPPET,
        addresses=["169.254.169.254", "10.0.0.5"],
        hosts={"metadata.test": "169.254.169.254"},
        timeout=120,
    )
    assert out["status"] == 200, out
    assert "cloud metadata service" in out["env"]["content"]
    assert out["seen"] == {"169.254.169.254:80": 0, "10.0.0.5:80": 0}
    warning = out["env"]["warning"]
    assert "link-local address 169.254.169.254" in warning
    assert "private address 10.0.0.5" in warning
    assert "metadata.test (link-local address 169.254.169.254)" in warning


def test_mcp_fetch_tool_renders(make_sift, origin):
    import anyio

    from tests.support.mcp_client import stdio_client, text

    origin.set("/b/mcp", SCRIPT_PAGE)
    sift = make_sift({"guard": GUARD, "render": {**RENDER, "auto": False}})

    async def main() -> None:
        async with stdio_client(sift.url) as client:
            static = await client.call_tool("fetch", {"url": origin.url("/b/mcp")})
            assert "quick brown fox" not in text(static)
            r = await client.call_tool("fetch", {"url": origin.url("/b/mcp"), "render": True})
            assert "quick brown fox was rendered by JavaScript" in text(r)

    anyio.run(main)


def test_what_the_browser_receives_is_capped(make_sift, origin):
    big = f'<iframe src="{origin.url("/big")}?mb=4"></iframe></body>'
    origin.set("/b/capped", SCRIPT_PAGE.replace("</body>", big))
    sift = make_sift({"guard": GUARD, "render": {**RENDER, "max_bytes": "1MB", "auto": False}})
    r = sift.fetch(origin.url("/b/capped"), render=True)
    assert r.status == 200, r.body
    assert "quick brown fox" in r.json["content"]
    assert "byte cap" in r.json["warning"]
