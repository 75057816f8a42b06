"""`sift extract` of a cached PDF starts like a tool (issue 38): the process imports what a
read of the page cache needs and none of the modules of the service, the fetch, the cleaner,
the PDF child or the browser. A real CLI process runs `sift.cli.main` and then tells which
modules it holds; how long it takes is the bench's row 5b, not a test's."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

from tests.support.pdfs import PHRASES, three_page_pdf

# Each is imported by another path only: the service (tornado, pykka), a fetch (pycurl,
# urllib.request by robots.txt), the cleaner (trafilatura, lxml, charset_normalizer), the PDF
# child (pypdfium2), the browser (playwright); the service and the store's queries.
NOT_ON_THE_CACHED_PATH = (
    "tornado",
    "pykka",
    "pycurl",
    "urllib.request",
    "trafilatura",
    "lxml",
    "charset_normalizer",
    "pypdfium2",
    "playwright",
    "sift.service.services",
    "sift.store.sqlite.store",
    # the other commands' parsers and the HTTP client (`sift extract` builds its own parser)
    "sift.cli.batch",
    "sift.cli.read",
    "sift.client",
)
# What only the envelope of `--json` needs: the citations of grep hits and their quotes.
ONLY_FOR_THE_ENVELOPE = ("sift.service.answer.citations", "sift.documents.quotes")
# What the start of a cached read once paid for and uses none of (issue 38): `threading` (for
# the tokenizer's lock), `shutil` with the compression modules it loads (argparse asks it the
# terminal's width), `typing_extensions` (msgspec's import reads annotations with typing), the
# JSON printer of `--json` (the page cache's meta is decoded by msgspec), the clean worker's
# protocol and its `subprocess`, and the callers' table with its `hmac`; and `dataclasses` with
# the `inspect`, `ast` and `dis` it imports (the records a cached read holds are msgspec
# Structs).
NOT_AT_START = (
    "threading",
    "shutil",
    "bz2",
    "lzma",
    "typing_extensions",
    "json",
    "subprocess",
    "sift.clean.protocol",
    "hmac",
    "dataclasses",
    "inspect",
    "ast",
    "dis",
)
# The command, then what the process holds: its modules, and whether it loaded the tokenizer
# (only to print a count, `--json`).
RUN = """
import sys
from sift.cli.main import main
code = main(sys.argv[2:])
tokens = sys.modules.get("sift.documents.tokens")
held = {"modules": sorted(sys.modules), "tokenizer": bool(tokens and tokens.loaded())}
import json
open(sys.argv[1], "w").write(json.dumps(held))
raise SystemExit(code)
"""


def _extract(tmp_path: Path, pdf: Path, *args: str) -> tuple[str, set[str], bool]:
    """What `sift extract PDF ARGS` printed (stdout, then stderr), the modules the process
    imported, and whether it loaded the tokenizer."""
    cfg, held = tmp_path / "sift.toml", tmp_path / "held.json"
    cfg.write_text(f'state_dir = "{tmp_path / "state"}"\n')
    env = {k: v for k, v in os.environ.items() if not k.startswith("SIFT_")}
    argv = ["-c", RUN, str(held), "--config", str(cfg), "extract", str(pdf), *args]
    done = subprocess.run(
        [sys.executable, *argv], capture_output=True, text=True, env=env, timeout=120
    )
    assert done.returncode == 0, done.stderr[-2000:]
    said = json.loads(held.read_text())
    return done.stdout + done.stderr, set(said["modules"]), said["tokenizer"]


def _heavy(imported: set[str], names: tuple[str, ...] = NOT_ON_THE_CACHED_PATH) -> list[str]:
    held = imported | {m.rsplit(".", i)[0] for m in imported for i in range(1, m.count(".") + 1)}
    return [name for name in names if name in held]


def test_a_cached_extract_imports_none_of_the_other_paths(tmp_path: Path) -> None:
    pdf = tmp_path / "paper.pdf"
    pdf.write_bytes(three_page_pdf())
    first, imported, _ = _extract(tmp_path, pdf, "--no-context", "--pages", "2")
    assert "sift.service.services" in imported  # the full path, which fills the cache
    again, imported, tokenizer = _extract(tmp_path, pdf, "--no-context", "--pages", "2")
    assert again == first and PHRASES[2] in again
    assert _heavy(imported) == []
    assert _heavy(imported, ONLY_FOR_THE_ENVELOPE) == []
    assert _heavy(imported, NOT_AT_START) == []
    assert not tokenizer  # the text alone: no count to print, none made up


def test_a_cached_extract_says_what_the_full_path_says(tmp_path: Path) -> None:
    """The text alone is built without the envelope: its stdout and stderr (a cut answer's
    warning and continuation) are the full path's."""
    pdf = tmp_path / "paper.pdf"
    pdf.write_bytes(three_page_pdf())
    args = ("--no-context", "--pages", "1-3", "--max-chars", "30")
    full, imported, _ = _extract(tmp_path, pdf, *args)
    assert "sift.service.services" in imported
    cached, imported, tokenizer = _extract(tmp_path, pdf, *args)
    assert "--offset 1" in full and "warning:" in full
    assert cached == full and _heavy(imported) == [] and not tokenizer


def test_a_cached_extract_as_json_counts_its_tokens(tmp_path: Path) -> None:
    pdf = tmp_path / "paper.pdf"
    pdf.write_bytes(three_page_pdf())
    first, _, _ = _extract(tmp_path, pdf, "--json", "--pages", "2")
    again, imported, tokenizer = _extract(tmp_path, pdf, "--json", "--pages", "2")
    assert json.loads(again)["cached"] is True
    assert json.loads(again)["tokens"] == json.loads(first)["tokens"] > 0  # exact, as ever
    assert tokenizer and _heavy(imported) == []


def test_a_fetch_through_a_server_loads_no_progress_bar(tmp_path: Path) -> None:
    """`sift fetch --server` (here to a port nobody listens on: the answer is an error) loads
    tqdm only to draw a bar, on a terminal after a second: it was a third of the start."""
    held = tmp_path / "held.json"
    env = {k: v for k, v in os.environ.items() if not k.startswith("SIFT_")}
    env["SIFT_TOKEN"] = "t"
    url = "http://127.0.0.1:9"
    argv = ["-c", RUN, str(held), "fetch", f"{url}/page", "--server", url]
    done = subprocess.run(
        [sys.executable, *argv], capture_output=True, text=True, env=env, timeout=120
    )
    assert done.returncode == 1 and "cannot reach the server" in done.stderr
    imported = set(json.loads(held.read_text())["modules"])
    assert "sift.cli.progress" in imported  # it waited the way a fetch waits
    assert _heavy(imported, ("tqdm", "typing_extensions", "tornado", "pykka", "pycurl")) == []


def test_help_is_as_wide_as_the_terminal() -> None:
    """Without `shutil` the width is still `$COLUMNS` (else the terminal's, else 80)."""
    env = {k: v for k, v in os.environ.items() if not k.startswith("SIFT_")}
    widths = {}
    for columns in ("40", "160", "x"):
        done = subprocess.run(
            [sys.executable, "-m", "sift", "extract", "--help"],
            capture_output=True,
            text=True,
            env={**env, "COLUMNS": columns},
            timeout=60,
        )
        assert done.returncode == 0, done.stderr
        widths[columns] = max(len(line) for line in done.stdout.splitlines())
    assert widths["40"] <= 38 < widths["x"] <= 78 < widths["160"] <= 158
