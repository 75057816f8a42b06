"""The CLI as a user meets it, as real processes: `serve --config --listen`, `--version`, the
banner's example from a shell outside the venv, a 401 that says where the token is,
`--max-chars` on the content, `batch submit` printing the id alone, and progress on a
terminal (a pty) but never on a pipe."""

from __future__ import annotations

import os
import pty
import re
import select
import subprocess
import sys
import time

from sift import __version__
from tests.support.pdfs import BIG_PAGES, PdfSet
from tests.support.processes import free_port, wait_healthy

SIFT = [sys.executable, "-m", "sift"]


def _env(**extra: str) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith("SIFT_")}
    return {**env, **extra}


def _run(args: list[str], **kw) -> subprocess.CompletedProcess[str]:
    kw.setdefault("env", _env())
    return subprocess.run(SIFT + args, capture_output=True, text=True, timeout=120, **kw)


def _on_a_tty(args: list[str], env: dict[str, str]) -> tuple[int, str, str]:
    """Run with stderr on a pseudo-terminal (stdout a pipe): (exit, stdout, what the tty got)."""
    master, slave = pty.openpty()
    proc = subprocess.Popen(SIFT + args, stdout=subprocess.PIPE, stderr=slave, env=env)
    os.close(slave)
    seen = b""
    deadline = time.monotonic() + 120
    while time.monotonic() < deadline:
        ready, _, _ = select.select([master], [], [], 0.2)
        if ready:
            try:
                chunk = os.read(master, 4096)
            except OSError:  # the child closed the terminal
                break
            if not chunk:
                break
            seen += chunk
        elif proc.poll() is not None:
            break
    with proc:
        out = proc.stdout.read().decode() if proc.stdout else ""
    os.close(master)
    return proc.returncode, out, seen.decode(errors="replace")


def test_version():
    out = _run(["--version"])
    assert out.returncode == 0 and out.stdout.strip() == f"sift {__version__}"


def test_serve_takes_config_and_listen_after_the_subcommand_and_its_banner_works(tmp_path, origin):
    port = free_port()
    cfg = tmp_path / "sift.toml"
    state = tmp_path / "state"
    cfg.write_text(f'state_dir = "{state}"\n[guard]\nallow_prefixes = ["127.0.0.0/8"]\n')
    proc = subprocess.Popen(
        [*SIFT, "serve", "--config", str(cfg), "--listen", f"127.0.0.1:{port}"],
        stderr=subprocess.PIPE,
        text=True,
        env=_env(),
    )
    try:
        wait_healthy(f"http://127.0.0.1:{port}", proc)
        assert proc.stderr is not None
        banner: list[str] = []
        while not banner or " fetch https://" not in banner[-1]:
            banner.append(proc.stderr.readline())
        assert (state / "token").exists()
        example = banner[-1].strip()
        curl = "".join(banner[banner.index("try:\n") + 1 :][:2]).replace("\\\n", " ")
        # The banner's commands, from a shell whose PATH has no venv, on a local URL.
        bare = {"PATH": "/usr/bin:/bin", "HOME": str(tmp_path)}
        for command in (example, curl):
            line = command.replace("https://example.com/", origin.url("/article"))
            line = (
                line.replace(" fetch ", f" --config {cfg} fetch ", 1)
                if "curl" not in line
                else line
            )
            out = subprocess.run(
                ["sh", "-c", line], capture_output=True, text=True, env=bare, timeout=60
            )
            assert out.returncode == 0, (line, out.stderr)
            assert "Source: " in out.stdout
    finally:
        proc.terminate()
        proc.wait(30)
        if proc.stderr:
            proc.stderr.close()


def test_unauthorized_says_where_the_token_is(served):
    _proc, base, cfg, state = served
    out = _run(
        ["--config", str(cfg), "fetch", "http://127.0.0.1/"],
        env=_env(SIFT_URL=base, SIFT_TOKEN="wrong"),
    )
    assert out.returncode == 1
    assert "unauthorized" in out.stderr and str(state / "token") in out.stderr
    assert f"config {cfg}" in out.stderr  # and the config it used (DESIGN §5)
    out = _run(
        ["--config", str(cfg), "batch", "status", "x"], env=_env(SIFT_URL=base, SIFT_TOKEN="wrong")
    )
    assert str(state / "token") in out.stderr and f"config {cfg}" in out.stderr
    out = _run(["read", "http://127.0.0.1/"], env=_env(SIFT_URL=base, SIFT_TOKEN="wrong"))
    assert out.returncode == 1 and "config none: the built-in defaults" in out.stderr


