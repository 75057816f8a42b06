"""`sift batch`: submit a list of targets to a sift server, follow the job, collect results.

    sift batch submit <file|->        a JSON {"targets": […]} / list, or one URL a line
    sift batch status [--results] ID  the summary (with every result)
    sift batch get ID IDX             one target's result
    sift batch cancel ID
    sift batch wait ID                poll until the job ends (a progress bar on a terminal)

Batch always talks to a server (`--server` / `$SIFT_URL`, else the configured `listen`); the
token comes from `$SIFT_TOKEN` or the state directory, as for `sift fetch`.
"""

from __future__ import annotations

import argparse
import json
import os
import re
import sys
import time
import urllib.parse
from pathlib import Path
from typing import Any

import msgspec

from sift.cli import EXIT_ERROR
from sift.client.http import find_token, request, server_url, unauthorized
from sift.core.config import Config
from sift.core.envelope import Envelope

LIVE = ("queued", "running")
# A job id: 16 URL-safe characters. Older sifts made ids that could start with "-" (jobs.db
# keeps them for `[batch] ttl`).
JOB_ID = re.compile(r"[\w-]{16}", re.ASCII)


class IdParser(argparse.ArgumentParser):
    """Reads a job id that starts with '-' (`sift batch status -Xq3…`) as the id, where plain
    argparse would take it for an unknown option; the options themselves are unaffected."""

    def _parse_optional(self, arg_string: str) -> Any:
        if JOB_ID.fullmatch(arg_string) and arg_string not in self._option_string_actions:
            return None  # a positional
        return super()._parse_optional(arg_string)


def add_parser(sub: Any) -> None:
    common = argparse.ArgumentParser(add_help=False)
    common.add_argument("--server", default=os.environ.get("SIFT_URL"), help="sift server URL")
    common.add_argument("--json", action="store_true", help="print the server's JSON")
    b = sub.add_parser("batch", help="fetch a list of URLs in the background")
    bs = b.add_subparsers(dest="batch_command", required=True, parser_class=IdParser)
    s = bs.add_parser("submit", parents=[common], help="submit targets; prints the job id alone")
    s.add_argument(
        "file", help='targets: JSON {"targets": [...]}, a JSON list, or URL lines; - reads stdin'
    )
    st = bs.add_parser("status", parents=[common], help="a job's summary")
    st.add_argument("--results", action="store_true", help="include every result")
    st.add_argument("job_id")
    g = bs.add_parser("get", parents=[common], help="one target's result")
    g.add_argument("job_id")
    g.add_argument("idx", type=int)
    c = bs.add_parser("cancel", parents=[common], help="stop a job before its next target")
    c.add_argument("job_id")
    w = bs.add_parser("wait", parents=[common], help="wait for a job to end, then summarise")
    w.add_argument("job_id")
    w.add_argument("--interval", type=float, default=2.0, help="seconds between polls")
    w.add_argument("--timeout", type=float, help="give up after this many seconds")


def read_targets(text: str) -> list[dict[str, Any]]:
    """Targets from a file's text: {"targets": [...]}, a JSON list, or one URL a line."""
    try:
        data = json.loads(text)
    except ValueError:
        lines = (line.strip() for line in text.splitlines())
        return [{"url": line} for line in lines if line and not line.startswith("#")]
    if isinstance(data, dict) and "targets" in data:
        data = data["targets"]
    if not isinstance(data, list):
        raise ValueError('expected {"targets": [...]}, a JSON list, or one URL a line')
    return [{"url": t} if isinstance(t, str) else t for t in data]


def _fail(body: Any) -> int:
    hint = f" (hint: {body['hint']})" if body.get("hint") else ""
    print(f"sift: {body.get('error', 'failed')}{hint}", file=sys.stderr)
    return EXIT_ERROR


def summary_lines(job: dict[str, Any]) -> list[str]:
    head = (
        f"job {job['job_id']}: {job['status']} · {job['targets_done']}/{job['targets_total']} "
        f"done · created {job['created_at']} · kept until {job.get('expires_at', '?')}"
    )
    lines = [head] + ([f"  {job['error']}"] if job.get("error") else [])
    for t in job["targets"]:
        why = f" — {t['error']}" if t.get("error") else ""
        hint = f" (hint: {t['hint']})" if t.get("hint") else ""
        lines.append(f"  {t['idx']:>2}  {t['status']:<7}  {t['url']}{why}{hint}")
    return lines


