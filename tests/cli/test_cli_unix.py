"""The CLI as a Unix tool (issue 37): `--config` after any command as before it, and a reader
that leaves early (`sift batch status --results | head`) ends the command quietly, not with
"cannot reach the server: Broken pipe"."""

from __future__ import annotations

import fcntl
import os
import subprocess
import sys
from pathlib import Path

import pytest

from tests.support.processes import Served

SMALL_PIPE = 4096
BAD = "[fetch]\ntimeout = 0\n"


@pytest.mark.parametrize(
    "argv",
    [
        ("fetch", "--config", "{cfg}", "https://example.com/"),
        ("extract", "--config", "{cfg}", "{cfg}"),
        ("batch", "status", "--config", "{cfg}", "some-id"),
        ("batch", "--config", "{cfg}", "wait", "some-id"),
        ("mcp", "--config", "{cfg}"),
        ("serve", "--config", "{cfg}"),
    ],
)
def test_config_is_taken_after_every_command(tmp_path, argv):
    cfg = tmp_path / "bad.toml"
    cfg.write_text(BAD)
    env = {k: v for k, v in os.environ.items() if not k.startswith("SIFT_")}
    done = subprocess.run(
        [sys.executable, "-m", "sift", *(a.format(cfg=cfg) for a in argv)],
        capture_output=True,
        text=True,
        env=env,
        timeout=60,
        stdin=subprocess.DEVNULL,
    )
    assert done.returncode == 2, done.stderr
    assert "`fetch.timeout` must be more than 0" in done.stderr, done.stderr


def _first_line_then_leave(argv: list[str], env: dict[str, str] | None = None) -> tuple[int, str]:
    """Run `argv` into a small pipe, read its start and close it, as `| head -1` does."""
    read_end, write_end = os.pipe()
    fcntl.fcntl(write_end, fcntl.F_SETPIPE_SZ, SMALL_PIPE)
    proc = subprocess.Popen(argv, stdout=write_end, stderr=subprocess.PIPE, text=True, env=env)
    os.close(write_end)
    assert os.read(read_end, 64)  # the first bytes, the rest left in the pipe
    os.close(read_end)
    _, err = proc.communicate(timeout=60)
    return proc.returncode, err


def test_batch_results_into_head_is_not_a_server_error(tmp_path: Path, origin):
    page = "<html><body><article>" + "<p>A line of the page's text.</p>" * 1500
    origin.set("/long", (page + "</article></body></html>").encode(), "text/html")
    served = Served(tmp_path).start()
    try:
        urls = "".join(f"{origin.url('/long')}?n={n}\n" for n in range(3))
        job = served.cli("submit", "-", stdin=urls)
        assert job.returncode == 0, job.stderr
        job_id = job.stdout.strip()
        assert served.cli("wait", job_id).returncode == 0
        argv = [sys.executable, "-m", "sift", "batch", "status", "--results", job_id]
        rc, err = _first_line_then_leave(argv, served.env)
        assert "Broken pipe" not in err and "cannot reach" not in err, err
        assert rc == 141, err
    finally:
        served.stop()
