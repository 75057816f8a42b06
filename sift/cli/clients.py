"""The agent clients `sift init` knows: where each keeps its MCP servers, and the entry it reads.

Each row was checked against the client's documentation (or its maintainers' word) in 2026:

- Claude Desktop: `claude_desktop_config.json`, `mcpServers` {command, args}, in
  `~/Library/Application Support/Claude` (macOS), `%APPDATA%\\Claude` (Windows),
  `$XDG_CONFIG_HOME/Claude` (the Linux builds, e.g. claude-desktop-debian's docs/CONFIGURATION.md);
  modelcontextprotocol.io/quickstart/user.
- Claude Code: user scope is the top-level `mcpServers` of `~/.claude.json` on every OS
  (code.claude.com/docs/en/mcp; anthropics/claude-code#4193), entries as `claude mcp add
  --scope user` writes them: {type: "stdio", command, args, env}. sift edits the file rather than
  running `claude mcp add`: that needs Claude Code on PATH and has no dry run, diff or backup,
  and the file is where that command writes. Claude Code rewrites the same file while it runs,
  so the write is refused if the file changed since it was read (run it again).
- Cursor: `~/.cursor/mcp.json` (global), `mcpServers` {command, args}; cursor.com/docs/mcp.
- VS Code: the user profile's `mcp.json` (`~/.config/Code/User`, `~/Library/Application
  Support/Code/User`, `%APPDATA%\\Code\\User`), top-level `servers` {type: "stdio", command,
  args}; code.visualstudio.com/docs/copilot/reference/mcp-configuration. The file may be JSONC:
  sift edits strict JSON only and refuses a file with comments rather than lose them.
- Windsurf: `~/.codeium/windsurf/mcp_config.json` (`%USERPROFILE%` on Windows), `mcpServers`
  {command, args}; docs.windsurf.com/windsurf/cascade/mcp.
- Gemini CLI: user settings `~/.gemini/settings.json`, `mcpServers` {command, args};
  geminicli.com/docs/tools/mcp-server.
"""

from __future__ import annotations

import os
import sys
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

Entry = dict[str, Any]


@dataclass(frozen=True)
class Client:
    name: str  # as `--client` spells it
    label: str
    config_dir: Callable[[Mapping[str, str]], Path]  # present when this exists
    file_name: str  # the config file, in config_dir unless at_home
    key: str  # the object of servers, at the top of the file
    stdio_type: bool  # the entry names its transport: {"type": "stdio", …}
    at_home: bool = False  # the file is in the home directory, not in config_dir
    env: bool = False  # the entry carries an `env` object, as the client writes it

    def path(self, env: Mapping[str, str]) -> Path:
        return (_home(env) if self.at_home else self.config_dir(env)) / self.file_name

    def present(self, env: Mapping[str, str]) -> bool:
        return self.config_dir(env).is_dir() or self.path(env).is_file()

    def entry(self, command: str, args: list[str]) -> Entry:
        entry: Entry = {"type": "stdio"} if self.stdio_type else {}
        entry |= {"command": command, "args": args}
        return entry | {"env": {}} if self.env else entry


def _home(env: Mapping[str, str]) -> Path:
    home = env.get("USERPROFILE") if sys.platform == "win32" else env.get("HOME")
    return Path(home) if home else Path.home()


def _app_data(env: Mapping[str, str]) -> Path:
    """Where Electron apps (Claude Desktop, VS Code) keep their settings on this OS."""
    if sys.platform == "darwin":
        return _home(env) / "Library" / "Application Support"
    if sys.platform == "win32":
        return Path(env.get("APPDATA") or _home(env) / "AppData" / "Roaming")
    return Path(env.get("XDG_CONFIG_HOME") or _home(env) / ".config")


CLIENTS = (
    Client(
        "claude-desktop",
        "Claude Desktop",
        lambda env: _app_data(env) / "Claude",
        "claude_desktop_config.json",
        "mcpServers",
        stdio_type=False,
    ),
    Client(
        "claude-code",
        "Claude Code",
        lambda env: _home(env) / ".claude",
        ".claude.json",
        "mcpServers",
        stdio_type=True,
        at_home=True,
        env=True,
    ),
    Client(
        "cursor",
        "Cursor",
        lambda env: _home(env) / ".cursor",
        "mcp.json",
        "mcpServers",
        stdio_type=False,
    ),
    Client(
        "vscode",
        "VS Code",
        lambda env: _app_data(env) / "Code" / "User",
        "mcp.json",
        "servers",
        stdio_type=True,
    ),
    Client(
        "windsurf",
        "Windsurf",
        lambda env: _home(env) / ".codeium" / "windsurf",
        "mcp_config.json",
        "mcpServers",
        stdio_type=False,
    ),
    Client(
        "gemini",
        "Gemini CLI",
        lambda env: _home(env) / ".gemini",
        "settings.json",
        "mcpServers",
        stdio_type=False,
    ),
)
BY_NAME = {c.name: c for c in CLIENTS}


def chosen(names: str | None, env: Mapping[str, str] = os.environ) -> list[Client]:
    """The clients `--client a,b` names (ValueError for an unknown one), else those present."""
    if names is None:
        return [c for c in CLIENTS if c.present(env)]
    picked = []
    for name in (n.strip() for n in names.split(",") if n.strip()):
        if name not in BY_NAME:
            raise ValueError(f"--client: unknown {name!r} (known: {', '.join(BY_NAME)})")
        if BY_NAME[name] not in picked:
            picked.append(BY_NAME[name])
    return picked
