"""`sift read` and `sift verify` against a running sift (issue 36): the read of five sources
within its budget, the blocked one a warning, a cited passage verified, a near-miss not."""

from __future__ import annotations

import json
import re
import shlex

from sift.documents import tokens
from tests.support.read_corpus import BLOCKED, FACTS, QUESTION, install
from tests.support.seam_doors import cli
from tests.support.sift_server import FLEET_TOKEN


def test_sift_read_answers_within_the_budget_and_its_citations_verify(sift, origin):
    urls = install(origin)
    args = ["read", *urls, "-q", QUESTION, "--max-tokens", "3000"]
    shown = cli(sift.url, FLEET_TOKEN, *args)
    assert shown.returncode == 0, shown.stderr
    assert tokens.count(shown.stdout.rstrip("\n")) <= 3000
    assert f"sift: warning: source 4 ({BLOCKED}): 403 blocked: " in shown.stderr
    assert "cut; the rest with sift fetch " in shown.stderr
    run = cli(sift.url, FLEET_TOKEN, *args, "--json")
    answer = json.loads(run.stdout)
    assert answer["tokens"] <= 3000 and answer["content"] == shown.stdout.rstrip("\n")
    for planted in FACTS:
        p = next(p for p in answer["passages"] if planted.fact in p["text"])
        ok = cli(
            sift.url, FLEET_TOKEN, "verify", p["url"], planted.fact, "--hash", p["content_hash"]
        )
        assert ok.returncode == 0, ok.stderr
        assert ok.stdout.startswith("found (exact) at ") and "unchanged" in ok.stdout
    near = FACTS[0].fact.replace("1887", "1888")
    miss = cli(sift.url, FLEET_TOKEN, "verify", urls[0], near)
    assert miss.returncode == 1 and miss.stderr.startswith("sift: not found in "), miss.stderr


def test_sift_read_of_only_failed_sources_exits_1_with_the_error(sift):
    run = cli(sift.url, FLEET_TOKEN, "read", BLOCKED)
    assert run.returncode == 1
    assert run.stderr.startswith("sift: blocked: ") and run.stderr.count("\n") == 1, run.stderr


def test_a_bad_read_is_one_line_and_exit_1(sift):
    run = cli(sift.url, FLEET_TOKEN, "read", "http://127.0.0.1/", "--max-tokens", "5")
    assert run.returncode == 1 and "`max_tokens`" in run.stderr and run.stderr.count("\n") == 1


def test_a_cut_source_read_in_a_page_range_is_continued_in_that_range(sift, origin):
    """The continuation `sift read` prints is a command that reads on in the text the source
    was read in: with its `--pages`, as `sift fetch`'s own `--offset` counts there."""
    pdf = install(origin)[-1]
    args = ["read", pdf, "--pages", "20-30", "-q", QUESTION, "--max-tokens", "300"]
    shown = cli(sift.url, FLEET_TOKEN, *args)
    assert shown.returncode == 0, shown.stderr
    said = re.search(r"sift: source 1 cut; the rest with sift (fetch .*)", shown.stderr)
    assert said is not None, shown.stderr
    rest = cli(sift.url, FLEET_TOKEN, *shlex.split(said.group(1)), "--server", sift.url)
    assert rest.returncode == 0, rest.stderr
    pages = {int(n) for n in re.findall(r"^--- page (\d+) ---$", rest.stdout, re.MULTILINE)}
    assert pages and pages <= set(range(20, 31)), (said.group(1), sorted(pages))