def _content(result: Any) -> str:
    """The text of a target's answer, as stored (nothing for what is not a fetch's answer)."""
    try:
        text = msgspec.convert(result, Envelope).content
    except msgspec.ValidationError:
        text = ""
    return text if text.endswith("\n") else text + "\n"


def _progress(job: dict[str, Any], tty: bool, last: tuple[int, str] | None) -> tuple[int, str]:
    done, total, status = job["targets_done"], job["targets_total"], job["status"]
    if tty:
        filled = 30 * done // max(total, 1)
        bar = "#" * filled + "." * (30 - filled)
        sys.stderr.write(f"\r[{bar}] {done}/{total} targets · {status} ")
        sys.stderr.flush()
    elif (done, status) != last:
        print(f"{done}/{total} targets done · {status}", file=sys.stderr, flush=True)
    return done, status


def wait(server: str, token: str | None, a: argparse.Namespace) -> tuple[int, Any]:
    """Poll the job until it ends (or `--timeout`); the last answer."""
    tty = sys.stderr.isatty()
    started, last = time.monotonic(), None
    while True:
        status, job = request(server, token, "GET", f"/v1/batch/{a.job_id}")
        if status != 200:
            break
        last = _progress(job, tty, last)
        if job["status"] not in LIVE:
            break
        if a.timeout is not None and time.monotonic() - started >= a.timeout:
            status, job = 408, {"error": f"job still {job['status']} after {a.timeout:.0f} s"}
            break
        time.sleep(a.interval)
    if tty and last is not None:
        sys.stderr.write("\n")
    return status, job


def run(a: argparse.Namespace, cfg: Config) -> int:
    server = server_url(cfg, a.server)
    token = find_token(cfg)
    job_path = f"/v1/batch/{urllib.parse.quote(getattr(a, 'job_id', ''), safe='')}"
    if a.batch_command == "submit":
        text = sys.stdin.read() if a.file == "-" else Path(a.file).read_text(encoding="utf-8")
        try:
            targets = read_targets(text)
        except ValueError as exc:
            print(f"sift: {exc}", file=sys.stderr)
            return EXIT_ERROR
        status, body = request(server, token, "POST", "/v1/batch", {"targets": targets})
    elif a.batch_command == "status":
        status, body = request(server, token, "GET", job_path + ("?results=1" if a.results else ""))
    elif a.batch_command == "get":
        status, body = request(server, token, "GET", f"{job_path}/{a.idx}")
    elif a.batch_command == "cancel":
        status, body = request(server, token, "DELETE", job_path)
    else:
        status, body = wait(server, token, a)
    if status == 401:
        return _fail({"error": unauthorized(cfg, a.config)})
    if status >= 400:
        return _fail(body)
    if a.json:
        print(json.dumps(body, ensure_ascii=False, indent=2))
    elif a.batch_command == "submit":  # the id alone on stdout: `id=$(sift batch submit f)`
        reused = " (reused)" if body["reused"] else ""
        print(body["job_id"])
        print(f"sift: job {body['status']}, {body['targets']} targets{reused}", file=sys.stderr)
    elif a.batch_command in ("status", "wait"):
        print("\n".join(summary_lines(body)))
        for t in body["targets"] if a.batch_command == "status" and a.results else []:
            if "result" in t:
                sys.stdout.write(f"\n--- target {t['idx']}: {t['url']} ---\n")
                sys.stdout.write(_content(t["result"]))
    elif a.batch_command == "get":
        if body["status"] != "done":
            return _fail(
                {
                    "error": body.get("error") or f"target {a.idx} is {body['status']}",
                    "hint": body.get("hint"),
                }
            )
        sys.stdout.write(_content(body["result"]))
    elif a.batch_command == "cancel":
        print(body["status"])
    if a.batch_command == "wait" and body["status"] in ("failed", "cancelled"):
        return EXIT_ERROR
    return 0
