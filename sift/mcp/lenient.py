"""What MCP clients send that sift takes as meant: a page range given as a number (`7`), and
a prompt sift does not have asked for, answered as the client's mistake (invalid params), not
as sift's (an internal error with a traceback in the log)."""

from __future__ import annotations

from typing import Any

from mcp.server.mcpserver import Context, MCPServer
from mcp.shared.exceptions import MCPError
from mcp.types import INVALID_PARAMS, GetPromptResult, InputRequiredResult


def as_range(value: Any) -> Any:
    """`pages` as a number is the page of that number: "7"."""
    if isinstance(value, int) and not isinstance(value, bool):
        return str(value)
    return value


class KnownPrompts(MCPServer):
    """`prompts/get` of a name sift does not have: JSON-RPC invalid params (-32602)."""

    async def get_prompt(
        self,
        name: str,
        arguments: dict[str, Any] | None = None,
        context: Context[Any, Any] | None = None,
    ) -> GetPromptResult | InputRequiredResult:
        if name not in {p.name for p in await self.list_prompts()}:
            raise MCPError(code=INVALID_PARAMS, message=f"unknown prompt: {name}")
        return await super().get_prompt(name, arguments, context)
