"""`sift init` registers `sift mcp` with the agent clients a user has (issue 37): the real
`sift` script run as a child on a temporary home (HOME, XDG_CONFIG_HOME and APPDATA pointed into
it), each client's file read back; and the command it registered, started as a client starts
it, answers MCP's `initialize` over stdio."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import anyio
import pytest
from mcp import Client
from mcp.client.stdio import StdioServerParameters, stdio_client

from sift.cli import init
from sift.cli.clients import BY_NAME
from tests.support.processes import free_port

SIFT = Path(sys.executable).parent / "sift"  # the console script, as a user runs it
# Each client's file under a home, and the key of its servers.
FILES = {
    "claude-desktop": (".config/Claude/claude_desktop_config.json", "mcpServers"),
    "claude-code": (".claude.json", "mcpServers"),
    "cursor": (".cursor/mcp.json", "mcpServers"),
    "vscode": (".config/Code/User/mcp.json", "servers"),
    "windsurf": (".codeium/windsurf/mcp_config.json", "mcpServers"),
    "gemini": (".gemini/settings.json", "mcpServers"),
}
DIRS = {  # what shows a client is installed
    "claude-desktop": ".config/Claude",
    "claude-code": ".claude",
    "cursor": ".cursor",
    "vscode": ".config/Code/User",
    "windsurf": ".codeium/windsurf",
    "gemini": ".gemini",
}


def _home(tmp_path: Path, *clients: str) -> Path:
    home = tmp_path / "home"
    for client in clients:
        (home / DIRS[client]).mkdir(parents=True, exist_ok=True)
    home.mkdir(exist_ok=True)
    return home


def _env(home: Path) -> dict[str, str]:
    return {
        "PATH": "/usr/bin:/bin",
        "HOME": str(home),
        "XDG_CONFIG_HOME": str(home / ".config"),
        "APPDATA": str(home / "AppData" / "Roaming"),
        "SIFT_CONFIG": "",
    }


def _init(home: Path, *args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [str(SIFT), "init", *args],
        env=_env(home),
        cwd=home,
        capture_output=True,
        text=True,
        timeout=60,
    )


def _config(tmp_path: Path) -> Path:
    """A sift config whose server nobody serves: `sift mcp` starts all the same."""
    cfg = tmp_path / "sift.toml"
    cfg.write_text(f'listen = "127.0.0.1:{free_port()}"\nstate_dir = "{tmp_path / "state"}"\n')
    return cfg


def _read(home: Path, client: str) -> dict[str, Any]:
    return json.loads((home / FILES[client][0]).read_text())


def _server(home: Path, client: str, name: str = "sift") -> dict[str, Any]:
    return _read(home, client)[FILES[client][1]][name]


def _backups(home: Path) -> list[Path]:
    return sorted(home.rglob("*.bak-*"))


def _snapshot(home: Path) -> dict[str, bytes]:
    return {str(p): p.read_bytes() for p in home.rglob("*") if p.is_file()}


def test_every_installed_client_gets_sift_and_keeps_the_rest(tmp_path):
    home = _home(tmp_path, *DIRS)
    cfg = _config(tmp_path)
    desktop = home / FILES["claude-desktop"][0]
    desktop.write_text(
        '{\n    "globalShortcut": "Ctrl+Space",\n    "mcpServers": {\n'
        '        "other": {\n            "command": "other-mcp"\n        }\n    }\n}\n'
    )
    desktop.chmod(0o640)
    code = home / ".claude.json"
    code.write_text(json.dumps({"numStartups": 7, "projects": {"/p": {"mcpServers": {}}}}))
    vscode = home / FILES["vscode"][0]
    vscode.write_text(
        '{\n\t"servers": {\n\t\t"sift": {"type": "stdio", "command": "/old/sift",'
        ' "args": ["mcp"], "env": {"SIFT_URL": "http://127.0.0.1:1"}}\n\t},'
        '\n\t"inputs": []\n}\n'
    )
    before = {p: p.read_text() for p in (desktop, code, vscode)}

    done = _init(home, "--config", str(cfg))

    assert done.returncode == 0, done.stderr
    args = ["--config", str(cfg), "mcp"]
    for client in ("claude-desktop", "cursor", "windsurf", "gemini"):
        assert _server(home, client) == {"command": str(SIFT), "args": args}, client
    assert _server(home, "claude-code") == {
        "type": "stdio",
        "command": str(SIFT),
        "args": args,
        "env": {},
    }
    # VS Code's entry was there: sift's command and args, the user's env kept
    assert _server(home, "vscode") == {
        "type": "stdio",
        "command": str(SIFT),
        "args": args,
        "env": {"SIFT_URL": "http://127.0.0.1:1"},
    }
    assert _read(home, "vscode")["inputs"] == []
    assert vscode.read_text().startswith('{\n\t"servers": {\n\t\t"sift": {\n\t\t\t"type"')
    desktop_now = _read(home, "claude-desktop")
    assert desktop_now["globalShortcut"] == "Ctrl+Space"
    assert list(desktop_now["mcpServers"]) == ["other", "sift"]
    assert desktop.read_text().startswith('{\n    "globalShortcut"')  # its indent kept
    assert oct(desktop.stat().st_mode & 0o777) == oct(0o640)  # its mode kept
    assert _read(home, "claude-code")["numStartups"] == 7
    assert _read(home, "claude-code")["projects"] == {"/p": {"mcpServers": {}}}
    # a backup of each file that was there, as it was; none for a file made new
    kept = {p.name.split(".bak-")[0]: p.read_text() for p in _backups(home)}
    assert kept == {p.name: text for p, text in before.items()}
    assert '+        "sift": {' in done.stdout  # the diff, in Claude Desktop's indent
    assert str(home / FILES["cursor"][0]) in done.stdout


def test_a_second_run_changes_nothing_and_says_so(tmp_path):
    home = _home(tmp_path, *DIRS)
    assert _init(home).returncode == 0
    files = _snapshot(home)

    again = _init(home)

    assert again.returncode == 0, again.stderr
    assert _snapshot(home) == files  # no file written, no backup made
    assert again.stdout.count("already registered: unchanged") == len(DIRS)
    assert "---" not in again.stdout


def test_dry_run_prints_the_diff_and_writes_nothing(tmp_path):
    home = _home(tmp_path, "claude-desktop", "cursor")
    desktop = home / FILES["claude-desktop"][0]
    other = {"command": "x", "env": {"API_TOKEN": "s3cr"}}
    desktop.write_text(json.dumps({"mcpServers": {"other": other}}) + "\n")
    files = _snapshot(home)

    done = _init(home, "--dry-run")

    assert "s3cr" not in done.stdout and '"API_TOKEN": "…"' in done.stdout  # shown, not its value

    assert done.returncode == 0, done.stderr
    assert _snapshot(home) == files
    assert not (home / FILES["cursor"][0]).exists()
    assert f"--- {desktop}\n+++ {desktop}\n" in done.stdout
    assert f"--- /dev/null\n+++ {home / FILES['cursor'][0]}\n" in done.stdout
    assert f'+      "command": "{SIFT}",' in done.stdout
    assert done.stdout.count("dry run: nothing written") == 2


def test_a_malformed_file_is_refused_by_name_and_nothing_is_written(tmp_path):
    home = _home(tmp_path, "vscode", "cursor")
    vscode = home / FILES["vscode"][0]
    vscode.write_text('{\n\t// my servers\n\t"servers": {},\n}\n')  # JSONC: sift keeps no comments
    files = _snapshot(home)

    done = _init(home)

    assert done.returncode == 1
    assert f"{vscode}: not JSON sift can edit (line 2 column 2" in done.stderr
    assert "nothing written" in done.stderr
    assert _snapshot(home) == files  # Cursor's file, which could be written, is not either
    assert not (home / FILES["cursor"][0]).exists()


def test_servers_that_are_not_an_object_are_refused(tmp_path):
    home = _home(tmp_path, "gemini")
    (home / FILES["gemini"][0]).write_text('{"mcpServers": ["sift"]}')

    done = _init(home)

    assert done.returncode == 1
    assert "'mcpServers' is not an object" in done.stderr


def test_clients_are_chosen_by_name_and_made_when_absent(tmp_path):
    home = _home(tmp_path)  # no client installed
    nothing = _init(home)
    assert nothing.returncode == 1
    assert "no agent client found" in nothing.stderr and "--client" in nothing.stderr
    unknown = _init(home, "--client", "cursor,nope")
    assert unknown.returncode == 2 and "--client: unknown 'nope'" in unknown.stderr
    assert _init(home, "--client", "cursor", "--name", " ").returncode == 2

    done = _init(home, "--client", "cursor,windsurf", "--name", "web", "--server", "http://h:1")

    assert done.returncode == 0, done.stderr
    for client in ("cursor", "windsurf"):
        entry = _server(home, client, "web")
        assert entry["args"] == ["mcp", "--server", "http://h:1"]
    assert oct((home / FILES["cursor"][0]).stat().st_mode & 0o777) == oct(0o600)
    assert not (home / FILES["gemini"][0]).exists()


def test_clients_are_named_as_arguments_too(tmp_path):
    """`sift init [--dry-run] [client…]`, as DESIGN §5 writes it, beside `--client a,b`."""
    home = _home(tmp_path, "claude-desktop")  # installed, and not named: left alone
    dry = _init(home, "--dry-run", "cursor", "windsurf")
    assert dry.returncode == 0, dry.stderr
    assert dry.stdout.count("dry run: nothing written") == 2 and not _snapshot(home)
    assert _init(home, "cursor", "nope").returncode == 2

    done = _init(home, "cursor", "--client", "gemini")

    assert done.returncode == 0, done.stderr
    assert (
        _server(home, "cursor")["args"] == ["mcp"] and "sift" in _read(home, "gemini")["mcpServers"]
    )
    assert not (home / FILES["claude-desktop"][0]).exists()


def test_remove_takes_out_only_sift(tmp_path):
    home = _home(tmp_path, "claude-code")
    code = home / ".claude.json"
    mine = {"mcpServers": {"other": {"command": "o"}}, "theme": "dark"}
    code.write_text(json.dumps(mine))
    assert _init(home).returncode == 0

    done = _init(home, "--remove")

    assert done.returncode == 0, done.stderr
    assert json.loads(code.read_text()) == mine
    assert "'sift' removed" in done.stdout
    assert "no server 'sift': unchanged" in _init(home, "--remove").stdout


def test_a_symlinked_file_is_edited_where_it_points(tmp_path):
    home = _home(tmp_path, "cursor")
    real = tmp_path / "dotfiles" / "mcp.json"
    real.parent.mkdir()
    real.write_text("{}\n")
    (home / FILES["cursor"][0]).symlink_to(real)

    assert _init(home).returncode == 0

    assert (home / FILES["cursor"][0]).is_symlink()
    assert json.loads(real.read_text())["mcpServers"]["sift"]["command"] == str(SIFT)


def test_the_registered_command_answers_initialize_over_stdio(tmp_path):
    home = _home(tmp_path, "claude-desktop", "vscode")
    cfg = _config(tmp_path)
    assert _init(home, "--config", str(cfg)).returncode == 0

    for client in ("claude-desktop", "vscode"):
        entry = _server(home, client)
        params = StdioServerParameters(
            command=entry["command"],
            args=entry["args"],
            env={"HOME": str(home), "PATH": "/usr/bin:/bin"},  # as bare as a client gives
            cwd="/",
        )

        async def scenario(params: StdioServerParameters = params) -> list[str]:
            with open(os.devnull, "w") as errlog:  # `sift mcp` warns: nobody serves sift
                async with Client(stdio_client(params, errlog=errlog)) as mcp_client:
                    assert mcp_client.server_info is not None and mcp_client.server_info.name
                    return [tool.name for tool in (await mcp_client.list_tools()).tools]

        tools = anyio.run(scenario)
        assert "fetch" in tools and "read" in tools, client


def test_the_config_is_registered_absolute_and_must_load(tmp_path):
    home = _home(tmp_path, "cursor")
    (home / "sift.toml").write_text('listen = "127.0.0.1:8731"\n')
    (home / "bad.toml").write_text("no_such_key = 1\n")

    bad = _init(home, "--config", "bad.toml")
    assert bad.returncode == 2 and "no_such_key" in bad.stderr
    assert not (home / FILES["cursor"][0]).exists()

    assert _init(home, "--config", "sift.toml").returncode == 0  # relative to where it runs
    assert _server(home, "cursor")["args"] == ["--config", str(home / "sift.toml"), "mcp"]


def test_a_file_rewritten_meanwhile_is_not_overwritten(tmp_path):
    """Claude Code rewrites ~/.claude.json while it runs: what it wrote after sift read the
    file is not lost."""
    home = _home(tmp_path, "claude-code")
    code = home / ".claude.json"
    code.write_text('{"numStartups": 1}\n')
    env = _env(home)
    client = BY_NAME["claude-code"]
    plan = init.plan(client, "sift", client.entry(str(SIFT), ["mcp"]), env)
    code.write_text('{"numStartups": 2}\n')  # the client, between the read and the write

    with pytest.raises(init.EditError, match="changed since sift read it"):
        init.write(plan)

    assert code.read_text() == '{"numStartups": 2}\n'
    assert _backups(home) == []
