"""MCP details its clients trip on (issue 37): an unknown prompt is the client's mistake, a
JSON-RPC invalid-params error with no traceback in the log; `pages` sent as a number is taken."""

from __future__ import annotations

import pytest
from mcp import Client
from mcp.shared.exceptions import MCPError
from mcp.types import INVALID_PARAMS

from tests.support.mcp_client import run, stdio_client, text
from tests.support.pdfs import big_pdf


@pytest.mark.filterwarnings("ignore::mcp.shared.exceptions.MCPDeprecationWarning")
def test_an_unknown_prompt_is_invalid_params_without_a_traceback(sift, tmp_path):
    """On both eras of the protocol: the initialize handshake (2025-11-25, where it was error
    code 0) and the per-request one (2026-07-28, where it was -32603 "Internal server
    error")."""
    log = tmp_path / "mcp-stderr.log"
    codes: list[int] = []
    versions: list[str] = []

    async def scenario(client: Client) -> None:
        with pytest.raises(MCPError) as info:
            await client.get_prompt("no-such-prompt")
        codes.append(info.value.error.code)
        versions.append(client.protocol_version)
        assert "no-such-prompt" in info.value.error.message

    with log.open("w") as errlog:
        for mode in ("legacy", "auto"):
            run(stdio_client(sift.url, errlog=errlog, mode=mode), scenario)
    assert versions == ["2025-11-25", "2026-07-28"]
    assert codes == [INVALID_PARAMS, INVALID_PARAMS]
    assert "Traceback" not in log.read_text()


def test_pages_as_a_number_is_taken(sift, origin):
    origin.set("/pages.pdf", big_pdf(12), "application/pdf")

    async def scenario(client: Client) -> None:
        r = await client.call_tool("fetch", {"url": origin.url("/pages.pdf"), "pages": 3})
        assert not r.is_error, text(r)
        assert "--- page 3 ---" in text(r) and "--- page 4 ---" not in text(r)

    run(stdio_client(sift.url), scenario)
