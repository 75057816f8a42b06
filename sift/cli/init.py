"""`sift init`: sift's MCP server (`sift mcp` over stdio) registered with the agent clients a
user has (the table and its sources: `sift/cli/clients.py`).

Every change is shown as a unified diff first; `--dry-run` stops there. All the files are read
and checked before any is written, so one file sift cannot edit (not JSON, comments in it, its
servers not an object) leaves every file as it was. A file is then written whole, a temporary
file renamed over it with its mode kept, after a copy of it is kept beside it
(`FILE.bak-<time>`). The rest of the file stays as it was read: other servers, keys sift does
not know, the keys' order and the file's indent; a server already registered keeps whatever
else the user set on it (`env`, `disabled` …). A second run finds nothing to change and says so.
"""

from __future__ import annotations

import argparse
import contextlib
import difflib
import json
import os
import re
import shutil
import stat
import sys
import tempfile
import time
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from sift.cli import EXIT_ERROR, EXIT_USAGE
from sift.cli.clients import BY_NAME, CLIENTS, Client, Entry, chosen

# A value shown in a diff's context under a key that names a secret: shown as "…".
_SECRET = re.compile(
    r'("[^"]*(?:token|key|secret|passw|auth|credential|cookie)[^"]*"\s*:\s*)"(?:[^"\\]|\\.)*"',
    re.IGNORECASE,
)


class EditError(Exception):
    """A client's file that sift will not write: the message names the file and why."""


@dataclass(frozen=True)
class Plan:
    client: Client
    path: Path  # the file itself, a symlink followed
    old: str | None  # None: no file yet
    new: str | None  # None: nothing to change
    done: str  # what the change is, or why there is none


