"""`sift read URL… [-q Q] [--max-tokens N]` and `sift verify URL QUOTE [--hash H]`: a read of
many sources within one budget, and a check of a quote, from a running sift (`--server` /
`$SIFT_URL`, else the configured `listen`; the token as for `sift fetch`).

`read` prints the answer; a source that failed is `sift: warning: source N …` on stderr, and
only a read whose every source failed exits 1. `verify` prints where the quote is and exits 0,
or says it is not there and exits 1.
"""

from __future__ import annotations

import argparse
import json
import os
import shlex
import sys
from typing import Any

from sift.cli import EXIT_ERROR
from sift.cli.progress import Waiting
from sift.client.http import find_token, request, server_url, unauthorized
from sift.core.config import Config


def add_parsers(sub: Any) -> None:
    common = argparse.ArgumentParser(add_help=False)
    common.add_argument("--server", default=os.environ.get("SIFT_URL"), help="sift server URL")
    common.add_argument("--json", action="store_true", help="print the server's JSON")
    r = sub.add_parser("read", parents=[common], help="read many URLs within one token budget")
    r.add_argument("urls", nargs="+", metavar="URL")
    r.add_argument("--question", "-q", metavar="Q", help="spend the budget on what answers Q")
    r.add_argument("--max-tokens", type=int, metavar="N", help="the budget (default [read])")
    r.add_argument("--pages", metavar="R", help="the page range of every source")
    v = sub.add_parser("verify", parents=[common], help="is this quote in the page?")
    v.add_argument("url")
    v.add_argument("quote")
    v.add_argument("--hash", metavar="H", help="the content_hash the citation names")
    v.add_argument("--refetch", action="store_true", help="ask the site again, not the cache")


def run(a: argparse.Namespace, cfg: Config) -> int:
    if a.command == "read":
        body: dict[str, Any] = {"urls": a.urls}
        for key in ("question", "max_tokens", "pages"):
            if getattr(a, key) is not None:
                body[key] = getattr(a, key)
        path = "/v1/read"
    else:
        body = {"url": a.url, "quote": a.quote, "refetch": a.refetch}
        if a.hash:
            body["content_hash"] = a.hash
        path = "/v1/verify"
    server = server_url(cfg, a.server)
    what = f"reading {len(a.urls)} sources" if a.command == "read" else f"verifying {a.url}"
    with Waiting(f"{what} (sift at {server})"):
        status, answer = request(server, find_token(cfg), "POST", path, body)
    if status == 401:
        answer = {**answer, "error": unauthorized(cfg, a.config)}
    if a.json:
        print(json.dumps(answer, ensure_ascii=False, indent=2))
    if status >= 400 or not answer.get("success"):
        hint = f" (hint: {answer['hint']})" if answer.get("hint") else ""
        print(f"sift: {answer.get('error', 'failed')}{hint}", file=sys.stderr)
        return EXIT_ERROR
    return _read(answer, a.json) if a.command == "read" else _verified(answer, a.json)


def _read(answer: dict[str, Any], as_json: bool) -> int:
    states = answer["sources"]
    failed = [s for s in states if s["status"] == "error"]
    if len(failed) == len(states):  # nothing read: the error of the (first) source
        err = failed[0]["error"]
        hint = f" (hint: {err['hint']})" if err.get("hint") else ""
        print(f"sift: {err['error']}{hint}", file=sys.stderr)
        return EXIT_ERROR
    if not as_json:
        text = answer["content"]
        sys.stdout.write(text if text.endswith("\n") else text + "\n")
    for n, s in enumerate(states, start=1):
        if s["status"] == "error":
            why = f"{s['code']} {s['error']['error']}"
            print(f"sift: warning: source {n} ({s['url']}): {why}", file=sys.stderr)
        elif s["status"] == "cut":
            print(f"sift: source {n} cut; the rest with {_read_on(s['next'])}", file=sys.stderr)
    return 0


def _read_on(nxt: dict[str, Any]) -> str:
    """The command that reads a cut source on: `--offset` counts in the text it was read in,
    so the range it was read in goes with it."""
    pages = f" --pages {shlex.quote(nxt['pages'])}" if nxt.get("pages") else ""
    return f"sift fetch {shlex.quote(nxt['url'])}{pages} --offset {nxt['offset']}"


def _verified(answer: dict[str, Any], as_json: bool) -> int:
    changed = {None: "", True: " · changed since that version", False: " · unchanged"}
    version = f"content_hash {answer['content_hash']}{changed[answer['changed']]}"
    if not answer["found"]:
        print(f"sift: not found in {answer['url']} ({version})", file=sys.stderr)
        return EXIT_ERROR
    if not as_json:
        part = f"{answer['unit']} {answer['part']}, " if answer.get("part") is not None else ""
        where = f"{part}characters {answer['start']}–{answer['end']}"
        print(f"found ({answer['match']}) at {where} · {version}")
    return 0