def test_max_chars_caps_the_content_not_the_header(served, origin):
    _proc, base, cfg, _state = served
    out = _run(
        ["--config", str(cfg), "fetch", "--max-chars", "120", origin.url("/article")],
        env=_env(SIFT_URL=base),
    )
    assert out.returncode == 0, out.stderr
    head, _, text = out.stdout.partition("\n\n")
    assert head.startswith("# ") and "Source: " in head
    assert 0 < len(text.rstrip("\n")) <= 120


def test_batch_submit_prints_the_id_alone(served, origin, tmp_path):
    _proc, base, cfg, _state = served
    targets = tmp_path / "urls.txt"
    targets.write_text(origin.url("/text?submit-id") + "\n")
    script = f"id=$({' '.join(SIFT)} --config {cfg} batch submit {targets}) && " + (
        f'{" ".join(SIFT)} --config {cfg} batch wait --interval 0.2 "$id"'
    )
    out = subprocess.run(
        ["sh", "-c", script], capture_output=True, text=True, env=_env(SIFT_URL=base), timeout=120
    )
    assert out.returncode == 0, out.stderr
    assert re.search(r"^job \S+: done", out.stdout, re.MULTILINE)


def test_progress_on_a_terminal_only(served, origin):
    _proc, base, cfg, _state = served
    args = ["--config", str(cfg), "fetch", "--server", base, origin.url("/slow?secs=3")]
    code, _out, tty = _on_a_tty(args, _env())
    assert "fetching" in tty and "00:0" in tty, (code, _out[:300], tty)  # spinner, elapsed
    piped = _run(args)
    assert "fetching" not in piped.stderr  # quiet when stderr is not a terminal
    assert code == piped.returncode


def test_read_and_verify_show_progress_on_a_terminal_only(served, origin):
    """`sift read` and `sift verify` wait on the server as `sift fetch` does: a spinner after a
    second on a terminal, nothing on a pipe."""
    _proc, base, cfg, _state = served
    slow = origin.url("/slow?secs=3")
    again = origin.url("/slow?secs=3&not=cached")
    for args, label in ((["read", slow], "reading"), (["verify", again, "slow"], "verifying")):
        argv = ["--config", str(cfg), *args, "--server", base]
        code, _out, tty = _on_a_tty(argv, _env())
        assert label in tty and "00:0" in tty, (argv, code, tty)
        piped = _run(argv)
        assert label not in piped.stderr and code == piped.returncode


def test_pdf_pages_progress_in_process(tmp_path, pdfs: PdfSet):
    """The progress line shows after 1 s of waiting: one child on 2,100 pages takes several
    (900 pages on two children once took under a second here, and showed none)."""
    pdf = tmp_path / "big.pdf"
    pdf.write_bytes(pdfs.big)
    cfg = tmp_path / "sift.toml"
    cfg.write_text(f'state_dir = "{tmp_path / "state"}"\n[pdf]\nchildren = 1\n')
    code, out, tty = _on_a_tty(
        ["--config", str(cfg), "extract", "--max-chars", "200", str(pdf)], _env()
    )
    assert code == 0, tty
    assert f"{BIG_PAGES} pages" in out
    assert re.search(rf"\d+/{BIG_PAGES} pages", tty), tty[-2000:]


def test_batch_ids_that_start_with_a_dash_are_ids_not_options(served):
    """Older sifts made job ids such as `-Xq3…`; every id command takes them as the id (the
    server then answers for that job: here, that there is none), never as an unknown option."""
    _proc, base, cfg, _state = served
    dash, like_help = "-Xq3bCdEfGhIjKlM", "-hq3bCdEfGhIjKlM"
    for args in (
        ["status", dash],
        ["status", "--results", like_help],
        ["get", dash, "0"],
        ["cancel", dash],
        ["wait", "--interval", "0.2", like_help, "--json"],
    ):
        out = _run(["--config", str(cfg), "batch", *args], env=_env(SIFT_URL=base))
        assert out.returncode == 1, (args, out.stderr)
        assert "no such batch job" in out.stderr, (args, out.stderr)
