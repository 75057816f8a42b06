"""/healthz names each capability (render, OCR and its languages, search, model, store) with no
secret in it, and `sift serve` prints the same lines at start (issue 37): a host where Chromium
or Tesseract could not be installed says so at run time."""

from __future__ import annotations

import shutil
import subprocess

import pytest

from tests.support.sift_server import http_call
from tests.support.until import until

SECRET_SEARX = "http://searx-user:searx-pass@127.0.0.1:9/"
SECRET_MODEL = "http://model-user:model-pass@127.0.0.1:9/v1"
TESSERACT = shutil.which("tesseract")


def _capabilities(sift) -> dict[str, dict[str, object]]:
    r = sift.request("GET", "/healthz", token=None)
    assert r.status == 200, r.body
    return r.json["capabilities"]


def test_healthz_keeps_its_fields_and_adds_the_capabilities(make_sift):
    sift = make_sift({"ocr": {"tesseract": "/nonexistent/tesseract"}, "render": {"enabled": False}})
    r = sift.request("GET", "/healthz", token=None)
    assert r.status == 200
    assert {"ok", "version", "uptime_s", "store", "workers", "search"} <= set(r.json)
    assert r.json["capabilities"] == {
        "render": {"state": "off"},
        "ocr": {"state": "not installed"},
        "search": {"state": "not configured"},
        "model": {"state": "not configured"},
        "store": {"state": "ok", "backend": "sqlite"},
    }


def test_configured_search_and_model_are_named_without_their_urls(make_sift):
    sift = make_sift(
        {
            "search": {"searxng_url": SECRET_SEARX},
            "digest": {"endpoint": SECRET_MODEL, "model": "m", "api_key_env": "SIFT_TEST_KEY"},
            "render": {"enabled": True, "browser": "/nonexistent/chromium"},
        }
    )
    r = sift.request("GET", "/healthz", token=None)
    can = r.json["capabilities"]
    assert can["search"] == {"state": "configured"} and can["model"] == {"state": "configured"}
    assert can["render"] == {"state": "not installed"}
    for secret in ("searx-pass", "model-pass", "searx-user", "model-user", "SIFT_TEST_KEY"):
        assert secret.encode() not in r.body


@pytest.mark.skipif(TESSERACT is None, reason="Tesseract is not installed")
def test_ocr_names_the_languages_tesseract_lists(make_sift):
    listed = subprocess.run(
        [str(TESSERACT), "--list-langs"], capture_output=True, text=True, check=True
    )
    languages = listed.stdout.splitlines()[1:]
    sift = make_sift()
    until(lambda: _capabilities(sift)["ocr"]["state"] != "checking", "languages read")
    assert _capabilities(sift)["ocr"] == {"state": "ready", "languages": languages}
    wanted = make_sift({"ocr": {"languages": "eng+xx_missing"}})
    until(lambda: _capabilities(wanted)["ocr"]["state"] != "checking", "languages read")
    ocr = _capabilities(wanted)["ocr"]
    assert ocr["state"] == "language not installed" and ocr["missing"] == ["xx_missing"]


def test_sift_serve_prints_the_capabilities_healthz_reports(served):
    proc, base, _cfg, _state = served
    printed: list[str] = []
    while not any(line.strip().startswith("store:") for line in printed):
        line = proc.stderr.readline()
        assert line, "sift serve ended its output before the capabilities"
        printed.append(line.rstrip("\n"))
    can = http_call(base, "GET", "/healthz", token=None).json["capabilities"]
    shown = [line.strip() for line in printed if line.startswith("  ")]
    assert [line.split(":")[0] for line in shown] == list(can)
    for line, (name, value) in zip(shown, can.items(), strict=True):
        assert line.startswith(f"{name}: {value['state']}")
        for detail in value.get("languages", []):
            assert detail in line
    assert shown[-1] == "store: ok (backend: sqlite)"
