"""What one MCP client meets: the tools it sees and may call, and the `max_tokens` its answers
get when a call names none.

The tools: `sift mcp --tools` / `--exclude-tools` (else `[mcp] tools` / `exclude_tools`); over
`--listen` a client's URL may narrow them further (`/mcp?tools=fetch,read`,
`?exclude_tools=crawl`), never widen them. A hidden tool is not listed, and a call to it is
answered as a call to a tool that does not exist.

The budget: a client known to cut long tool results (its `clientInfo.name`) gets the
`max_tokens` in `CLIENT_CAPS` (over it `[mcp] client_caps`) on every call of a tool that takes
`max_tokens` and was given none; an explicit `max_tokens` always wins, and an unknown client
keeps sift's own defaults. Over stateless HTTP a client of the handshake era names itself only
in `initialize`, so the name is remembered for its token.

One SDK middleware (`MCPServer.middleware`) sees every request before the tools do, so neither
the tools nor the server's dispatch know of it.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable, Collection, Mapping, Sequence
from typing import Any

from mcp.server.context import CallNext, ServerRequestContext
from mcp.server.context import HandlerResult as Answer
from mcp.types import CallToolResult, ListToolsResult, TextContent

from sift.core.config.sections import READ_MAX_TOKENS, READ_MIN_TOKENS

# A named set of tools: what a coding agent needs from the web, and nothing it pays for unused
# (every listed tool's schema is in the agent's context on every turn).
PRESETS: dict[str, tuple[str, ...]] = {"coding": ("fetch", "read", "search")}

# clientInfo.name → max_tokens (o200k_base) where the client is known to cut, refuse or move
# aside a long tool result; the sources are in README "MCP". Names are matched ignoring case.
CLIENT_CAPS: dict[str, int] = {
    "claude-code": 8_000,  # warns over 10,000 tokens, refuses over 25,000
    "claude-ai": 20_000,  # Claude Desktop and claude.ai: results cut near 100,000 characters
    "codex-mcp-client": 8_000,  # Codex: tool output cut to ~10,000 tokens (10 KiB before)
    "codex": 8_000,
    "github-copilot-developer": 7_000,  # Copilot CLI: over 30 KB to a file (10 KB cut before)
    "visual studio code": 10_000,  # VS Code chat: a large result cut to a preview and a file
    "visual-studio-code": 10_000,
}
NAME_MAX = 200  # characters of a client name kept
NAMES_MAX = 1024  # tokens whose client name is remembered (then forgotten all at once)


def chosen(value: str | Sequence[str], known: Sequence[str], what: str) -> frozenset[str]:
    """The tools `value` names (comma-separated, or a list; presets expanded); ValueError names
    the unknown one and every known name."""
    items = value.split(",") if isinstance(value, str) else list(value)
    names: set[str] = set()
    for item in (i.strip() for i in items):
        if not item:
            continue
        if item in PRESETS:
            names.update(PRESETS[item])
        elif item in known:
            names.add(item)
        else:
            presets = "; ".join(f"{k} = {','.join(v)}" for k, v in PRESETS.items())
            raise ValueError(
                f"{what}: no tool is named {item!r}; the tools are {', '.join(known)} "
                f"(preset {presets})"
            )
    if not names:
        raise ValueError(f"{what}: names no tool; the tools are {', '.join(known)}")
    return frozenset(names)


def shown(
    known: Sequence[str],
    tools: str | Sequence[str] = (),
    exclude: str | Sequence[str] = (),
    what: tuple[str, str] = ("tools", "exclude_tools"),
) -> frozenset[str]:
    """The tools left of `known` by a `tools` list (empty: all) and an `exclude` list, each
    named in an error as `what` says."""
    left = chosen(tools, known, what[0]) if tools else frozenset(known)
    if exclude:
        left -= chosen(exclude, known, what[1])
    if not left:
        raise ValueError(f"{what[0]} and {what[1]} leave no tool: sift would offer none")
    return left


class Surface:
    """The middleware: a client's tools narrowed by its URL, and its default budget.

    Args:
        known: every tool's name, in the order they are listed.
        tools: the tools the server offers (`shown`).
        budgeted: the tools that take `max_tokens`.
        caps: `[mcp] client_caps`, over `CLIENT_CAPS`.
        client: a key for a request's client from its HTTP headers (its token's hash).
    """

    def __init__(
        self,
        known: Sequence[str],
        tools: frozenset[str],
        budgeted: Collection[str],
        caps: Mapping[str, int],
        client: Callable[[Any], str],
    ) -> None:
        self.known = tuple(known)
        self.tools = tools
        self.budgeted = frozenset(budgeted)
        merged = {k.casefold(): v for k, v in CLIENT_CAPS.items()}
        merged.update({k.casefold(): v for k, v in caps.items()})
        self.caps = {k: v for k, v in merged.items() if v > 0}
        self.client = client
        self.names: dict[str, str] = {}  # a token's hash → the client name it initialized with

    def narrowed(self, query: Mapping[str, str]) -> frozenset[str]:
        """The server's tools as a URL's `tools` / `exclude_tools` narrow them; ValueError for
        a name no tool has, or nothing left."""
        left = self.tools
        if "tools" in query:
            left &= chosen(query["tools"], self.known, "tools")
        if "exclude_tools" in query:
            left -= chosen(query["exclude_tools"], self.known, "exclude_tools")
        if not left:
            raise ValueError("the URL's tools and exclude_tools leave no tool this server offers")
        return left

    async def __call__(self, ctx: ServerRequestContext[Any, Any], call_next: CallNext) -> Answer:
        if ctx.method == "initialize":
            self._remember(ctx)
        elif ctx.method == "tools/list":
            return _listing(await call_next(ctx), self._tools(ctx))
        elif ctx.method == "tools/call" and isinstance(ctx.params, Mapping):
            name = ctx.params.get("name")
            if name in self.known and name not in self._tools(ctx):
                # what the SDK answers for a tool it does not have
                text = TextContent(type="text", text=f"Unknown tool: {name}")
                return CallToolResult(content=[text], is_error=True)
            return await call_next(self._budgeted(ctx, name))
        return await call_next(ctx)

    def cap(self, ctx: ServerRequestContext[Any, Any]) -> int | None:
        """The default `max_tokens` for this request's client, or None."""
        params = ctx.session.client_params
        name = params.client_info.name if params is not None else None
        headers = getattr(ctx.request, "headers", None)
        if name is None and headers is not None:
            name = self.names.get(self.client(headers))
        return self.caps.get(name.casefold()) if name else None

    def _tools(self, ctx: ServerRequestContext[Any, Any]) -> frozenset[str]:
        query = getattr(ctx.request, "query_params", None)
        try:
            return self.narrowed(query) if query else self.tools
        except ValueError:  # refused at the door (`http.py`); never more than the server's
            return frozenset()

    def _budgeted(self, ctx: ServerRequestContext[Any, Any], name: Any) -> Any:
        """`ctx` with the client's default `max_tokens` in a call that gives none."""
        assert isinstance(ctx.params, Mapping)
        arguments = ctx.params.get("arguments") or {}
        if name not in self.budgeted or not isinstance(arguments, Mapping):
            return ctx
        cap = self.cap(ctx)
        if cap is None or arguments.get("max_tokens") is not None:
            return ctx
        if name == "read" and cap:  # a read's own bounds: a cap fit for `fetch` may not be
            cap = min(max(cap, READ_MIN_TOKENS), READ_MAX_TOKENS)
        params = {**ctx.params, "arguments": {**arguments, "max_tokens": cap}}
        return dataclasses.replace(ctx, params=params)

    def _remember(self, ctx: ServerRequestContext[Any, Any]) -> None:
        """The name a client initialized with, for its token's later requests (HTTP)."""
        headers = getattr(ctx.request, "headers", None)
        info = (ctx.params or {}).get("clientInfo")
        name = info.get("name") if isinstance(info, Mapping) else None
        if headers is None or not isinstance(name, str):
            return
        if len(self.names) >= NAMES_MAX:
            self.names.clear()
        self.names[self.client(headers)] = name[:NAME_MAX]


def _listing(answer: Answer, tools: frozenset[str]) -> Answer:
    """A `tools/list` answer (as the wire has it) without the tools this client does not see."""
    if isinstance(answer, ListToolsResult):
        return answer.model_copy(update={"tools": [t for t in answer.tools if t.name in tools]})
    if isinstance(answer, dict) and isinstance(answer.get("tools"), list):
        seen = [t for t in answer["tools"] if isinstance(t, dict) and t.get("name") in tools]
        return {**answer, "tools": seen}
    return answer