def add_parser(sub: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    i = sub.add_parser("init", help="register `sift mcp` with your agent clients (Claude, …)")
    i.add_argument("clients", nargs="*", metavar="CLIENT", help="only these (as --client)")
    i.add_argument(
        "--client",
        metavar="NAME[,NAME]",
        help=f"only these: {', '.join(BY_NAME)} (default: every one installed)",
    )
    i.add_argument("--name", default="sift", help="the server's name in the clients (sift)")
    i.add_argument("--server", metavar="URL", help="the sift server `sift mcp` talks to")
    i.add_argument("--dry-run", action="store_true", help="show the changes, write nothing")
    i.add_argument("--remove", action="store_true", help="take the server out again")


def run(args: argparse.Namespace, env: Mapping[str, str] = os.environ) -> int:
    try:
        if not args.name.strip():
            raise ValueError("--name: the server needs a name")
        named = [*([args.client] if args.client else []), *args.clients]
        clients = chosen(",".join(named) if named else None, env)
    except ValueError as exc:
        print(f"sift init: {exc}", file=sys.stderr)
        return EXIT_USAGE
    if not clients:
        looked = ", ".join(f"{c.label} ({c.config_dir(env)})" for c in CLIENTS)
        print(f"sift init: no agent client found; looked for {looked}", file=sys.stderr)
        print("sift init: name one with --client NAME to create its file", file=sys.stderr)
        return EXIT_ERROR
    command, cmd_args = server_command(args.config or env.get("SIFT_CONFIG"), args.server)
    plans, refused = [], []
    for client in clients:
        entry = None if args.remove else client.entry(command, cmd_args)
        try:
            plans.append(plan(client, args.name, entry, env))
        except EditError as exc:
            refused.append(str(exc))
    if refused:
        for why in refused:
            print(f"sift init: {why}", file=sys.stderr)
        print("sift init: nothing written", file=sys.stderr)
        return EXIT_ERROR
    if not args.remove:
        print(f"sift init: {args.name!r} runs {' '.join([command, *cmd_args])}")
    return _apply(plans, args.dry_run)


def server_command(config: str | None, server: str | None) -> tuple[str, list[str]]:
    """How a client starts this sift: its absolute path (the `sift` script that runs now, or
    this Python with `-m sift`), the config as an absolute path, then `mcp`."""
    exe = _sift_executable()
    args = ["-m", "sift"] if exe == sys.executable else []
    if config:
        args += ["--config", os.path.abspath(config)]
    args.append("mcp")
    if server:
        args += ["--server", server]
    return exe, args


def _sift_executable() -> str:
    """The `sift` script itself, as run (a symlink kept: pipx's survives an upgrade); when run
    as `python -m sift`, the script beside this Python; else this Python."""
    script = "sift.exe" if sys.platform == "win32" else "sift"
    run_as = sys.argv[0] if sys.argv else ""
    if Path(run_as).name == script and os.path.isfile(run_as):
        return os.path.abspath(run_as)
    beside = Path(sys.executable).parent / script
    return str(beside) if beside.is_file() else sys.executable


def plan(client: Client, name: str, entry: Entry | None, env: Mapping[str, str]) -> Plan:
    """What `client`'s file becomes with `name` set to `entry` (None: taken out)."""
    path = Path(os.path.realpath(client.path(env)))
    old = _read(path)
    doc = _parse(path, old, client, entry)
    servers = doc.get(client.key, {})
    if not isinstance(servers, dict):
        raise EditError(f"{path}: {client.key!r} is not an object; sift will not replace it")
    if entry is None:
        if name not in servers:
            return Plan(client, path, old, None, f"no server {name!r}: unchanged")
        doc[client.key] = {k: v for k, v in servers.items() if k != name}
        return Plan(client, path, old, _dump(doc, old), f"{name!r} removed")
    wanted = _merged(servers.get(name), entry)
    if servers.get(name) == wanted:
        return Plan(client, path, old, None, f"{name!r} already registered: unchanged")
    done = f"{name!r} updated" if name in servers else f"{name!r} added"
    doc[client.key] = {**servers, name: wanted}
    return Plan(client, path, old, _dump(doc, old), done)


def _merged(existing: Any, entry: Entry) -> Entry:
    """sift's entry, keeping what else the user set on one already there (`env` included)."""
    if not isinstance(existing, dict):
        return entry
    return {**existing, **{k: v for k, v in entry.items() if k != "env" or k not in existing}}


def _read(path: Path) -> str | None:
    try:
        return path.read_text(encoding="utf-8")
    except FileNotFoundError:
        return None
    except (OSError, UnicodeDecodeError) as exc:
        raise EditError(f"{path}: cannot read it: {exc}") from None


def _parse(path: Path, text: str | None, client: Client, entry: Entry | None) -> dict[str, Any]:
    if text is None or not text.strip():
        return {}
    try:
        doc = json.loads(text)
    except json.JSONDecodeError as exc:
        by_hand = "" if entry is None else f"; or add under {client.key!r}: {json.dumps(entry)}"
        raise EditError(
            f"{path}: not JSON sift can edit (line {exc.lineno} column {exc.colno}: {exc.msg});"
            f" sift keeps no comments or trailing commas, so fix the file{by_hand}"
        ) from None
    if not isinstance(doc, dict):
        raise EditError(f"{path}: not a JSON object; sift will not replace it")
    return doc


def _dump(doc: dict[str, Any], old: str | None) -> str:
    """JSON in the file's own indent (two spaces for a new file), ending as it ended."""
    found = re.search(r"^([ \t]+)\S", old or "", re.MULTILINE)
    text = json.dumps(doc, indent=found.group(1) if found else 2, ensure_ascii=False)
    return text + "\n" if old is None or old.endswith("\n") or not old.strip() else text


def _apply(plans: list[Plan], dry_run: bool) -> int:
    failed = False
    for p in plans:
        where = f"{p.client.label}: {p.path}"
        if p.new is None:
            print(f"{where}: {p.done}")
            continue
        sys.stdout.writelines(_diff(p))
        if dry_run:
            print(f"{where}: {p.done} (dry run: nothing written)")
            continue
        try:
            backup = write(p)
        except (EditError, OSError) as exc:
            print(f"sift init: {where}: not written: {exc}", file=sys.stderr)
            failed = True
            continue
        kept = f" (the old file kept as {backup})" if backup else ""
        print(f"{where}: {p.done}{kept}")
    if any(p.new is not None for p in plans) and not dry_run and not failed:
        print("sift init: restart the clients to load the change")
    return EXIT_ERROR if failed else 0


def _diff(p: Plan) -> list[str]:
    old = (p.old or "").splitlines(keepends=True)
    new = (p.new or "").splitlines(keepends=True)
    before = str(p.path) if p.old is not None else "/dev/null"
    lines = difflib.unified_diff(old, new, before, str(p.path))
    return [_SECRET.sub(r'\1"…"', line if line.endswith("\n") else line + "\n") for line in lines]


def write(p: Plan) -> Path | None:
    """`p.new` in place of the file, atomically, its mode kept; the old file kept beside it.
    Refused if the file changed since it was read (a running client rewrote it)."""
    assert p.new is not None
    backup = None
    if p.old is not None:
        if _read(p.path) != p.old:
            raise EditError(f"it changed since sift read it ({p.client.label} running?): run again")
        mode = stat.S_IMODE(p.path.stat().st_mode)
        backup = _backup_name(p.path)
        shutil.copy2(p.path, backup)
    else:
        p.path.parent.mkdir(parents=True, exist_ok=True)
        mode = 0o600
    fd, tmp = tempfile.mkstemp(prefix=f".{p.path.name}.", suffix=".tmp", dir=p.path.parent)
    try:
        with os.fdopen(fd, "w", encoding="utf-8") as f:
            f.write(p.new)
            f.flush()
            os.fsync(f.fileno())
        os.chmod(tmp, mode)
        os.replace(tmp, p.path)
    except BaseException:
        with contextlib.suppress(OSError):
            os.unlink(tmp)
        raise
    return backup


def _backup_name(path: Path) -> Path:
    stamp = time.strftime("%Y%m%d-%H%M%S")
    backup, n = path.with_name(f"{path.name}.bak-{stamp}"), 1
    while backup.exists():
        backup, n = path.with_name(f"{path.name}.bak-{stamp}-{n}"), n + 1
    return backup
