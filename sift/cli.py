"""The `sift` command: serve, fetch, extract, batch — and the hidden children sift runs.

`sift fetch` talks to a server when one is given (`--server` / `$SIFT_URL`, token from
`$SIFT_TOKEN` or the state directory) and otherwise runs the same pipeline in-process. Text goes
to stdout, errors to stderr with a non-zero exit; `--json` prints the envelope.
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import urllib.error
import urllib.request
from collections.abc import Awaitable, Callable
from pathlib import Path
from typing import TYPE_CHECKING, Any

from sift.config import Config, ConfigError, load

if TYPE_CHECKING:  # imported late at run time: `sift pdftext` children start faster
    from sift.services import Services

EXIT_ERROR = 1
EXIT_USAGE = 2


def _parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(prog="sift", description="Fetch the web safely as clean text.")
    p.add_argument("--config", help="TOML config file (default $SIFT_CONFIG or built-in)")
    sub = p.add_subparsers(dest="command", required=True)

    s = sub.add_parser("serve", help="run the HTTP service")
    s.add_argument("--listen", help="address:port to listen on (default 127.0.0.1:8731)")
    s.add_argument("--config", default=argparse.SUPPRESS, help="as before `serve`")

    f = sub.add_parser("fetch", help="fetch a URL as clean text")
    f.add_argument("url")
    f.add_argument("--raw", action="store_true", help="the body as text, not cleaned")
    f.add_argument("--jq", metavar="P", help="jq program applied to a JSON response")
    _document_flags(f)
    f.add_argument("--recover", action="store_true", help="answer from a stale copy on failure")
    f.add_argument("--render", action="store_true", help="render the page in a browser first")
    f.add_argument("--server", default=os.environ.get("SIFT_URL"), help="sift server URL")

    from sift import cli_batch  # imported late: it uses this module's helpers

    cli_batch.add_parser(sub)

    m = sub.add_parser("mcp", help="serve sift as MCP tools (stdio; HTTP with --listen)")
    m.add_argument("--listen", metavar="ADDR", help="streamable HTTP on address:port, not stdio")
    m.add_argument("--server", default=os.environ.get("SIFT_URL"), help="sift server URL")

    e = sub.add_parser("extract", help="read a local file (PDF, HTML, JSON, text) the same way")
    e.add_argument("file")
    _document_flags(e)
    return p


def _document_flags(p: argparse.ArgumentParser) -> None:
    """The flags `fetch` and `extract` share: which part of a document, and how to print it."""
    p.add_argument("--pages", metavar="R", help='page range of a long document, e.g. "41-60"')
    p.add_argument("--grep", metavar="RE", help="lines matching an RE2 pattern, with page numbers")
    p.add_argument("--question", "-q", metavar="Q", help="answer a question about the document")
    p.add_argument("--max-chars", type=int, metavar="N", help="lower the output cap")
    p.add_argument("--no-context", action="store_true", help="omit the title/source header")
    p.add_argument("--json", action="store_true", help="print the whole JSON envelope")


def _document_fields(a: argparse.Namespace, body: dict[str, Any]) -> dict[str, Any]:
    """`body` with the fields of the shared document flags that were given."""
    for key in ("pages", "grep", "question", "max_chars"):
        if getattr(a, key) is not None:
            body[key] = getattr(a, key)
    if a.no_context:
        body["context"] = False
    return body


def _fetch_body(a: argparse.Namespace) -> dict[str, Any]:
    body = _document_fields(a, {"url": a.url})
    if a.raw:
        body["mode"] = "raw"
    if a.jq is not None:
        body["jq"] = a.jq
    if a.recover:
        body["recover"] = True
    if a.render:
        body["render"] = True
    return body


def server_url(cfg: Config, given: str | None) -> str:
    """The server to talk to: `--server` / `$SIFT_URL`, else the configured `listen`."""
    return given or "http://" + cfg.listen.replace("0.0.0.0:", "127.0.0.1:")


def _token(cfg: Config) -> str | None:
    from sift.auth import local_token

    return os.environ.get("SIFT_TOKEN") or local_token(cfg, create=False)


def request(
    server: str, token: str | None, method: str, path: str, body: Any = None, timeout: float = 240
) -> tuple[int, Any]:
    """One call to a sift server: (status, JSON body). Proxies from the environment are
    never used."""
    req = urllib.request.Request(
        server.rstrip("/") + path,
        method=method,
        data=json.dumps(body).encode() if body is not None else None,
        headers={"Content-Type": "application/json", "Authorization": f"Bearer {token or ''}"},
    )
    opener = urllib.request.build_opener(urllib.request.ProxyHandler({}))
    try:
        with opener.open(req, timeout=timeout) as resp:
            return resp.status, json.loads(resp.read())
    except urllib.error.HTTPError as exc:
        try:
            return exc.code, json.loads(exc.read())
        except ValueError:
            return exc.code, {"success": False, "error": f"HTTP {exc.code} {exc.reason}"}


def in_process(
    cfg: Config, work: Callable[[Services], Awaitable[dict[str, Any]]]
) -> tuple[int, Any]:
    """Start the actors in this process, run one piece of pipeline work, stop them."""
    import asyncio
    import logging

    from sift.errors import SiftError
    from sift.services import Services

    logging.basicConfig(level=logging.WARNING)
    svc = Services(cfg)
    svc.start()

    async def once() -> tuple[int, Any]:
        try:
            return 200, await work(svc)
        except SiftError as exc:
            return exc.status, exc.to_body()

    try:
        return asyncio.run(once())
    finally:
        svc.stop()


def _fetch_here(cfg: Config, body: dict[str, Any]) -> tuple[int, Any]:
    """`sift fetch` without a server: the /v1/fetch pipeline call, in this process."""
    from sift import pipeline
    from sift.auth import Caller
    from sift.request import parse_params

    async def work(svc: Services) -> dict[str, Any]:
        trace = pipeline.Trace()
        caller = Caller("cli", "fleet")
        return (await pipeline.fetch_envelope(svc, caller, parse_params(body), trace)).envelope

    return in_process(cfg, work)


def _extract(cfg: Config, a: argparse.Namespace) -> tuple[int, Any]:
    """`sift extract`: the document path on a local file, in this process."""
    from sift import pipeline
    from sift.request import parse_params

    path = Path(a.file)
    try:
        data = path.read_bytes()
    except OSError as exc:
        return 2, {"success": False, "error": f"cannot read {a.file}: {exc.strerror}"}
    body = _document_fields(a, {"url": path.resolve().as_uri()})

    async def work(svc: Services) -> dict[str, Any]:
        return (await pipeline.run_local(svc, data, path.name, parse_params(body))).envelope

    return in_process(cfg, work)


def _print_result(status: int, env: Any, as_json: bool) -> int:
    if as_json:
        print(json.dumps(env, ensure_ascii=False, indent=2))
    if status >= 400 or not env.get("success"):
        hint = f" (hint: {env['hint']})" if env.get("hint") else ""
        print(f"sift: {env.get('error', 'failed')}{hint}", file=sys.stderr)
        return EXIT_ERROR
    if not as_json:
        text = env.get("content", "")
        sys.stdout.write(text if text.endswith("\n") else text + "\n")
        if env.get("warning"):
            print(f"sift: warning: {env['warning']}", file=sys.stderr)
    return 0


def main(argv: list[str] | None = None) -> int:
    argv = sys.argv[1:] if argv is None else argv
    if argv[:1] == ["pdftext"]:
        from sift.pdf.pdftext import main as pdftext_main

        return pdftext_main(argv[1:])
    if argv[:1] == ["clean-worker"]:
        from sift.clean.worker import main as worker_main

        return worker_main() or 0
    args = _parser().parse_args(argv)
    try:
        cfg = load(args.config)
        if args.command == "serve":
            from sift.config import check, check_state_dir

            if args.listen:
                import msgspec

                cfg = msgspec.structs.replace(cfg, listen=args.listen)
                check(cfg)
            check_state_dir(cfg)  # before the server's imports: a bad value fails at once
            from sift import server

            return server.run(cfg)
        if args.command == "fetch":
            body = _fetch_body(args)
            if args.server:
                status, env = request(args.server, _token(cfg), "POST", "/v1/fetch", body)
            else:
                status, env = _fetch_here(cfg, body)
            return _print_result(status, env, args.json)
        if args.command == "batch":
            from sift import cli_batch

            return cli_batch.run(args, cfg)
        if args.command == "mcp":
            from sift import mcp

            return mcp.run(cfg, args.server, args.listen)
        if args.command == "extract":
            status, env = _extract(cfg, args)
            return _print_result(status, env, args.json)
    except ConfigError as exc:
        print(f"sift: {exc}", file=sys.stderr)
        return EXIT_USAGE
    except (urllib.error.URLError, OSError) as exc:
        print(f"sift: cannot reach the server: {exc}", file=sys.stderr)
        return EXIT_ERROR
    except KeyboardInterrupt:
        return 130
    return EXIT_USAGE
