"""The warm browser pool (issue 27): one Chromium serves many renders, each in a context of
its own; a browser that dies mid-render answers that render and the next one works; and what
a probe of the render path found (refusals named and counted, refusals inside the browser,
navigation after load, Chromium's own traffic)."""

from __future__ import annotations

import contextlib
import os
import signal
import threading
from collections.abc import Iterator

import psutil
import pytest

from tests.support.browser import BROWSER, GUARD, RENDER, SCRIPT_PAGE, Sentinel, launches
from tests.support.sift_server import RESTRICTED_TOKEN

pytestmark = pytest.mark.skipif(
    not os.access(BROWSER, os.X_OK), reason="no chromium (apt-get install chromium)"
)


@pytest.fixture
def sentinel() -> Iterator[Sentinel]:
    s = Sentinel()
    yield s
    s.close()


def browsers() -> set[int]:
    """Chromium's main processes started from this test process (sift runs in it)."""
    found = set()
    for p in psutil.Process().children(recursive=True):
        with contextlib.suppress(psutil.Error):
            cmd = p.cmdline()
            if (
                cmd
                and cmd[0].endswith("chromium")
                and not any(a.startswith("--type=") for a in cmd)
            ):
                found.add(p.pid)
    return found


def test_one_browser_serves_many_renders(make_sift, origin):
    origin.set("/p/many", SCRIPT_PAGE)
    sift = make_sift({"guard": GUARD, "render": {**RENDER, "auto": False}})
    started = launches(sift)
    pids = set()
    for i in range(5):
        r = sift.fetch(origin.url(f"/p/many?{i}"), render=True)
        assert r.status == 200, r.body
        assert "quick brown fox" in r.json["content"]
        pids |= browsers()
    assert len(pids) == 1, pids  # the same Chromium all along
    assert launches(sift) <= started + 1


def test_a_browser_is_recycled_after_its_renders(make_sift, origin):
    origin.set("/p/recycle", SCRIPT_PAGE)
    sift = make_sift({"guard": GUARD, "render": {**RENDER, "auto": False, "recycle_after": 2}})
    started = launches(sift)
    for i in range(4):
        r = sift.fetch(origin.url(f"/p/recycle?{i}"), render=True)
        assert r.status == 200, r.body
    assert launches(sift) >= started + 2


ALPHA = """<html><head><title>Alpha</title></head><body><p>alpha page</p><script>
document.cookie = 'secret=alpha-cookie; path=/';
localStorage.setItem('secret', 'alpha-storage');
sessionStorage.setItem('secret', 'alpha-session');
window.name = 'alpha-window';
const ch = new BroadcastChannel('secrets');
setInterval(() => ch.postMessage('alpha-message'), 20);
</script><img src="HOLD"></body></html>"""

BETA = """<html><head><title>Beta</title></head><body><div id="out">waiting</div><script>
const heard = [];
new BroadcastChannel('secrets').onmessage = (e) => heard.push(e.data);
let found = 'none';
try { const w = window.open('', 'alpha-window'); found = w ? String(w.location.href) : 'none'; }
catch (e) { found = 'error'; }
setTimeout(() => { document.getElementById('out').innerHTML = '<p>' + [
  'cookie=' + (document.cookie || 'empty'), 'storage=' + localStorage.getItem('secret'),
  'session=' + sessionStorage.getItem('secret'), 'window=' + found,
  'heard=' + (heard.join(',') || 'nothing')].join(' ; ') +
  '. Beta wrote this line after listening for a while, as the test asks it to. </p>'; }, 400);
</script></body></html>"""


def test_two_renders_at_once_never_see_each_other(make_sift, origin):
    """Two renders side by side in the one browser, of the same origin: the second sees none
    of the first's cookies, storage, windows or messages, and sends none of its cookies."""
    origin.set("/p/alpha", ALPHA.replace("HOLD", origin.url("/hold/alpha")))
    origin.set("/p/beta", BETA)
    sift = make_sift({"guard": GUARD, "render": {**RENDER, "auto": False, "slots": 2}})
    started = launches(sift)
    first: list[int] = []
    t = threading.Thread(
        target=lambda: first.append(sift.fetch(origin.url("/p/alpha"), render=True).status)
    )
    t.start()
    try:
        assert origin.wait_arrived("alpha", timeout=60)  # alpha's page is live, held
        for token in (RESTRICTED_TOKEN,):
            r = sift.fetch(origin.url("/p/beta"), render=True, wait_for=800, token=token)
            assert r.status == 200, r.body
            seen = r.json["content"]
            assert "cookie=empty" in seen and "storage=null" in seen and "session=null" in seen
            assert "heard=nothing" in seen and "alpha" not in seen, seen
            assert "/p/alpha" not in seen
    finally:
        origin.release("alpha")
        t.join(60)
    assert first == [200]
    assert "secret" not in origin.last_headers("/p/beta").get("Cookie", "")
    after = sift.fetch(origin.url("/p/beta?after"), render=True, wait_for=800)
    assert "cookie=empty" in after.json["content"] and "storage=null" in after.json["content"]
    assert launches(sift) <= started + 1  # one browser served all three


