"""The lazy browser (issue 37): no Chromium until the first render asks for one, the browser
given back after `[render] idle_after` without a render, and a render that comes while one is
being given back or started answered by the next browser. How much memory that saves is
`python -m bench --only idle`'s to say, not these tests'."""

from __future__ import annotations

import contextlib
import os
import signal
import threading
from collections.abc import Callable
from typing import Any

import psutil
import pytest

from tests.support.browser import BROWSER, GUARD, RENDER, SCRIPT_PAGE, launches
from tests.support.sift_server import FLEET_TOKEN, RESTRICTED_TOKEN
from tests.support.until import until

pytestmark = pytest.mark.skipif(
    not os.access(BROWSER, os.X_OK), reason="no chromium (apt-get install chromium)"
)


def browser_processes() -> dict[int, str]:
    """The browser child and its Chromium main processes started from this test process (sift
    runs in it): pid -> which."""
    found = {}
    for p in psutil.Process().children(recursive=True):
        with contextlib.suppress(psutil.Error):
            if p.status() == psutil.STATUS_ZOMBIE:
                continue
            cmd = p.cmdline()
            if "sift.browser.child" in cmd:
                found[p.pid] = "child"
            elif cmd and cmd[0].endswith("chromium") and not any("--type=" in a for a in cmd):
                found[p.pid] = "chromium"
    return found


def chromium() -> set[int]:
    return {pid for pid, which in browser_processes().items() if which == "chromium"}


def render_state(sift) -> dict[str, object]:
    r = sift.request("GET", "/healthz", token=None)
    assert r.status == 200, r.body
    return r.json["capabilities"]["render"]


def rendered(sift, url: str, token: str = FLEET_TOKEN) -> Any:
    r = sift.fetch(url, render=True, token=token)
    assert r.status == 200, r.body
    assert "quick brown fox" in r.json["content"]
    return r


@pytest.fixture
def page(origin) -> Callable[[], str]:
    """A script page at a new URL each time it is called (no render answered from cache)."""
    origin.set("/idle/page", SCRIPT_PAGE)
    count = iter(range(10**6))
    return lambda: origin.url(f"/idle/page?{next(count)}")


def test_no_browser_runs_until_the_first_render_asks_for_one(make_sift, origin, page):
    """sift serves, answers /healthz (render ready, no browser) and a static fetch without a
    browser process; today's main starts one with the server."""
    origin.set("/idle/static", "<html><body><p>" + "A page that needs no browser. " * 20)
    sift = make_sift({"guard": GUARD, "render": {**RENDER, "auto": False}})
    until(
        lambda: (
            sift.request("GET", "/healthz", token=None).json["capabilities"]["ocr"]["state"]
            != "checking"
        ),
        "the capabilities read",
    )
    assert sift.fetch(origin.url("/idle/static")).status == 200
    assert browser_processes() == {}, browser_processes()
    assert render_state(sift) == {"state": "ready", "browser": "idle"}
    started = launches(sift)
    rendered(sift, page())
    assert len(chromium()) == 1
    assert render_state(sift) == {"state": "ready", "browser": "running"}
    assert launches(sift) == started + 1


def test_an_idle_browser_is_given_back_and_the_next_render_starts_another(make_sift, page):
    sift = make_sift({"guard": GUARD, "render": {**RENDER, "auto": False, "idle_after": "1s"}})
    rendered(sift, page())
    until(lambda: render_state(sift)["browser"] == "idle", "the browser given back", 60)
    until(lambda: not browser_processes(), "every browser process gone", 30)
    started = launches(sift)
    rendered(sift, page())
    assert launches(sift) == started + 1
    until(lambda: not browser_processes(), "the second browser given back too", 60)


def test_a_render_while_the_browser_is_given_back_starts_the_next(make_sift, page):
    """The browser being given back is stopped (SIGSTOP), so its end takes until sift kills
    it: a render sent meanwhile is answered by a new browser, neither failing nor waiting for
    the old one, which is gone in the end."""
    sift = make_sift({"guard": GUARD, "render": {**RENDER, "auto": False, "idle_after": "3s"}})
    rendered(sift, page())
    (old,) = chromium()  # stopped well within the 3 s before the give-back
    os.kill(old, signal.SIGSTOP)
    try:
        until(lambda: render_state(sift)["browser"] == "idle", "the give-back begun", 60)
        assert psutil.pid_exists(old) and old in chromium()  # still closing
        rendered(sift, page())
        assert chromium() - {old}, "the render ran in a new browser"
    finally:
        with contextlib.suppress(ProcessLookupError):
            os.kill(old, signal.SIGCONT)
    until(lambda: old not in chromium(), "the old browser gone", 60)


def test_renders_that_come_while_the_browser_starts_wait_for_it(make_sift, page):
    """Two callers at once before any browser runs: one browser starts, both are answered."""
    sift = make_sift({"guard": GUARD, "render": {**RENDER, "auto": False, "slots": 2}})
    started = launches(sift)
    answers: dict[str, int] = {}

    def render(token: str) -> None:
        answers[token] = sift.fetch(page(), render=True, token=token).status

    threads = [threading.Thread(target=render, args=(t,)) for t in (FLEET_TOKEN, RESTRICTED_TOKEN)]
    for t in threads:
        t.start()
    for t in threads:
        t.join(120)
    assert answers == {FLEET_TOKEN: 200, RESTRICTED_TOKEN: 200}
    assert launches(sift) == started + 1
    assert len(chromium()) == 1
