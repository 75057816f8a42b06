"""MCP details its clients trip on (issue 37): an unknown prompt is the client's mistake, a
JSON-RPC invalid-params error with no traceback in the log; `pages` sent as a number is taken."""

from __future__ import annotations

import pytest
from mcp import Client
from mcp.shared.exceptions import MCPError
from mcp.types import INVALID_PARAMS

from tests.support.mcp_client import run, stdio_client, text
from tests.support.pdfs import big_pdf


def test_an_unknown_prompt_is_invalid_params_without_a_traceback(sift, tmp_path):
    log = tmp_path / "mcp-stderr.log"
    codes: list[int] = []

    async def scenario(client: Client) -> None:
        with pytest.raises(MCPError) as info:
            await client.get_prompt("no-such-prompt")
        codes.append(info.value.error.code)
        assert "no-such-prompt" in info.value.error.message

    with log.open("w") as errlog:
        run(stdio_client(sift.url, errlog=errlog), scenario)
    assert codes == [INVALID_PARAMS]
    assert "Traceback" not in log.read_text()


def test_pages_as_a_number_is_taken(sift, origin):
    origin.set("/pages.pdf", big_pdf(12), "application/pdf")

    async def scenario(client: Client) -> None:
        r = await client.call_tool("fetch", {"url": origin.url("/pages.pdf"), "pages": 3})
        assert not r.is_error, text(r)
        assert "--- page 3 ---" in text(r) and "--- page 4 ---" not in text(r)

    run(stdio_client(sift.url), scenario)
