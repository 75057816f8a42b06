"""The arguments the MCP tools share, as an agent reads them in each tool's schema."""

from __future__ import annotations

from typing import Annotated

from mcp.types import ToolAnnotations
from pydantic import BeforeValidator, Field

from sift.mcp.lenient import as_range

READ_ONLY = ToolAnnotations(read_only_hint=True, open_world_hint=True)

Url = Annotated[str, Field(description="http(s) URL to fetch")]
Pages = Annotated[
    str | int | None,
    BeforeValidator(as_range),
    Field(description='page or section range of a long document: "41-60", "7", "300-"'),
]
Grep = Annotated[
    str | None,
    Field(
        description="RE2 regex: matching lines with their page numbers (case-insensitive "
        "unless the pattern has upper case)"
    ),
]
Question = Annotated[
    str | None, Field(description="answer this question from the document, citing pages")
]
MaxChars = Annotated[int | None, Field(description="lower the answer's size cap", gt=0)]
MaxTokens = Annotated[int | None, Field(description="cap the answer in tokens (o200k_base)", gt=0)]
StartIndex = Annotated[
    int | None,
    Field(description="where to go on: the start_index a cut answer's [continue: …] names", ge=0),
]
Raw = Annotated[bool, Field(description="the body as text, not cleaned (HTML, JSON, text)")]
Jq = Annotated[str | None, Field(description="jq program applied to a JSON response")]
Render = Annotated[bool, Field(description="render with a browser (when sift has one)")]
JobId = Annotated[str, Field(description="the job id batch_fetch returned")]
WaitSeconds = Annotated[int, Field(description="wait this long at most", ge=0, le=600)]
IfNoneMatch = Annotated[
    str | None,
    Field(
        description="the content_hash of an earlier answer: says `unchanged` if the document "
        "is the same, else answers it with the changes since that version"
    ),
]
