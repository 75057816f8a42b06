"""The `sift` command: serve, fetch, extract, batch, init — and the hidden children sift runs.

`sift fetch` talks to a server when one is given (`--server` / `$SIFT_URL`, token from
`$SIFT_TOKEN` or the state directory) and otherwise runs the same pipeline in-process. Text goes
to stdout, errors to stderr with a non-zero exit; `--json` prints the envelope.
"""

from __future__ import annotations

import argparse
import functools
import os
import sys
from collections.abc import Callable, Sequence
from typing import TYPE_CHECKING, Any

from sift import __version__
from sift.cli import EXIT_ERROR, EXIT_USAGE
from sift.cli.pipes import quiet_exit, reader_gone
from sift.core.config import ConfigError, load

if TYPE_CHECKING:
    from sift.core.config import Config

Sub = Any  # argparse's _SubParsersAction


class _Help(argparse.HelpFormatter):
    """argparse's help, as wide as the terminal. argparse makes one for every argument it adds
    (to check its metavar), and its own width lookup imports `shutil`, with the compression
    modules that loads (7M instructions, 3 % of a cached `sift extract`). The width here is
    `shutil.get_terminal_size`'s columns, found the same way, once."""

    def __init__(
        self,
        prog: str,
        indent_increment: int = 2,
        max_help_position: int = 24,
        width: int | None = None,
    ) -> None:
        width = _columns() - 2 if width is None else width
        super().__init__(prog, indent_increment, max_help_position, width)


@functools.cache
def _columns() -> int:
    """The terminal's columns: `$COLUMNS`, else stdout's terminal, else 80."""
    try:
        columns = int(os.environ["COLUMNS"])
    except (KeyError, ValueError):
        columns = 0
    if columns <= 0:
        try:
            out = sys.__stdout__
            columns = os.get_terminal_size(out.fileno()).columns if out else 0
        except (AttributeError, ValueError, OSError):
            columns = 0
    return columns or 80


class _Parser(argparse.ArgumentParser):
    """The parser of `sift` and of each command (`add_subparsers` makes its own kind)."""

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        kwargs.setdefault("formatter_class", _Help)
        super().__init__(*args, **kwargs)


def _parser(argv: Sequence[str] = ()) -> argparse.ArgumentParser:
    """The command's parser: only the subparser of the command `argv` names (each one costs
    argparse's message lookups and its module's imports), every one for help or a typo."""
    p = _Parser(prog="sift", description="Fetch the web safely as clean text.")
    p.add_argument("--config", help="TOML config file (default $SIFT_CONFIG or built-in)")
    p.add_argument("--version", action="version", version=f"sift {__version__}")
    sub = p.add_subparsers(dest="command", required=True)
    named = _named(argv)
    for add in [COMMANDS[named]] if named else dict.fromkeys(COMMANDS.values()):
        add(sub)
    _config_after(p)
    return p


def _named(argv: Sequence[str]) -> str | None:
    """The command `argv` names (its first word that is not an option of `sift` itself), if
    it is one; else None."""
    words = iter(argv)
    for word in words:
        if word == "--config":
            next(words, None)
        elif not word.startswith("-"):
            return word if word in COMMANDS else None
        elif not word.startswith("--config="):
            return None  # --help, --version, an unknown option: the whole parser says it
    return None


def _serve(sub: Sub) -> None:
    s = sub.add_parser("serve", help="run the HTTP service")
    s.add_argument("--listen", help="address:port to listen on (default 127.0.0.1:8731)")


def _fetch(sub: Sub) -> None:
    from sift.cli.fetch import document_flags

    f = sub.add_parser("fetch", help="fetch a URL as clean text")
    f.add_argument("url")
    f.add_argument("--raw", action="store_true", help="the body as text, not cleaned")
    f.add_argument("--jq", metavar="P", help="jq program applied to a JSON response")
    document_flags(f)
    f.add_argument("--recover", action="store_true", help="answer from a stale copy on failure")
    f.add_argument("--render", action="store_true", help="render the page in a browser first")
    f.add_argument(
        "--if-none-match", metavar="HASH", help="content_hash of an earlier answer: unchanged?"
    )
    f.add_argument("--server", default=os.environ.get("SIFT_URL"), help="sift server URL")


def _batch(sub: Sub) -> None:
    from sift.cli import batch

    batch.add_parser(sub)


def _read(sub: Sub) -> None:
    from sift.cli import read

    read.add_parsers(sub)