def test_a_browser_killed_mid_render_answers_it_and_the_next_render_works(make_sift, origin):
    origin.set(
        "/p/killed", SCRIPT_PAGE.replace("</body>", f'<img src="{origin.url("/hold/k")}"></body>')
    )
    origin.set("/p/next", SCRIPT_PAGE)
    sift = make_sift({"guard": GUARD, "render": {**RENDER, "auto": False}})
    answers = []
    t = threading.Thread(
        target=lambda: answers.append(sift.fetch(origin.url("/p/killed"), render=True))
    )
    t.start()
    try:
        assert origin.wait_arrived("k", timeout=60)
        (pid,) = browsers()
        os.kill(pid, signal.SIGKILL)
        t.join(60)
    finally:
        origin.release("k")
    (r,) = answers
    assert r.status == 503, r.body
    assert "crashed" in r.json["error"] and r.json["hint"] == "retry"
    again = sift.fetch(origin.url("/p/next"), render=True)
    assert again.status == 200, again.body
    assert "quick brown fox" in again.json["content"]


def test_many_refused_requests_name_every_host_counted(make_sift, origin, sentinel):
    """Over 100 refused requests (120 ports of one host, then another host) still name
    every refused host and reason, with counts, in a bounded warning."""
    last = sentinel.netloc.replace("127.0.0.2", "127.0.0.3")
    origin.set(
        "/p/scan",
        f"""<html><body><div id="app"></div><script>
for (let i = 0; i < 120; i++)
  fetch('http://127.0.0.2:' + (20000 + i) + '/scan').catch(() => {{}});
setTimeout(() => fetch('http://{last}/late').catch(() => {{}}), 300);
document.getElementById('app').innerHTML = '<p>' +
  'A page that scans ports from the browser. '.repeat(6) + '</p>';
</script></body></html>""",
    )
    sift = make_sift({"guard": GUARD, "render": {**RENDER, "auto": False}})
    r = sift.fetch(origin.url("/p/scan"), render=True, wait_for=1500)
    assert r.status == 200, r.body
    warning = r.json["warning"]
    assert "refused 121 request(s)" in warning, warning
    assert (
        "127.0.0.2:20000" in warning and "more port(s) (loopback address 127.0.0.2) ×120" in warning
    )
    assert "127.0.0.3:" in warning and "(loopback address 127.0.0.3)" in warning
    assert len(warning) < 1000


def test_refusals_inside_the_browser_are_named(make_sift, origin):
    origin.set(
        "/p/local",
        """<html><body><p>A page that reaches for local files and the browser's own pages,
which the browser refuses without asking the network.</p>
<img src="file:///etc/passwd"><iframe src="chrome://version"></iframe>
<iframe src="view-source:http://127.0.0.1/"></iframe></body></html>""",
    )
    sift = make_sift({"guard": GUARD, "render": {**RENDER, "auto": False}})
    r = sift.fetch(origin.url("/p/local"), render=True)
    assert r.status == 200, r.body
    warning = r.json["warning"]
    for url in ("file:///etc/passwd", "chrome://version", "view-source:http://127.0.0.1/"):
        assert url in warning, warning


def test_a_page_that_navigates_to_a_refused_address_after_load_is_refused(
    make_sift, origin, sentinel
):
    """Its answer is never the proxy's refusal page taken for its content."""
    s = sentinel
    origin.set(
        "/p/away",
        f"""<html><body><p>{"A page that goes somewhere else once it has loaded. " * 6}</p>
<script>setTimeout(() => {{ location = 'http://{s.netloc}/elsewhere'; }}, 100);</script>
</body></html>""",
    )
    sift = make_sift({"guard": GUARD, "render": {**RENDER, "auto": False}})
    r = sift.fetch(origin.url("/p/away"), render=True, wait_for=1500)
    assert r.status == 403, r.body
    assert s.netloc in r.json["error"]
    assert s.connections == 0


FORM = """<html><head><title>Form</title></head><body><form>
<input name="email" autocomplete="email"><input name="name" autocomplete="name">
<input type="password" name="pw"></form>
<p>A sign-up form, which wakes the browser's own autofill services if they are on.</p>
<script>document.body.innerHTML += '<p>rendered</p>';</script></body></html>"""


def test_chromium_makes_no_traffic_of_its_own(make_sift, origin):
    """Every name resolves to a refused address here, so any request the browser makes of
    its own (autofill, optimization hints, updates) would be named in the warning."""
    origin.set("/p/form", FORM)

    def resolver(host: str, port: int) -> list[str]:
        return ["127.0.0.1"] if host in ("127.0.0.1", "localhost") else ["127.0.0.9"]

    sift = make_sift({"guard": GUARD, "render": {**RENDER, "auto": False}}, resolver=resolver)
    for i in range(2):
        r = sift.fetch(origin.url(f"/p/form?{i}"), render=True, wait_for=1500)
        assert r.status == 200, r.body
        assert "warning" not in r.json, r.json["warning"]


def test_a_page_whose_script_never_returns_is_killed_and_the_browser_serves_on(make_sift, origin):
    """A page that hangs its renderer answers at the render's deadline (422, its context
    closed), and the next render works: on the same browser, or a fresh one if the hung
    one had to be killed."""
    origin.set("/p/spin", "<html><body><p>spin</p><script>while (true) {}</script></body></html>")
    origin.set("/p/after-spin", SCRIPT_PAGE)
    sift = make_sift({"guard": GUARD, "render": {**RENDER, "auto": False, "deadline": "3s"}})
    r = sift.fetch(origin.url("/p/spin"), render=True)
    assert r.status == 422, r.body
    assert "did not answer" in r.json["error"]
    again = sift.fetch(origin.url("/p/after-spin"), render=True)
    assert again.status == 200, again.body
    assert "quick brown fox" in again.json["content"]
