"""`sift config example` (every key, its default and what it does) and `sift config check FILE`
(the file read and checked as `serve` would, without starting anything)."""

from __future__ import annotations

import argparse
import sys

from sift.cli import EXIT_USAGE
from sift.core.config import ConfigError, load


def add_parser(sub: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    c = sub.add_parser("config", help="print an example config, or check a config file")
    what = c.add_subparsers(dest="config_command", required=True)
    what.add_parser("example", help="every key with its default and a one-line comment")
    check = what.add_parser("check", help="check a config file without starting (exit 0 or 2)")
    check.add_argument("file")


def run(args: argparse.Namespace) -> int:
    if args.config_command == "example":
        from sift.core.config.example import example

        sys.stdout.write(example())
        return 0
    try:
        load(args.file)
    except ConfigError as exc:
        print(f"{args.file}: {exc}", file=sys.stderr)
        return EXIT_USAGE
    print(f"{args.file}: ok")
    return 0