def _mcp(sub: Sub) -> None:
    m = sub.add_parser("mcp", help="serve sift as MCP tools (stdio; HTTP with --listen)")
    m.add_argument("--listen", metavar="ADDR", help="streamable HTTP on address:port, not stdio")
    m.add_argument("--server", default=os.environ.get("SIFT_URL"), help="sift server URL")
    m.add_argument("--tools", metavar="LIST", help="only these tools (comma-separated; coding)")
    m.add_argument("--exclude-tools", metavar="LIST", help="every tool but these")


def _extract(sub: Sub) -> None:
    from sift.cli.fetch import document_flags

    e = sub.add_parser("extract", help="read a local file (PDF, HTML, JSON, text) the same way")
    e.add_argument("file")
    document_flags(e)


def _config(sub: Sub) -> None:
    from sift.cli import config

    config.add_parser(sub)


def _init(sub: Sub) -> None:
    from sift.cli import init

    init.add_parser(sub)


# Every command, in the order `sift --help` lists them, by the function that adds its parser
# (`_read` adds `read` and `verify`).
COMMANDS: dict[str, Callable[[Sub], None]] = {
    "serve": _serve,
    "fetch": _fetch,
    "batch": _batch,
    "read": _read,
    "verify": _read,
    "mcp": _mcp,
    "extract": _extract,
    "config": _config,
    "init": _init,
}


def _config_after(parser: argparse.ArgumentParser) -> None:
    """`--config` after any command as well as before it (`sift fetch --config f URL`)."""
    for action in parser._actions:
        if isinstance(action, argparse._SubParsersAction):
            for name, command in action.choices.items():
                if name != "config" and "--config" not in command._option_string_actions:
                    help_ = "as before the command"
                    command.add_argument("--config", default=argparse.SUPPRESS, help=help_)
                _config_after(command)


def main(argv: list[str] | None = None) -> int:
    argv = sys.argv[1:] if argv is None else argv
    if argv[:1] == ["pdftext"]:
        from sift.documents.pdf.pdftext import main as pdftext_main

        return pdftext_main(argv[1:])
    if argv[:1] == ["clean-worker"]:
        from sift.clean.worker import main as worker_main

        return worker_main() or 0
    args = _parser(argv).parse_args(argv)
    try:
        return _command(args)
    except BrokenPipeError as exc:  # `sift … | head`: the reader left, as a Unix tool takes it
        if not reader_gone():
            print(f"sift: cannot reach the server: {exc}", file=sys.stderr)
            return EXIT_ERROR
        return quiet_exit()
    except ConfigError as exc:
        print(f"sift: {exc}", file=sys.stderr)
        return EXIT_USAGE
    except OSError as exc:  # urllib.error.URLError too
        print(f"sift: cannot reach the server: {exc}", file=sys.stderr)
        return EXIT_ERROR
    except KeyboardInterrupt:
        return 130


def _command(args: argparse.Namespace) -> int:
    """Run the command `args` names."""
    if args.command == "config":  # reads only the file it names
        from sift.cli import config

        return config.run(args)
    cfg = load(args.config)
    if args.command == "serve":
        from sift.core.config import check, check_state_dir

        if args.listen:
            import msgspec

            cfg = msgspec.structs.replace(cfg, listen=args.listen)
            check(cfg)
        check_state_dir(cfg)  # before the server's imports: a bad value fails at once
        from sift.web import server

        return server.run(cfg)
    if args.command == "fetch":
        return _fetch_command(args, cfg)
    if args.command == "batch":
        from sift.cli import batch

        return batch.run(args, cfg)
    if args.command in ("read", "verify"):
        from sift.cli import read

        return read.run(args, cfg)
    if args.command == "mcp":
        from sift import mcp

        return mcp.run(cfg, args.server, args.listen, args.tools, args.exclude_tools)
    if args.command == "init":  # after `load`: a config that does not load is not registered
        from sift.cli import init

        return init.run(args)
    if args.command == "extract":
        from sift.cli.fetch import extract, print_result

        status, env = extract(cfg, args)
        return print_result(status, env, args.json)
    return EXIT_USAGE


def _fetch_command(args: argparse.Namespace, cfg: Config) -> int:
    """`sift fetch`: through a server when one is named, else in this process."""
    from sift.cli.fetch import fetch_body, fetch_here, print_result
    from sift.client.http import find_token, request, unauthorized

    body = fetch_body(args)
    if args.server:
        from sift.cli.progress import Waiting

        with Waiting(f"fetching {args.url} (sift at {args.server})"):
            status, env = request(args.server, find_token(cfg), "POST", "/v1/fetch", body)
        if status == 401:
            env = {**env, "error": unauthorized(cfg, args.config)}
    else:
        status, env = fetch_here(cfg, body)
    return print_result(status, env, args.json)
